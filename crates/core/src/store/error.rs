use crate::Coded;

/// What can go wrong below the domain: the file, the migrations, a query.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("could not create the data folder {path}: {source}")]
    CreateFolder {
        path: String,
        source: std::io::Error,
    },
    #[error("could not open the database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("could not bring the database schema up to date: {0}")]
    Migrate(sqlx::migrate::MigrateError),
    #[error("database query failed: {0}")]
    Query(#[from] sqlx::Error),
    #[error("the database holds a value this version cannot read ({what}: {value:?})")]
    Corrupt { what: &'static str, value: String },
    #[error("the database file {path} is damaged: {detail}")]
    Damaged { path: String, detail: String },
    #[error("could not copy {from} to {to}: {source}")]
    Copy {
        from: String,
        to: String,
        source: std::io::Error,
    },
    #[error("could not rename {from} to {to}: {source}")]
    Rename {
        from: String,
        to: String,
        source: std::io::Error,
    },
}

impl Coded for StoreError {
    fn code(&self) -> &'static str {
        match self {
            Self::CreateFolder { .. } => "store.create_folder",
            Self::Open { .. } => "store.open",
            Self::Migrate(_) => "store.migrate",
            Self::Query(_) => "store.query",
            Self::Corrupt { .. } => "store.corrupt",
            Self::Damaged { .. } => "store.file_corrupt",
            Self::Copy { .. } => "store.copy_failed",
            Self::Rename { .. } => "store.rename_failed",
        }
    }
}

use crate::Coded;

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{value:?} is not a language Leasehold speaks (zh-CN, en)")]
    UnknownLanguage { value: String },
    #[error("{value:?} is not a wizard Leasehold keeps drafts for")]
    UnknownWizard { value: String },
    #[error("the draft is too large to keep ({bytes} bytes; at most {limit})")]
    DraftTooLarge { bytes: usize, limit: usize },
    #[error("the saved setting {key:?} cannot be read: {reason}")]
    Corrupt { key: String, reason: String },
    #[error("settings query failed: {0}")]
    Query(#[from] sqlx::Error),
}

impl Coded for SettingsError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownLanguage { .. } => "settings.unknown_language",
            Self::UnknownWizard { .. } => "settings.unknown_wizard",
            Self::DraftTooLarge { .. } => "settings.draft_too_large",
            Self::Corrupt { .. } => "settings.corrupt",
            Self::Query(_) => "settings.query",
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::UnknownLanguage { .. } | Self::UnknownWizard { .. } | Self::DraftTooLarge { .. }
        )
    }
}

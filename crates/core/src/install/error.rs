use crate::Coded;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("`{0}` is not a recipe; choose one of: {1}")]
    UnknownRecipe(String, String),
    #[error("recipe {recipe} has no option `{option}`; its options are: {known}")]
    UnknownOption {
        recipe: &'static str,
        option: String,
        known: String,
    },
    #[error("`{0}` is not KEY=VALUE")]
    NotKeyValue(String),
    #[error("option {option}={value:?} is not valid: {why}")]
    BadValue {
        option: String,
        value: String,
        why: String,
    },
    #[error("option {0} was given twice")]
    Repeated(String),
    #[error("recipe {recipe} needs {fact}: {hint}")]
    MissingFact {
        recipe: &'static str,
        fact: &'static str,
        hint: &'static str,
    },
    #[error(
        "Docker cannot run inside this instance: it is itself a container ({kind}), and a container \
         may not start the Docker daemon or hand GPUs to containers of its own. Use the instance's \
         own Python/conda environment instead (the vLLM recipe needs no Docker), or rent a \
         virtual machine or bare-metal instance if you need Docker"
    )]
    DockerInContainer { kind: String },
    #[error("no PyTorch CUDA wheel fits this machine: {0}")]
    NoWheel(String),
    #[error(transparent)]
    Job(#[from] crate::job::JobError),
    #[error("could not read the instance's facts: {0}")]
    Facts(String),
    #[error("the PyTorch wheel could not be chosen: {0}")]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error(transparent)]
    Connect(#[from] crate::connect::ConnectError),
    #[error("the server check failed at {what}: {message}")]
    ServerCheck { what: String, message: String },
    #[error("recipe {0} starts no server to check")]
    NoServer(&'static str),
    #[error("could not read the last Verify run: {0}")]
    History(String),
}

impl Coded for InstallError {
    fn code(&self) -> &'static str {
        match self {
            Self::UnknownRecipe(..) => "install.unknown_recipe",
            Self::UnknownOption { .. } => "install.unknown_option",
            Self::NotKeyValue(_) | Self::BadValue { .. } | Self::Repeated(_) => "install.bad_value",
            Self::MissingFact { .. } => "install.missing_fact",
            Self::DockerInContainer { .. } => "docker.impossible_in_container",
            Self::NoWheel(_) => "install.no_wheel",
            Self::Facts(_) => "install.facts_failed",
            Self::ServerCheck { .. } => "install.server_check_failed",
            Self::NoServer(_) => "install.no_server",
            Self::History(_) => "install.history_failed",
            Self::Job(err) => err.code(),
            Self::Catalog(err) => err.code(),
            Self::Connect(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::Job(err) => return err.is_bad_input(),
            Self::Connect(err) => return err.is_bad_input(),
            _ => {}
        }
        !matches!(
            self,
            Self::DockerInContainer { .. }
                | Self::NoWheel(_)
                | Self::Facts(_)
                | Self::ServerCheck { .. }
                | Self::History(_)
        )
    }
}

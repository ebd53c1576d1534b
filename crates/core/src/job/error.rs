use crate::store::StoreError;
use crate::target::TargetError;
use crate::Coded;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("`{0}` is not a job id (letters, digits and dashes, 1 to 64 characters)")]
    BadId(String),
    #[error("no job {0} is recorded here (see `leasehold job list`)")]
    UnknownJob(String),
    #[error("no instance or target `{0}` is recorded here (see `leasehold instance add`, `leasehold job list`)")]
    UnknownInstance(String),
    #[error("a job {0} already exists on the instance; pick another name")]
    AlreadyExists(String),
    #[error(
        "`setsid` or `nohup` is missing on the instance, so a job cannot outlive the connection"
    )]
    NoSetsid,
    #[error("the job did not start on the instance: {0}")]
    NotStarted(String),
    #[error("the instance answered something that is not a job status: {0}")]
    Unreadable(String),
    #[error("the job could not be reached: {0}")]
    Target(#[from] TargetError),
    #[error(
        "the link stayed down for {seconds} s while attached; the job goes on, attach again later"
    )]
    GaveUp { seconds: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the job's record is unreadable ({0})")]
    Corrupt(String),
}

impl Coded for JobError {
    fn code(&self) -> &'static str {
        match self {
            Self::BadId(_) => "job.bad_id",
            Self::UnknownJob(_) => "job.unknown",
            Self::UnknownInstance(_) => "job.unknown_instance",
            Self::AlreadyExists(_) => "job.already_exists",
            Self::NoSetsid => "job.no_setsid",
            Self::NotStarted(_) => "job.not_started",
            Self::Unreadable(_) => "job.unreadable",
            Self::Target(err) => err.code(),
            Self::GaveUp { .. } => "job.link_down",
            Self::Store(err) => err.code(),
            Self::Corrupt(_) => "job.corrupt",
        }
    }

    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Self::BadId(_)
                | Self::UnknownJob(_)
                | Self::UnknownInstance(_)
                | Self::AlreadyExists(_)
        )
    }
}

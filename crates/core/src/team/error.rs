use crate::billing::BillingError;
use crate::store::StoreError;
use crate::Coded;

/// What team mode refuses or fails at. No variant ever carries the password: connection
/// failures name the user, host and database only.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("{reason}; give the server as postgres://USER@HOST:PORT/DATABASE")]
    InvalidUrl { reason: String },
    #[error("the {field} name {reason}")]
    InvalidName { field: &'static str, reason: String },
    #[error("the environment variable {var} is not set; export the team database's password in it, or leave --password-env out")]
    PasswordEnvMissing { var: String },
    #[error("this database is not linked to a team; run `leasehold team connect` first")]
    NotConnected,
    #[error("cannot reach the team database at {host}:{port} ({detail}); check the address and your network, then try again — nothing was changed")]
    Unreachable {
        host: String,
        port: u16,
        detail: String,
    },
    #[error("the team database refused the password for user {user}; update it with `leasehold team connect … --password-env VAR` (or PGPASSWORD / ~/.pgpass) — nothing was changed")]
    WrongPassword { user: String },
    #[error("the team database refused user {user}: no password is kept in the keychain, and PGPASSWORD / ~/.pgpass gave none it accepts; connect again with --password-env VAR — nothing was changed")]
    NoPassword { user: String },
    #[error("the team database was set up by a newer Leasehold (schema {server}, this version knows up to {known}); update Leasehold on this computer — nothing was changed")]
    NewerSchema { server: i64, known: i64 },
    #[error("the team database failed: {detail} — nothing was changed here")]
    Server { detail: String },
    #[error("this conflict is already settled (or the choice is not one of its two events); sync and look again")]
    ConflictGone,
    #[error("could not keep the team database password in the system keychain: {message}")]
    Keychain { message: String },
    #[error("alerts can wait between {min} and {max} idle minutes")]
    AlertMinutes { min: u32, max: u32 },
    #[error("{name} is not a member of this team (members join with `leasehold team connect`)")]
    UnknownMember { name: String },
    #[error("the team database at {host} showed a certificate this computer does not trust ({detail}); if the lab runs its own CA, connect again with --ca-file CA.pem — nothing was sent or changed")]
    UntrustedCertificate { host: String, detail: String },
    #[error("cannot use the CA file {path} for the team database: {detail}")]
    CaFile { path: String, detail: String },
    #[error("the team database did not finish within {seconds} s; the sync stopped where it was, nothing is lost, and the next one continues from there")]
    TimedOut { seconds: u64 },
    #[error(transparent)]
    Billing(#[from] BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Coded for TeamError {
    fn code(&self) -> &'static str {
        match self {
            Self::InvalidUrl { .. } => "team.invalid_url",
            Self::InvalidName { .. } => "team.invalid_name",
            Self::PasswordEnvMissing { .. } => "team.password_env_missing",
            Self::NotConnected => "team.not_connected",
            Self::Unreachable { .. } => "team.unreachable",
            Self::WrongPassword { .. } => "team.wrong_password",
            Self::NoPassword { .. } => "team.no_password",
            Self::NewerSchema { .. } => "team.newer_schema",
            Self::Server { .. } => "team.server",
            Self::Keychain { .. } => "team.keychain",
            Self::ConflictGone => "team.conflict_gone",
            Self::AlertMinutes { .. } => "team.alert_minutes",
            Self::UnknownMember { .. } => "team.unknown_member",
            Self::TimedOut { .. } => "team.timed_out",
            Self::CaFile { .. } => "team.ca_file",
            Self::UntrustedCertificate { .. } => "team.untrusted_certificate",
            Self::Billing(err) => err.code(),
            Self::Store(err) => err.code(),
        }
    }

    fn is_bad_input(&self) -> bool {
        match self {
            Self::InvalidUrl { .. }
            | Self::InvalidName { .. }
            | Self::PasswordEnvMissing { .. }
            | Self::ConflictGone
            | Self::AlertMinutes { .. }
            | Self::CaFile { .. }
            | Self::UnknownMember { .. } => true,
            Self::Billing(err) => err.is_bad_input(),
            _ => false,
        }
    }

    fn field(&self) -> Option<&'static str> {
        match self {
            Self::InvalidUrl { .. }
            | Self::Unreachable { .. }
            | Self::NewerSchema { .. }
            | Self::UntrustedCertificate { .. } => Some("url"),
            Self::InvalidName { field, .. } => Some(field),
            Self::AlertMinutes { .. } => Some("after_minutes"),
            Self::UnknownMember { .. } => Some("recipients"),
            Self::WrongPassword { .. } | Self::NoPassword { .. } => Some("password"),
            _ => None,
        }
    }

    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Unreachable { host, port, .. } => {
                vec![("host", host.clone()), ("port", port.to_string())]
            }
            Self::WrongPassword { user } | Self::NoPassword { user } => {
                vec![("user", user.clone())]
            }
            Self::NewerSchema { server, known } => {
                vec![("server", server.to_string()), ("known", known.to_string())]
            }
            Self::PasswordEnvMissing { var } => vec![("var", var.clone())],
            Self::AlertMinutes { min, max } => {
                vec![("min", min.to_string()), ("max", max.to_string())]
            }
            Self::UnknownMember { name } => vec![("name", name.clone())],
            Self::TimedOut { seconds } => vec![("seconds", seconds.to_string())],
            Self::CaFile { path, .. } => vec![("path", path.clone())],
            Self::UntrustedCertificate { host, .. } => vec![("host", host.clone())],
            Self::InvalidName { field, reason } => {
                vec![("field", (*field).to_owned()), ("reason", reason.clone())]
            }
            Self::Billing(err) => err.params(),
            _ => Vec::new(),
        }
    }
}

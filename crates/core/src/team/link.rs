//! Where the team's database is and how to log in to it: the URL (kept without its password),
//! the member and team names, and the password's sources in the order a PostgreSQL user expects —
//! given now, then the OS keychain, then libpq's own `PGPASSWORD` and `~/.pgpass` (sqlx reads
//! both, `.pgpass` with its escapes and permission check, exactly as libpq does).

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;
use sqlx::ConnectOptions;

use super::TeamError;
use crate::ssh::{forget_secret, store_secret, stored_secret, Secret};

/// The team database's address, parsed from `postgres://USER@HOST:PORT/DATABASE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddress {
    /// The URL as stored and shown: never with a password.
    pub url: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
}

/// How long connecting may take before the server counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

impl ServerAddress {
    /// Parse a URL; a password written into it is returned apart, never kept in the address.
    pub fn parse(text: &str) -> Result<(Self, Option<Secret>), TeamError> {
        let invalid = |reason: &str| TeamError::InvalidUrl {
            reason: reason.to_owned(),
        };
        let mut url = url::Url::parse(text.trim()).map_err(|err| TeamError::InvalidUrl {
            // The url crate's messages never repeat the input, so no password leaks here.
            reason: format!("not a URL ({err})"),
        })?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            return Err(invalid("the URL must start with postgres://"));
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| invalid("the URL names no host"))?
            .to_owned();
        let user = percent_decoded(url.username());
        if user.is_empty() {
            return Err(invalid("the URL names no user"));
        }
        let database = percent_decoded(url.path().trim_start_matches('/'));
        if database.is_empty() || database.contains('/') {
            return Err(invalid("the URL names no database"));
        }
        let password = url
            .password()
            .map(|p| Secret::new(percent_decoded(p)))
            .filter(|p| !p.expose().is_empty());
        url.set_password(None)
            .map_err(|()| invalid("the URL cannot hold a user"))?;
        Ok((
            Self {
                url: url.to_string(),
                port: url.port().unwrap_or(5432),
                host,
                user,
                database,
            },
            password,
        ))
    }

    /// The keychain entry for this login: one per user, host, port and database.
    pub fn keychain_account(&self) -> String {
        format!(
            "team-password:{}@{}:{}/{}",
            self.user, self.host, self.port, self.database
        )
    }

    /// Connection options: TLS when the server offers it (`sslmode=prefer`, or what the URL
    /// asks), `password` when given, else `PGPASSWORD` / `~/.pgpass` as libpq would.
    pub fn options(&self, password: Option<&Secret>) -> Result<PgConnectOptions, TeamError> {
        let mut options =
            PgConnectOptions::from_str(&self.url).map_err(|err| TeamError::InvalidUrl {
                reason: err.to_string(),
            })?;
        if let Some(password) = password {
            options = options.password(password.expose());
        }
        Ok(options
            .application_name("leasehold")
            // Statements carry no secrets, but the log has no use for every sync's SQL either.
            .disable_statement_logging())
    }
}

fn percent_decoded(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// A member or team name: what others see in the team views.
pub fn check_name(field: &'static str, text: &str) -> Result<String, TeamError> {
    let name = text.trim();
    let invalid = |reason: &str| TeamError::InvalidName {
        field,
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(invalid("is empty"));
    }
    if name.chars().count() > 64 {
        return Err(invalid("is longer than 64 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid("contains control characters"));
    }
    Ok(name.to_owned())
}

/// The password kept for this login, if the keychain has one.
pub fn kept_password(address: &ServerAddress) -> Option<Secret> {
    stored_secret(&address.keychain_account())
}

/// Keep the password in the keychain. Where there is no keychain (a server, CI), the error says
/// so; the caller decides whether PGPASSWORD / ~/.pgpass will do instead.
pub fn keep_password(address: &ServerAddress, password: &Secret) -> Result<(), TeamError> {
    store_secret(&address.keychain_account(), password).map_err(|err| TeamError::Keychain {
        message: err.to_string(),
    })
}

pub fn forget_password(address: &ServerAddress) -> Result<(), TeamError> {
    forget_secret(&address.keychain_account()).map_err(|err| TeamError::Keychain {
        message: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_taken_out_of_what_is_kept() {
        let (address, password) =
            ServerAddress::parse("postgres://alice:s%40cret@db.lab.example:6543/ledger").unwrap();
        assert_eq!(address.url, "postgres://alice@db.lab.example:6543/ledger");
        assert_eq!(
            password.map(|p| p.expose().to_owned()),
            Some("s@cret".into())
        );
        assert_eq!(address.port, 6543);
        assert_eq!(address.database, "ledger");
        assert_eq!(
            address.keychain_account(),
            "team-password:alice@db.lab.example:6543/ledger"
        );
    }

    #[test]
    fn urls_without_user_host_or_database_are_refused() {
        for url in [
            "mysql://a@h/db",
            "postgres://h:5432/db",
            "postgres://a@h:5432/",
            "not a url",
        ] {
            let err = ServerAddress::parse(url).unwrap_err();
            assert!(
                matches!(err, TeamError::InvalidUrl { .. }),
                "{url} must be refused"
            );
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(check_name("member", "  alice ").unwrap(), "alice");
        assert!(check_name("member", " ").is_err());
        assert!(check_name("team", &"x".repeat(65)).is_err());
        assert!(check_name("team", "a\nb").is_err());
    }
}

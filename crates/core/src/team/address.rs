//! Where the team's database is and how to log in to it: the URL (kept without its password),
//! the member and team names, and the password's sources in the order a PostgreSQL user expects —
//! given now, then the OS keychain, then libpq's own `PGPASSWORD` and `~/.pgpass` (sqlx reads
//! both, `.pgpass` with its escapes and permission check, exactly as libpq does).
//!
//! TLS is verified by default (`sslmode=verify-full` against the system's trusted CAs, plus a
//! lab's own CA given as `sslrootcert` / `--ca-file`). A weaker mode is used only when the URL
//! asks for it, and then [`ServerAddress::tls_warning`] says so. No mode sends the password
//! without TLS, except `disable` to a server on this computer: `prefer` and `allow` insist on TLS
//! as `require` does, since a network attacker can otherwise strip it and read the password.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgSslMode};
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
    pub tls: Tls,
    /// A CA to trust besides the system's (`sslrootcert` in the URL, `--ca-file`).
    pub ca_file: Option<String>,
}

/// How the connection to the team database is protected (the URL's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    /// The default: TLS, the certificate checked against the trusted CAs and the host name.
    VerifyFull,
    /// TLS, the certificate checked against the trusted CAs but not the host name.
    VerifyCa,
    /// TLS whose certificate is not checked (`require`, `prefer`, `allow`).
    Unverified,
    /// No TLS (`disable`): only to a server on this computer.
    Off,
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// How long connecting may take before the server counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest any one team statement may run on the server (PostgreSQL's `statement_timeout`,
/// set for the whole session at login): a page of the largest pull takes well under a second.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

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
        let mut password = url
            .password()
            .map(|p| Secret::new(percent_decoded(p)))
            .filter(|p| !p.expose().is_empty());
        url.set_password(None)
            .map_err(|()| invalid("the URL cannot hold a user"))?;
        // A password in the query is taken out like one before the host, so it is neither kept
        // nor shown; the other parameters stay as given.
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let kept: Vec<&(String, String)> = pairs.iter().filter(|(k, _)| k != "password").collect();
        if kept.len() < pairs.len() {
            if password.is_none() {
                password = pairs
                    .iter()
                    .find(|(k, v)| k == "password" && !v.is_empty())
                    .map(|(_, v)| Secret::new(v.clone()));
            }
            if kept.is_empty() {
                url.set_query(None);
            } else {
                url.query_pairs_mut()
                    .clear()
                    .extend_pairs(kept.iter().copied());
            }
        }
        let parameter = |name: &str| {
            kept.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let tls =
            match parameter("sslmode").as_deref() {
                None | Some("verify-full") => Tls::VerifyFull,
                Some("verify-ca") => Tls::VerifyCa,
                Some("require" | "prefer" | "allow") => Tls::Unverified,
                Some("disable") if is_loopback(&host) => Tls::Off,
                Some("disable") => return Err(invalid(
                    "sslmode=disable would send the password unencrypted; it is allowed only for \
                     a server on this computer (localhost)",
                )),
                Some(_) => return Err(invalid(
                    "sslmode must be verify-full (the default), verify-ca, require, prefer, allow \
                     or disable",
                )),
            };
        let ca_file = ["sslrootcert", "ssl-root-cert", "ssl-ca"]
            .iter()
            .find_map(|name| parameter(name));
        Ok((
            Self {
                url: url.to_string(),
                port: url.port().unwrap_or(5432),
                host,
                user,
                database,
                tls,
                ca_file,
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

    /// What to tell the user about this address's TLS: `None` for a verified connection, else
    /// the code of the warning (`team.tls_unverified`, `team.tls_off`), shown by the CLI and the
    /// Settings → Team page.
    pub fn tls_warning(&self) -> Option<&'static str> {
        match self.tls {
            Tls::VerifyFull | Tls::VerifyCa => None,
            Tls::Unverified => Some("team.tls_unverified"),
            Tls::Off => Some("team.tls_off"),
        }
    }

    /// Connection options: TLS as [`Tls`] says (never falling back to none), `password` when
    /// given, else `PGPASSWORD` / `~/.pgpass` as libpq would.
    pub fn options(&self, password: Option<&Secret>) -> Result<PgConnectOptions, TeamError> {
        let mut options =
            PgConnectOptions::from_str(&self.url).map_err(|err| TeamError::InvalidUrl {
                reason: err.to_string(),
            })?;
        options = match self.tls {
            Tls::VerifyFull => options.ssl_mode(PgSslMode::VerifyFull),
            Tls::VerifyCa => options.ssl_mode(PgSslMode::VerifyCa),
            Tls::Unverified => options.ssl_mode(PgSslMode::Require),
            Tls::Off => options.ssl_mode(PgSslMode::Disable),
        };
        if matches!(self.tls, Tls::VerifyFull | Tls::VerifyCa) {
            options = options.ssl_root_cert_from_pem(trusted_roots(self.ca_file.as_deref())?);
        }
        if let Some(password) = password {
            options = options.password(password.expose());
        }
        Ok(options
            .options([(
                "statement_timeout",
                format!("{}s", STATEMENT_TIMEOUT.as_secs()),
            )])
            .application_name("leasehold")
            // Statements carry no secrets, but the log has no use for every sync's SQL either.
            .disable_statement_logging())
    }
}

/// The CAs a verified connection trusts besides sqlx's built-in Mozilla set, as PEM: the
/// system's (read once per process) and the lab's own `ca_file`.
fn trusted_roots(ca_file: Option<&str>) -> Result<Vec<u8>, TeamError> {
    static SYSTEM: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let system = SYSTEM.get_or_init(|| {
        use base64::Engine;
        let found = rustls_native_certs::load_native_certs();
        let mut pem = String::new();
        for cert in found.certs {
            let body = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
            pem.push_str("-----BEGIN CERTIFICATE-----\n");
            for line in body.as_bytes().chunks(64) {
                pem.push_str(&String::from_utf8_lossy(line));
                pem.push('\n');
            }
            pem.push_str("-----END CERTIFICATE-----\n");
        }
        pem.into_bytes()
    });
    let mut roots = system.clone();
    if let Some(path) = ca_file {
        let lab = std::fs::read(path).map_err(|err| TeamError::CaFile {
            path: path.to_owned(),
            detail: err.to_string(),
        })?;
        if !String::from_utf8_lossy(&lab).contains("-----BEGIN CERTIFICATE-----") {
            return Err(TeamError::CaFile {
                path: path.to_owned(),
                detail: "it holds no PEM certificate".into(),
            });
        }
        roots.push(b'\n');
        roots.extend_from_slice(&lab);
    }
    Ok(roots)
}

/// `url` with `sslrootcert` set to `ca_file` (made absolute), for `team connect --ca-file`.
pub fn with_ca_file(url: &str, ca_file: &std::path::Path) -> Result<String, TeamError> {
    let path = std::path::absolute(ca_file).map_err(|err| TeamError::CaFile {
        path: ca_file.display().to_string(),
        detail: err.to_string(),
    })?;
    let mut parsed = url::Url::parse(url.trim()).map_err(|err| TeamError::InvalidUrl {
        reason: format!("not a URL ({err})"),
    })?;
    let others: Vec<(String, String)> = parsed
        .query_pairs()
        .into_owned()
        .filter(|(k, _)| !matches!(k.as_str(), "sslrootcert" | "ssl-root-cert" | "ssl-ca"))
        .collect();
    parsed
        .query_pairs_mut()
        .clear()
        .extend_pairs(others)
        .append_pair("sslrootcert", &path.display().to_string());
    Ok(parsed.to_string())
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
    fn a_password_in_the_query_is_taken_out_and_the_other_parameters_stay() {
        let (address, password) = ServerAddress::parse(
            "postgres://alice@db.lab.example/ledger?password=s3cret&sslmode=verify-ca",
        )
        .unwrap();
        assert_eq!(
            address.url,
            "postgres://alice@db.lab.example/ledger?sslmode=verify-ca"
        );
        assert_eq!(
            password.map(|p| p.expose().to_owned()),
            Some("s3cret".into())
        );
        assert_eq!(address.tls, Tls::VerifyCa);
        let (address, _) =
            ServerAddress::parse("postgres://alice@db.lab.example/ledger?password=x").unwrap();
        assert_eq!(address.url, "postgres://alice@db.lab.example/ledger");
    }

    #[test]
    fn tls_is_verified_unless_asked_and_never_off_beyond_this_computer() {
        let tls = |url: &str| ServerAddress::parse(url).map(|(a, _)| (a.tls, a.tls_warning()));
        assert_eq!(
            tls("postgres://a@db.example/l").unwrap(),
            (Tls::VerifyFull, None)
        );
        for weak in ["require", "prefer", "allow"] {
            assert_eq!(
                tls(&format!("postgres://a@db.example/l?sslmode={weak}")).unwrap(),
                (Tls::Unverified, Some("team.tls_unverified")),
                "{weak} still insists on TLS, with a warning"
            );
        }
        assert!(tls("postgres://a@db.example/l?sslmode=disable").is_err());
        assert!(tls("postgres://a@db.example/l?sslmode=sometimes").is_err());
        for local in ["127.0.0.1", "localhost", "[::1]"] {
            assert_eq!(
                tls(&format!("postgres://a@{local}:5432/l?sslmode=disable")).unwrap(),
                (Tls::Off, Some("team.tls_off"))
            );
        }
    }

    #[test]
    fn every_team_session_has_a_statement_timeout() {
        let (address, _) =
            ServerAddress::parse("postgres://a@127.0.0.1/l?sslmode=disable").unwrap();
        let options = address.options(None).unwrap();
        assert!(matches!(options.get_ssl_mode(), PgSslMode::Disable));
        assert!(
            options
                .get_options()
                .is_some_and(|o| o.contains("statement_timeout=60s")),
            "{:?}",
            options.get_options()
        );
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(check_name("member", "  alice ").unwrap(), "alice");
        assert!(check_name("member", " ").is_err());
        assert!(check_name("team", &"x".repeat(65)).is_err());
        assert!(check_name("team", "a\nb").is_err());
    }
}

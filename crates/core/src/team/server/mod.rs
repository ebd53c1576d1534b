//! The team's PostgreSQL database, and every statement Leasehold sends it. Why here: the server
//! is shared and written by every member's laptop, so what is asked of it (and in which column
//! order) is read in one place; the rest of `team` calls these typed functions and never holds the
//! connection ([`Server`]'s is private to this module).
//!
//! This file: logging in, bringing the schema up to date (embedded, forward-only migrations from
//! `migrations_pg/`, run on connect), refusing a schema newer than this build knows, and what a
//! sqlx failure means to the user (`from_sqlx`). One file per table or concern:
//! [`members`] (teams and members, joining), [`budgets`], [`alerts`] (alert settings, idle
//! reports), [`verify`] (Verify summaries), [`records`] (shared records), [`withdrawals`]
//! (conflict resolutions), [`events`] (the push's one-statement path and statistics),
//! [`copied_events`] (the push's `COPY` path and its row encoding) and [`pages`] (a pull's page).
//! Values that come back are returned as the server holds them; `team` checks them like input.

pub mod alerts;
pub mod budgets;
pub mod copied_events;
pub mod events;
pub mod members;
pub mod pages;
pub mod records;
pub mod verify;
pub mod withdrawals;

use sqlx::migrate::Migrator;
use sqlx::{Connection, PgConnection};

use super::address::{ServerAddress, CONNECT_TIMEOUT, STATEMENT_TIMEOUT};
use super::TeamError;
use crate::ssh::Secret;

static MIGRATOR: Migrator = sqlx::migrate!("./migrations_pg");

/// The newest server schema this build knows.
pub fn known_schema() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// One open connection to the team database, for one sync or one question.
pub struct Server {
    conn: PgConnection,
    address: ServerAddress,
    had_password: bool,
}

impl Server {
    /// Log in and make sure the schema is one this build can use: migrate an older one, refuse a
    /// newer one (before anything is written on either side).
    #[tracing::instrument(skip_all, err, fields(host = %address.host, port = address.port))]
    pub async fn open(
        address: &ServerAddress,
        password: Option<&Secret>,
    ) -> Result<Self, TeamError> {
        let options = address.options(password)?;
        let had_password = password.is_some();
        let connecting = PgConnection::connect_with(&options);
        let conn = match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(err)) => return Err(from_sqlx(&err, address, had_password)),
            Err(_) => {
                return Err(TeamError::Unreachable {
                    host: address.host.clone(),
                    port: address.port,
                    detail: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
                })
            }
        };
        let mut server = Self {
            conn,
            address: address.clone(),
            had_password,
        };
        server.prepare_schema().await?;
        Ok(server)
    }

    fn failed(&self, err: &sqlx::Error) -> TeamError {
        from_sqlx(err, &self.address, self.had_password)
    }

    /// The migrations the server has run (none on an empty database).
    async fn applied_schema(&mut self) -> Result<Vec<i64>, TeamError> {
        let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
            .fetch_one(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))?;
        if !exists {
            return Ok(Vec::new());
        }
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))
    }

    async fn prepare_schema(&mut self) -> Result<(), TeamError> {
        let known = known_schema();
        let applied = self.applied_schema().await?;
        if let Some(server) = applied.iter().copied().filter(|v| *v > known).max() {
            return Err(TeamError::NewerSchema { server, known });
        }
        // Every migration of this build already ran (they may have been merged out of number
        // order, so the whole set is compared, not the newest).
        if MIGRATOR.iter().all(|m| applied.contains(&m.version)) {
            return Ok(());
        }
        // Missing ones run now (sqlx holds an advisory lock, so two laptops connecting at once do
        // not both run a migration).
        MIGRATOR
            .run_direct(&mut self.conn)
            .await
            .map_err(|err| TeamError::Server {
                detail: format!("could not bring the team schema up to date: {err}"),
            })
    }

    /// Close politely (a dropped connection is fine too).
    pub async fn close(self) {
        let _ = self.conn.close().await;
    }
}

/// A sqlx failure on the team database, as the user should read it. Connection-level errors
/// name the host; the text of a server error never holds the password (PostgreSQL does not echo
/// it, and the options are never formatted).
/// `had_password`: a password was given or kept in the keychain (else only PGPASSWORD or
/// ~/.pgpass could have supplied one).
fn from_sqlx(err: &sqlx::Error, server: &ServerAddress, had_password: bool) -> TeamError {
    let (host, port, user) = (server.host.as_str(), server.port, server.user.as_str());
    // rustls reports a certificate it cannot verify through the socket's I/O error.
    let text = err.to_string();
    if matches!(err, sqlx::Error::Io(_) | sqlx::Error::Tls(_)) && text.contains("certificate") {
        return TeamError::UntrustedCertificate {
            host: host.to_owned(),
            detail: text,
        };
    }
    match err {
        sqlx::Error::Io(io) => TeamError::Unreachable {
            host: host.to_owned(),
            port,
            detail: io.to_string(),
        },
        sqlx::Error::Tls(tls) => TeamError::Unreachable {
            host: host.to_owned(),
            port,
            detail: format!("TLS: {tls}"),
        },
        sqlx::Error::PoolTimedOut => TeamError::Unreachable {
            host: host.to_owned(),
            port,
            detail: "timed out".into(),
        },
        // `statement_timeout` (`address::STATEMENT_TIMEOUT`) cancelled the statement.
        sqlx::Error::Database(db) if db.code().as_deref() == Some("57014") => TeamError::TimedOut {
            seconds: STATEMENT_TIMEOUT.as_secs(),
        },
        sqlx::Error::Database(db) if db.code().as_deref() == Some("28P01") => {
            if had_password {
                TeamError::WrongPassword {
                    user: user.to_owned(),
                }
            } else {
                TeamError::NoPassword {
                    user: user.to_owned(),
                }
            }
        }
        _ => TeamError::Server {
            detail: err.to_string(),
        },
    }
}

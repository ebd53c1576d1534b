//! The team's PostgreSQL database: logging in, bringing its schema up to date (embedded,
//! forward-only migrations from `migrations_pg/`, run on connect), refusing a schema newer than
//! this build knows, and joining a team as a member.

use sqlx::migrate::Migrator;
use sqlx::{Connection, PgConnection};

use super::error::from_sqlx;
use super::link::{ServerAddress, CONNECT_TIMEOUT};
use super::TeamError;
use crate::ssh::Secret;

static MIGRATOR: Migrator = sqlx::migrate!("./migrations_pg");

/// The newest server schema this build knows.
pub fn known_schema() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// One open connection to the team database, for one sync or one question.
pub struct Server {
    pub(crate) conn: PgConnection,
    pub(crate) address: ServerAddress,
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

    pub(crate) fn failed(&self, err: &sqlx::Error) -> TeamError {
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

    /// Join (creating it when new) `team` as `member`; the team's id.
    pub async fn join(&mut self, team: &str, member: &str) -> Result<i64, TeamError> {
        let team_id: i64 = sqlx::query_scalar(
            "INSERT INTO teams (name) VALUES ($1)
             ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
        )
        .bind(team)
        .fetch_one(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))?;
        sqlx::query(
            "INSERT INTO members (team_id, name) VALUES ($1, $2)
             ON CONFLICT (team_id, name) DO NOTHING",
        )
        .bind(team_id)
        .bind(member)
        .execute(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))?;
        Ok(team_id)
    }

    /// Close politely (a dropped connection is fine too).
    pub async fn close(self) {
        let _ = self.conn.close().await;
    }
}

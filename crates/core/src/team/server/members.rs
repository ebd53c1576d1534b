//! `teams` and `members`: joining a team, and the member list the Team page and the alert
//! settings read.

use chrono::{DateTime, Utc};

use super::Server;
use crate::team::TeamError;

impl Server {
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

    /// The team's member names, sorted.
    pub async fn member_names(&mut self, team_id: i64) -> Result<Vec<String>, TeamError> {
        sqlx::query_scalar("SELECT name FROM members WHERE team_id = $1 ORDER BY name")
            .bind(team_id)
            .fetch_all(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))
    }

    /// The team's members, sorted by name, with when each last synced.
    pub async fn members(
        &mut self,
        team_id: i64,
    ) -> Result<Vec<(String, Option<DateTime<Utc>>)>, TeamError> {
        sqlx::query_as("SELECT name, last_sync_at FROM members WHERE team_id = $1 ORDER BY name")
            .bind(team_id)
            .fetch_all(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))
    }
}

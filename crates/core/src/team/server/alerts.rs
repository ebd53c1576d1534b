//! `team_alert_settings` and `idle_reports`: who is told about an instance left running and
//! after how long, and each laptop's idle measurements (PostgreSQL migration 0190).

use chrono::{DateTime, Utc};

use super::Server;
use crate::store::team::alerts::IdleRow;
use crate::team::TeamError;

/// `(instance_uid, idle_since, idle_minutes, measured_at, reported_by)` as the server keeps it.
pub type ServerIdleRow = (String, Option<DateTime<Utc>>, i32, DateTime<Utc>, String);

const REPORT: &str = "
INSERT INTO idle_reports AS r (team_id, instance_uid, idle_since, idle_minutes, measured_at,
                               reported_by)
SELECT $1, u.uid::uuid, u.since, u.minutes, u.measured, $2
FROM unnest($3::text[], $4::timestamptz[], $5::int4[], $6::timestamptz[])
     AS u(uid, since, minutes, measured)
ON CONFLICT (team_id, instance_uid) DO UPDATE SET
    idle_since = excluded.idle_since, idle_minutes = excluded.idle_minutes,
    measured_at = excluded.measured_at, reported_by = excluded.reported_by
WHERE excluded.measured_at >= r.measured_at";

impl Server {
    /// Set the team's alert settings, as `member`.
    pub async fn set_alert_settings(
        &mut self,
        team_id: i64,
        recipients: &[String],
        after_minutes: u32,
        member: &str,
    ) -> Result<(), TeamError> {
        sqlx::query(
            "INSERT INTO team_alert_settings (team_id, recipients, after_minutes, set_by)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id) DO UPDATE SET recipients = excluded.recipients,
             after_minutes = excluded.after_minutes, set_by = excluded.set_by, set_at = now()",
        )
        .bind(team_id)
        .bind(recipients)
        .bind(i32::try_from(after_minutes).unwrap_or(i32::MAX))
        .bind(member)
        .execute(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    /// `(recipients, after_minutes, set_by)`, if the team ever set them (unchecked).
    pub async fn alert_settings(
        &mut self,
        team_id: i64,
    ) -> Result<Option<(Vec<String>, i32, String)>, TeamError> {
        sqlx::query_as(
            "SELECT recipients, after_minutes, set_by FROM team_alert_settings WHERE team_id = $1",
        )
        .bind(team_id)
        .fetch_optional(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))
    }

    /// Report `rows` (this laptop's measurements) as `member`; a report older than the one the
    /// server holds for an instance is ignored.
    pub async fn report_idle(
        &mut self,
        team_id: i64,
        member: &str,
        rows: &[IdleRow],
    ) -> Result<(), TeamError> {
        sqlx::query(REPORT)
            .bind(team_id)
            .bind(member)
            .bind(
                rows.iter()
                    .map(|r| r.instance_uid.clone())
                    .collect::<Vec<_>>(),
            )
            .bind(rows.iter().map(|r| r.idle_since).collect::<Vec<_>>())
            .bind(
                rows.iter()
                    .map(|r| i32::try_from(r.idle_minutes).unwrap_or(i32::MAX))
                    .collect::<Vec<_>>(),
            )
            .bind(rows.iter().map(|r| r.measured_at).collect::<Vec<_>>())
            .execute(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    /// Every member's idle reports, as the server keeps them (unchecked).
    pub async fn idle_reports(&mut self, team_id: i64) -> Result<Vec<ServerIdleRow>, TeamError> {
        sqlx::query_as(
            "SELECT instance_uid::text, idle_since, idle_minutes, measured_at, reported_by
             FROM idle_reports WHERE team_id = $1",
        )
        .bind(team_id)
        .fetch_all(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))
    }
}

//! `verify_summaries`: each instance's last Verify as a member shared it (PostgreSQL migration
//! 0190).

use chrono::{DateTime, Utc};

use super::Server;
use crate::team::TeamError;

/// `(instance_uid, collected_at, errors, warnings, finding_keys as JSON text)`: a summary sent.
pub type SummaryRow = (String, DateTime<Utc>, i32, i32, String);

/// `(instance_uid, collected_at, errors, warnings, finding_keys as JSON text, shared_by)` as the
/// server keeps it.
pub type ServerSummaryRow = (String, DateTime<Utc>, i32, i32, String, String);

const SEND: &str = "
INSERT INTO verify_summaries AS v (team_id, instance_uid, collected_at, errors, warnings,
                                   finding_keys, shared_by)
SELECT $1, u.uid::uuid, u.at, u.errors, u.warnings, u.keys::jsonb, $2
FROM unnest($3::text[], $4::timestamptz[], $5::int4[], $6::int4[], $7::text[])
     AS u(uid, at, errors, warnings, keys)
ON CONFLICT (team_id, instance_uid) DO UPDATE SET
    collected_at = excluded.collected_at, errors = excluded.errors, warnings = excluded.warnings,
    finding_keys = excluded.finding_keys, shared_by = excluded.shared_by
WHERE excluded.collected_at >= v.collected_at";

impl Server {
    /// Send `member`'s summaries; one older than the one the server holds is ignored.
    pub async fn send_verify_summaries(
        &mut self,
        team_id: i64,
        member: &str,
        rows: &[SummaryRow],
    ) -> Result<(), TeamError> {
        sqlx::query(SEND)
            .bind(team_id)
            .bind(member)
            .bind(rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.1).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.2).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.3).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.4.clone()).collect::<Vec<_>>())
            .execute(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    /// Every shared summary, by instance uid (unchecked).
    pub async fn verify_summaries(
        &mut self,
        team_id: i64,
    ) -> Result<Vec<ServerSummaryRow>, TeamError> {
        sqlx::query_as(
            "SELECT instance_uid::text, collected_at, errors, warnings, finding_keys::text, shared_by
         FROM verify_summaries WHERE team_id = $1 ORDER BY instance_uid",
        )
        .bind(team_id)
        .fetch_all(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))
    }
}

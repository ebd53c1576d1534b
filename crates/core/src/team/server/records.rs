//! `shared_records`: the shared records besides the ledger (budgets, projects, reminders' state,
//! backups, release checks and overrides), numbered from the team's counter; per record the
//! server keeps the higher (version, laptop).

use super::Server;
use crate::store::team::PendingRecord;
use crate::team::TeamError;

const PUSH: &str = "
WITH bump AS (
    UPDATE teams SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq - $2 AS base
), pushed AS (
    INSERT INTO shared_records AS s (team_id, kind, key, instance_uid, body, version, laptop,
                                     recorded_by, seq)
    SELECT $1, r.kind, r.key, r.instance_uid::uuid, r.body::jsonb, r.version, $3::uuid, $4,
           bump.base + r.ord
    FROM bump,
         unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::int8[]) WITH ORDINALITY
         AS r(kind, key, instance_uid, body, version, ord)
    ON CONFLICT (team_id, kind, key) DO UPDATE SET
        body = CASE WHEN (excluded.version, excluded.laptop::text) >= (s.version, s.laptop::text)
                    THEN excluded.body ELSE s.body END,
        instance_uid = CASE WHEN (excluded.version, excluded.laptop::text) >= (s.version, s.laptop::text)
                    THEN excluded.instance_uid ELSE s.instance_uid END,
        recorded_by = CASE WHEN (excluded.version, excluded.laptop::text) >= (s.version, s.laptop::text)
                    THEN excluded.recorded_by ELSE s.recorded_by END,
        laptop = CASE WHEN (excluded.version, excluded.laptop::text) >= (s.version, s.laptop::text)
                    THEN excluded.laptop ELSE s.laptop END,
        version = greatest(excluded.version, s.version),
        -- A losing push renumbers the winner too, so the loser's next pull fetches it.
        seq = excluded.seq,
        pushed_at = now()
    RETURNING 1
)
SELECT count(*) FROM pushed";

impl Server {
    /// Push `pending` (not empty) as `member` of laptop `laptop` in one statement; how many
    /// were sent.
    pub async fn push_records(
        &mut self,
        team_id: i64,
        member: &str,
        laptop: &str,
        pending: &[PendingRecord],
    ) -> Result<i64, TeamError> {
        let count = i64::try_from(pending.len()).unwrap_or(i64::MAX);
        sqlx::query_scalar(PUSH)
            .bind(team_id)
            .bind(count)
            .bind(laptop)
            .bind(member)
            .bind(pending.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>())
            .bind(pending.iter().map(|r| r.key.as_str()).collect::<Vec<_>>())
            .bind(
                pending
                    .iter()
                    .map(|r| r.instance_uid.as_str())
                    .collect::<Vec<_>>(),
            )
            .bind(
                pending
                    .iter()
                    .map(|r| r.body.as_deref())
                    .collect::<Vec<_>>(),
            )
            .bind(pending.iter().map(|r| r.version).collect::<Vec<_>>())
            .fetch_one(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))
    }
}

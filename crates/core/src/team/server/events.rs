//! `instances` and `ledger_events` as the push writes them: the one-statement path of a small
//! chunk, the chunk's instance columns (shared with [`copied_events`](super::copied_events)), and
//! the statistics refreshed after a bulk push. Every chunk is numbered from the team's counter
//! (`teams.last_seq`) under its row lock, held to commit.

use super::Server;
use crate::store::team::{PendingChunk, PendingInstance};
use crate::team::TeamError;

const PUSH: &str = "
WITH bump AS (
    UPDATE teams SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq - $2 AS base
), new_instances AS (
    INSERT INTO instances (uid, team_id, name, provider, region, gpu_model, currency, notes,
                           planned_hours, created_at, recorded_by)
    SELECT i.uid::uuid, $1, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
           i.planned_hours, i.created_at, i.recorded_by
    FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                $9::text[], $10::text[], $11::text[], $12::text[])
         AS i(uid, name, provider, region, gpu_model, currency, notes, planned_hours, created_at,
              recorded_by)
    ON CONFLICT (uid) DO NOTHING
), new_events AS (
    INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by, origin_seq,
                               laptop, traffic_gb, rules)
    SELECT e.uid::uuid, $1, bump.base + e.ord, e.instance_uid::uuid, e.kind, e.at, e.recorded_by,
           e.origin_seq, $13::uuid, e.traffic_gb, e.rules::jsonb
    FROM bump,
         unnest($14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::int8[],
                $20::text[], $21::text[]) WITH ORDINALITY
         AS e(uid, instance_uid, kind, at, recorded_by, origin_seq, traffic_gb, rules, ord)
    ON CONFLICT (uid) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM new_events), (SELECT base FROM bump)";

/// The instance columns of [`INSERT_INSTANCES`](super::copied_events::INSERT_INSTANCES) and [`PUSH`], in their
/// parameter order: uid, name, provider, region, GPU, currency, notes, planned hours, created,
/// recorded by.
pub(super) fn instance_columns(instances: &[PendingInstance]) -> [Vec<Option<String>>; 10] {
    let column = |f: fn(&PendingInstance) -> Option<String>| -> Vec<Option<String>> {
        instances.iter().map(f).collect()
    };
    [
        column(|i| Some(i.uid.clone())),
        column(|i| Some(i.name.clone())),
        column(|i| Some(i.provider.clone())),
        column(|i| i.region.clone()),
        column(|i| Some(i.gpu_model.clone())),
        column(|i| Some(i.currency.clone())),
        column(|i| i.notes.clone()),
        column(|i| i.planned_hours.clone()),
        column(|i| Some(i.created_at.clone())),
        column(|i| Some(i.recorded_by.clone())),
    ]
}

/// What the server answered for a chunk.
pub struct Sent {
    /// How many of its events the server did not have yet.
    pub inserted: i64,
    /// The team's counter before the chunk: its events were numbered `base + 1 ..= base + n`.
    pub base: i64,
}

impl Server {
    /// Send a small chunk in one statement, as laptop `laptop`, with each event's rules version
    /// as JSON text (`rules`, in the events' order).
    pub async fn push_events(
        &mut self,
        team_id: i64,
        laptop: &str,
        chunk: &PendingChunk,
        rules: Vec<Option<String>>,
    ) -> Result<Sent, TeamError> {
        let events = &chunk.events;
        let count = i64::try_from(events.len()).unwrap_or(i64::MAX);
        let mut push = sqlx::query_as(PUSH).bind(team_id).bind(count);
        for column in instance_columns(&chunk.instances) {
            push = push.bind(column);
        }
        let (inserted, base): (i64, i64) = push
            .bind(laptop)
            .bind(events.iter().map(|e| e.uid.as_str()).collect::<Vec<_>>())
            .bind(
                events
                    .iter()
                    .map(|e| e.instance_uid.as_str())
                    .collect::<Vec<_>>(),
            )
            .bind(events.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>())
            .bind(events.iter().map(|e| e.at.as_str()).collect::<Vec<_>>())
            .bind(
                events
                    .iter()
                    .map(|e| e.recorded_by.as_str())
                    .collect::<Vec<_>>(),
            )
            .bind(events.iter().map(|e| e.origin_seq).collect::<Vec<_>>())
            .bind(
                events
                    .iter()
                    .map(|e| e.traffic_gb.as_deref())
                    .collect::<Vec<_>>(),
            )
            .bind(rules)
            .fetch_one(&mut self.conn)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(Sent { inserted, base })
    }

    /// Refresh the server's statistics of the ledger (one round trip; see `push`'s
    /// `refresh_statistics` for why and when).
    pub async fn refresh_ledger_statistics(&mut self) -> Result<(), TeamError> {
        sqlx::Executor::execute(&mut self.conn, REFRESH_STATISTICS)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(())
    }
}

/// What [`refresh_statistics`] sends.
const REFRESH_STATISTICS: &str = "SET default_statistics_target = 10; \
    ANALYZE ledger_events (team_id, seq); RESET default_statistics_target";

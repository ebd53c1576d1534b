//! A pull's page: the one statement that brings it (a binary `COPY` of tagged rows) and the bytes
//! it sends. `team::pull` reads and checks the rows (`pull::read`, `pull::check`).

use futures::TryStreamExt;

use super::Server;
use crate::team::TeamError;

/// The one statement of a page: up to `limit` events after the events cursor (none this laptop
/// pushed), the instances they belong to, and, once the events are caught up, up to `limit`
/// shared records after the records cursor and the team's budgets; it also marks this member as
/// just synced. They come as binary `COPY` rows of eleven text columns, the first saying what
/// the row is: `h` the team's counter, `e` an event, `i` an instance, `r` a record, `b` a budget.
///
/// `COPY` takes no parameters, so the values are written into the statement: numbers and a UUID
/// printed by this program, and the member's name as hex digits, which nothing can make read
/// as SQL.
fn page_statement(
    team_id: i64,
    member: &str,
    laptop: uuid::Uuid,
    (events, records): (i64, i64),
    limit: i64,
) -> String {
    let member = hex::encode(member);
    format!(
        "COPY (
    WITH touch AS (
        UPDATE members SET last_sync_at = now()
        WHERE team_id = {team_id} AND name = convert_from(decode('{member}', 'hex'), 'UTF8')
        RETURNING 1
    ), page AS (
        SELECT le.seq, le.uid, le.instance_uid, le.kind, le.at, le.recorded_by, le.origin_seq,
               le.traffic_gb, le.rules
        FROM ledger_events le
        WHERE le.team_id = {team_id} AND le.seq > {events} AND le.laptop <> '{laptop}'::uuid
        ORDER BY le.seq LIMIT {limit}
    ), caught_up AS (
        SELECT count(*) < {limit} AS yes FROM page
    )
    SELECT 'h', t.last_seq::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM teams t WHERE t.id = {team_id}
    UNION ALL
    SELECT 'e', p.seq::text, p.uid::text, p.instance_uid::text, p.kind, p.at, p.recorded_by,
           p.origin_seq::text, p.traffic_gb, p.rules::text, NULL
    FROM page p
    UNION ALL
    SELECT 'i', i.uid::text, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
           i.planned_hours, i.created_at, i.recorded_by
    FROM instances i WHERE i.uid IN (SELECT instance_uid FROM page)
    UNION ALL
    (SELECT 'r', r.seq::text, r.kind, r.key, r.instance_uid::text, r.body::text,
            r.version::text, r.laptop::text, r.recorded_by, NULL, NULL
     FROM shared_records r, caught_up
     WHERE caught_up.yes AND r.team_id = {team_id} AND r.seq > {records}
           AND r.laptop <> '{laptop}'::uuid
     ORDER BY r.seq LIMIT {limit})
    UNION ALL
    SELECT 'b', b.currency, b.amount, b.set_by, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM team_budgets b, caught_up WHERE caught_up.yes AND b.team_id = {team_id}
) TO STDOUT (FORMAT binary)"
    )
}

impl Server {
    /// The page of up to `limit` events after the `(events, records)` cursors for `member` of
    /// laptop `laptop` (none of that laptop's own), as the raw binary `COPY` bytes (one round
    /// trip); see `page_statement`.
    pub async fn fetch_page(
        &mut self,
        team_id: i64,
        member: &str,
        laptop: uuid::Uuid,
        cursors: (i64, i64),
        limit: i64,
    ) -> Result<Vec<u8>, TeamError> {
        let statement = page_statement(team_id, member, laptop, cursors, limit);
        let read: Result<Vec<u8>, sqlx::Error> = async {
            let mut rows = self.conn.copy_out_raw(&statement).await?;
            let mut bytes = Vec::new();
            while let Some(chunk) = rows.try_next().await? {
                bytes.extend_from_slice(&chunk);
            }
            Ok(bytes)
        }
        .await;
        read.map_err(|e| self.failed(&e))
    }
}

//! `ledger_events` by `COPY`: a large chunk encoded as binary `COPY` rows, sent straight into
//! the ledger or, when the server already holds some of its events, through a staging table.
//! Apart from the one-statement path ([`events`](super::events)) because its statements and row
//! shapes must match each other column for column, and are easier to check side by side.

use super::events::{instance_columns, Sent};
use super::Server;
use crate::store::team::{PendingChunk, PendingEvent};
use crate::team::TeamError;

/// Numbers a chunk under the team's row lock (held to commit, so the team's pushes commit one
/// after another in sequence order): the chunk's events get `base + 1 ..= base + n`.
const BUMP: &str =
    "UPDATE teams SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq - $2";

/// The chunk's instances (each once), before its events.
pub(super) const INSERT_INSTANCES: &str = "
INSERT INTO instances (uid, team_id, name, provider, region, gpu_model, currency, notes,
                       planned_hours, created_at, recorded_by)
SELECT i.uid::uuid, $1, i.name, i.provider, i.region, i.gpu_model, i.currency, i.notes,
       i.planned_hours, i.created_at, i.recorded_by
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
            $9::text[], $10::text[], $11::text[])
     AS i(uid, name, provider, region, gpu_model, currency, notes, planned_hours, created_at,
          recorded_by)
ON CONFLICT (uid) DO NOTHING";

/// A chunk none of whose events the server holds goes straight into the table, as fast as the
/// server can take rows.
const COPY_EVENTS: &str = "COPY ledger_events (uid, team_id, seq, instance_uid, kind, at,
    recorded_by, origin_seq, laptop, traffic_gb, rules) FROM STDIN (FORMAT binary)";

/// A chunk the server holds some events of (its commit reached the server but the answer never
/// came back, or another sync of this laptop ran at the same time) goes through a staging table
/// and `ON CONFLICT (uid) DO NOTHING`: gone at the end of its transaction.
const STAGING: &str = "
CREATE TEMP TABLE team_push_staging (
    ord bigint, uid uuid, instance_uid uuid, kind text, at text, recorded_by text,
    origin_seq bigint, traffic_gb text, rules jsonb
) ON COMMIT DROP";

/// Columns of [`STAGING`].
const STAGING_COLUMNS: i16 = 9;

/// Columns of [`COPY_EVENTS`].
const EVENT_COLUMNS: i16 = 11;

/// The staged chunk's new events, numbered from the base the chunk was given.
const PUSH_STAGED: &str = "
WITH new_events AS (
    INSERT INTO ledger_events (uid, team_id, seq, instance_uid, kind, at, recorded_by, origin_seq,
                               laptop, traffic_gb, rules)
    SELECT s.uid, $1, $2 + s.ord, s.instance_uid, s.kind, s.at, s.recorded_by, s.origin_seq,
           $3::uuid, s.traffic_gb, s.rules
    FROM team_push_staging s
    ON CONFLICT (uid) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM new_events";

/// One event's values as a `COPY` row carries them.
pub struct CopyEvent<'a> {
    pub uid: uuid::Uuid,
    pub instance_uid: uuid::Uuid,
    pub event: &'a PendingEvent,
    /// Its rules version as JSON text, if it brings one.
    pub rules: Option<String>,
}

/// The fields every row shape shares, after its leading ones.
fn event_fields(rows: &mut crate::team::copy_binary::CopyRows, e: &CopyEvent<'_>) {
    rows.text(Some(&e.event.kind));
    rows.text(Some(&e.event.at));
    rows.text(Some(&e.event.recorded_by));
    rows.int8(e.event.origin_seq);
}

/// The chunk as `COPY` rows for [`COPY_EVENTS`], numbered from `base`.
fn event_rows(events: &[CopyEvent<'_>], team_id: i64, laptop: uuid::Uuid, base: i64) -> Vec<u8> {
    let mut rows = crate::team::copy_binary::CopyRows::new(EVENT_COLUMNS);
    for (ord, e) in (1i64..).zip(events) {
        rows.row();
        rows.uuid(e.uid);
        rows.int8(team_id);
        rows.int8(base + ord);
        rows.uuid(e.instance_uid);
        event_fields(&mut rows, e);
        rows.uuid(laptop);
        rows.text(e.event.traffic_gb.as_deref());
        rows.jsonb(e.rules.as_deref());
    }
    rows.finish()
}

/// The chunk as `COPY` rows for [`STAGING`].
fn staged_rows(events: &[CopyEvent<'_>]) -> Vec<u8> {
    let mut rows = crate::team::copy_binary::CopyRows::new(STAGING_COLUMNS);
    for (ord, e) in (1i64..).zip(events) {
        rows.row();
        rows.int8(ord);
        rows.uuid(e.uid);
        rows.uuid(e.instance_uid);
        event_fields(&mut rows, e);
        rows.text(e.event.traffic_gb.as_deref());
        rows.jsonb(e.rules.as_deref());
    }
    rows.finish()
}

/// Send `payload` through `COPY sql`; the server's answer, or the transport error.
async fn copy_in(
    conn: &mut sqlx::PgConnection,
    sql: &str,
    payload: Vec<u8>,
) -> Result<u64, sqlx::Error> {
    let mut copy = conn.copy_in_raw(sql).await?;
    if let Err(err) = copy.send(payload).await {
        // The connection is likely gone; the server drops the transaction either way.
        let _ = copy.abort("push interrupted").await;
        return Err(err);
    }
    copy.finish().await
}

fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505"))
}

impl Server {
    /// Send one large chunk by `COPY`, in one transaction: a cut anywhere before the commit leaves
    /// nothing on the server. Straight into the table first; if the server already holds one of
    /// its events, that attempt is rolled back to a savepoint and the chunk goes through
    /// [`STAGING`], which skips what is there.
    pub async fn push_events_copied(
        &mut self,
        team_id: i64,
        laptop: &str,
        laptop_uid: uuid::Uuid,
        chunk: &PendingChunk,
        events: &[CopyEvent<'_>],
    ) -> Result<Sent, TeamError> {
        let count = i64::try_from(chunk.events.len()).unwrap_or(i64::MAX);
        let result: Result<Sent, sqlx::Error> = async {
            let mut tx = sqlx::Connection::begin(&mut self.conn).await?;
            let base: i64 = sqlx::query_scalar(BUMP)
                .bind(team_id)
                .bind(count)
                .fetch_one(&mut *tx)
                .await?;
            let mut insert = sqlx::query(INSERT_INSTANCES).bind(team_id);
            for column in instance_columns(&chunk.instances) {
                insert = insert.bind(column);
            }
            insert.execute(&mut *tx).await?;
            let mut direct = sqlx::Connection::begin(&mut *tx).await?;
            let inserted = match copy_in(
                &mut direct,
                COPY_EVENTS,
                event_rows(events, team_id, laptop_uid, base),
            )
            .await
            {
                Ok(rows) => {
                    direct.commit().await?;
                    i64::try_from(rows).unwrap_or(i64::MAX)
                }
                Err(err) if is_unique_violation(&err) => {
                    direct.rollback().await?;
                    sqlx::query(STAGING).execute(&mut *tx).await?;
                    copy_in(
                        &mut tx,
                        "COPY team_push_staging FROM STDIN (FORMAT binary)",
                        staged_rows(events),
                    )
                    .await?;
                    sqlx::query_scalar(PUSH_STAGED)
                        .bind(team_id)
                        .bind(base)
                        .bind(laptop)
                        .fetch_one(&mut *tx)
                        .await?
                }
                Err(err) => return Err(err),
            };
            tx.commit().await?;
            Ok(Sent { inserted, base })
        }
        .await;
        result.map_err(|e| self.failed(&e))
    }
}

//! Rows of `conflict_replays` (migration 0210): each instance's last conflict report, kept with a
//! fingerprint of the rows it was computed from, so `team::conflicts` replays only the instances
//! whose ledger changed since.

use std::collections::HashMap;

use sqlx::SqliteConnection;

use crate::store::StoreError;

/// An instance as the conflict report names it, with the fingerprint of its replay's inputs.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ReplayInputs {
    pub instance_id: i64,
    pub name: String,
    pub uid: String,
    /// Changes whenever an event, a rules version or a resolution arrives, or the name changes.
    pub fingerprint: String,
}

/// The fingerprint query, for every instance or, `chosen` filled in, those it names: one
/// definition, so a fingerprint reads the same whichever way it was taken.
///
/// An instance's events are named by their last id alone. Events are only ever appended (never
/// edited, never deleted but with their instance), and a new row's id is one past the largest
/// in the table, so every event recorded or pulled for an instance raises its last id. That is
/// one seek in the `(instance_id, id)` index per instance; counting the events as well read the
/// whole index, every event of the ledger, at the end of every sync. Rules versions are few per
/// instance, and counted as well.
fn inputs_sql(chosen: &str) -> String {
    format!(
        "WITH {chosen} resolutions AS (
             SELECT count(*) AS n, coalesce(max(rowid), 0) AS last FROM ledger_withdrawals
         )
         SELECT i.id AS instance_id, i.name, coalesce(i.uid, '') AS uid,
                json_array(i.name, i.uid,
                           coalesce((SELECT max(e.id) FROM ledger_events e
                                     WHERE e.instance_id = i.id), 0),
                           (SELECT count(*) FROM billing_rules r WHERE r.instance_id = i.id),
                           coalesce((SELECT max(r.id) FROM billing_rules r
                                     WHERE r.instance_id = i.id), 0),
                           w.n, w.last) AS fingerprint
         FROM instances i
         CROSS JOIN resolutions w
         {where_chosen}
         ORDER BY i.created_at, i.id",
        where_chosen = if chosen.is_empty() {
            ""
        } else {
            "WHERE i.id IN (SELECT id FROM chosen)"
        }
    )
}

/// Every instance (in `ledger::list_instances`' order) with its fingerprint: a few index seeks
/// per instance, whatever the number of events.
pub async fn inputs(conn: &mut SqliteConnection) -> Result<Vec<ReplayInputs>, StoreError> {
    Ok(sqlx::query_as(&inputs_sql("")).fetch_all(conn).await?)
}

/// [`inputs`] for the instances with these uids only.
pub async fn inputs_of(
    conn: &mut SqliteConnection,
    uids: &[String],
) -> Result<Vec<ReplayInputs>, StoreError> {
    let uids = serde_json::to_string(uids).map_err(|err| StoreError::Corrupt {
        what: "instance uids",
        value: err.to_string(),
    })?;
    let sql = inputs_sql(
        "chosen AS (SELECT id FROM instances WHERE uid IN (SELECT value FROM json_each(?))),",
    );
    Ok(sqlx::query_as(&sql).bind(uids).fetch_all(conn).await?)
}

/// The kept reports: `(fingerprint, refused events as JSON)` by instance id.
pub async fn kept(
    conn: &mut SqliteConnection,
) -> Result<HashMap<i64, (String, String)>, StoreError> {
    let rows: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT instance_id, fingerprint, refused FROM conflict_replays")
            .fetch_all(conn)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, fingerprint, refused)| (id, (fingerprint, refused)))
        .collect())
}

/// Keep `(instance id, fingerprint, refused JSON)` rows, replacing older ones, in one statement.
/// An instance deleted meanwhile is skipped (its report went with it).
pub async fn keep(
    conn: &mut SqliteConnection,
    rows: &[(i64, String, String)],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    let doc = serde_json::to_string(rows).map_err(|err| StoreError::Corrupt {
        what: "conflict report",
        value: err.to_string(),
    })?;
    sqlx::query(
        "INSERT INTO conflict_replays (instance_id, fingerprint, refused)
         SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2 FROM json_each(?) r
         WHERE EXISTS (SELECT 1 FROM instances i WHERE i.id = r.value ->> 0)
         ON CONFLICT (instance_id) DO UPDATE SET fingerprint = excluded.fingerprint,
                                                 refused = excluded.refused",
    )
    .bind(doc)
    .execute(conn)
    .await?;
    Ok(())
}

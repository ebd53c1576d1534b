//! Rows of `vast_looks`: what Vast.ai last said of a rental's bid and of a host's pending price
//! increase on it. Amounts stay decimal text here; `keeper::vast` and `status` read them.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::SqliteConnection;

use super::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct VastLookRow {
    pub instance_id: i64,
    pub looked_at: DateTime<Utc>,
    pub interruptible: bool,
    pub outbid: bool,
    pub outbid_since: Option<DateTime<Utc>>,
    pub per_hour: Option<String>,
    pub min_bid: Option<String>,
    pub increase_id: Option<i64>,
    pub increase_old: Option<String>,
    pub increase_new: Option<String>,
    pub increase_seen: Option<DateTime<Utc>>,
}

fn amount(text: Option<&String>) -> Option<Decimal> {
    text.and_then(|t| t.parse().ok())
}

impl VastLookRow {
    pub fn per_hour(&self) -> Option<Decimal> {
        amount(self.per_hour.as_ref())
    }

    pub fn min_bid(&self) -> Option<Decimal> {
        amount(self.min_bid.as_ref())
    }

    /// The pending increase: its id, the price an hour before and after, first seen when.
    pub fn increase(&self) -> Option<(i64, Decimal, Decimal, DateTime<Utc>)> {
        Some((
            self.increase_id?,
            amount(self.increase_old.as_ref())?,
            amount(self.increase_new.as_ref())?,
            self.increase_seen?,
        ))
    }
}

/// What a look at the instance's own record said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BidLook {
    pub interruptible: bool,
    pub outbid: bool,
    pub per_hour: Option<Decimal>,
    pub min_bid: Option<Decimal>,
}

const COLUMNS: &str = "instance_id, looked_at, interruptible, outbid, outbid_since, per_hour, \
     min_bid, increase_id, increase_old, increase_new, increase_seen";

pub async fn of_instance(
    conn: &mut SqliteConnection,
    instance_id: i64,
) -> Result<Option<VastLookRow>, StoreError> {
    Ok(sqlx::query_as::<_, VastLookRow>(&format!(
        "SELECT {COLUMNS} FROM vast_looks WHERE instance_id = ?"
    ))
    .bind(instance_id)
    .fetch_optional(conn)
    .await?)
}

pub async fn all(conn: &mut SqliteConnection) -> Result<Vec<VastLookRow>, StoreError> {
    Ok(
        sqlx::query_as::<_, VastLookRow>(&format!("SELECT {COLUMNS} FROM vast_looks"))
            .fetch_all(conn)
            .await?,
    )
}

/// Keep what the instance's record said at `at`; `outbid_since` stays while it stays outbid.
pub async fn put_bid(
    conn: &mut SqliteConnection,
    instance_id: i64,
    look: &BidLook,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO vast_looks (instance_id, looked_at, interruptible, outbid, outbid_since,
                                 per_hour, min_bid)
         VALUES (?1, ?2, ?3, ?4, CASE WHEN ?4 THEN ?2 END, ?5, ?6)
         ON CONFLICT (instance_id) DO UPDATE SET
             looked_at = excluded.looked_at,
             interruptible = excluded.interruptible,
             outbid_since = CASE WHEN NOT excluded.outbid THEN NULL
                                 WHEN vast_looks.outbid THEN vast_looks.outbid_since
                                 ELSE excluded.looked_at END,
             outbid = excluded.outbid,
             per_hour = excluded.per_hour,
             min_bid = excluded.min_bid",
    )
    .bind(instance_id)
    .bind(at)
    .bind(look.interruptible)
    .bind(look.outbid)
    .bind(look.per_hour.map(|d| d.to_string()))
    .bind(look.min_bid.map(|d| d.to_string()))
    .execute(conn)
    .await?;
    Ok(())
}

/// Keep the host's pending increase (`None`: there is none now); first seen stays while the
/// same increase is pending.
pub async fn put_increase(
    conn: &mut SqliteConnection,
    instance_id: i64,
    increase: Option<(i64, Decimal, Decimal)>,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let (id, old, new) = match increase {
        Some((id, old, new)) => (Some(id), Some(old.to_string()), Some(new.to_string())),
        None => (None, None, None),
    };
    sqlx::query(
        "INSERT INTO vast_looks (instance_id, looked_at, increase_id, increase_old, increase_new,
                                 increase_seen)
         VALUES (?1, ?2, ?3, ?4, ?5, CASE WHEN ?3 IS NOT NULL THEN ?2 END)
         ON CONFLICT (instance_id) DO UPDATE SET
             increase_seen = CASE WHEN excluded.increase_id IS NULL THEN NULL
                                  WHEN vast_looks.increase_id IS excluded.increase_id
                                      THEN vast_looks.increase_seen
                                  ELSE excluded.looked_at END,
             increase_id = excluded.increase_id,
             increase_old = excluded.increase_old,
             increase_new = excluded.increase_new",
    )
    .bind(instance_id)
    .bind(at)
    .bind(id)
    .bind(old)
    .bind(new)
    .execute(conn)
    .await?;
    Ok(())
}

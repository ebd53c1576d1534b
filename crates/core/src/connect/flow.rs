//! The wizard's "Test the connection" as one call: test step by step, and on success save the
//! target on the instance and keep the connection open for what comes next (Verify, terminal).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::SqliteConnection;
use ts_rs::TS;

use super::check::{check, ConnectionCheck};
use super::live::LiveTargets;
use super::plan::ConnectPlan;
use super::saved::{load_target, save_target, SaveReport};
use super::ConnectError;
use crate::ssh::ConnectOptions;

/// The answer to "Test the connection".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct TestReport {
    pub check: ConnectionCheck,
    /// Present when the test connected: the target now saved on the instance.
    pub saved: Option<SaveReport>,
}

/// Test `plan` for `instance`; a connection that works is saved and kept open in `live`.
#[tracing::instrument(skip(conn, live, plan, base), err)]
pub async fn test_and_save(
    conn: &mut SqliteConnection,
    live: &LiveTargets,
    instance: &str,
    plan: &ConnectPlan,
    base: ConnectOptions,
    now: DateTime<Utc>,
) -> Result<TestReport, ConnectError> {
    // Fails early, before dialling, when the rental does not exist.
    load_target(conn, instance).await?;
    let outcome = check(plan, base).await?;
    let Some(target) = outcome.target else {
        return Ok(TestReport {
            check: outcome.check,
            saved: None,
        });
    };
    let saved = save_target(conn, instance, plan, target.destination(), now).await?;
    live.insert(instance, target).await;
    Ok(TestReport {
        check: outcome.check,
        saved: Some(saved),
    })
}

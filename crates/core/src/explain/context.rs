//! What the store knows about an instance that helps explain an error on it: the facts of its
//! latest Verify run, its GPU, and the task the user plans to run (kept per instance).

use chrono::{DateTime, Utc};

use super::{ExplainContext, ExplainError};
use crate::catalog::{estimate, EstimateRequest};
use crate::diagnose::Lang;
use crate::probe::Facts;
use crate::store::probe_runs::{self, RunOwner};
use crate::store::{instance_plans, ledger, Store, StoreError};

async fn instance(store: &Store, name: &str) -> Result<ledger::InstanceRow, ExplainError> {
    let mut conn = store.pool().acquire().await.map_err(StoreError::Query)?;
    ledger::find_instance(&mut conn, name)
        .await?
        .ok_or_else(|| ExplainError::UnknownInstance(name.to_owned()))
}

/// The context for explaining an error on `instance`: its latest Verify facts (if it was ever
/// verified), its GPU model and its planned task (if one was saved).
pub async fn load_context(
    store: &Store,
    instance_name: &str,
    lang: Lang,
) -> Result<ExplainContext, ExplainError> {
    let row = instance(store, instance_name).await?;
    let mut conn = store.pool().acquire().await.map_err(StoreError::Query)?;
    let facts = match probe_runs::list_probe_runs(&mut conn, RunOwner::Instance(row.id), 1)
        .await?
        .first()
    {
        Some(run) => Some(
            serde_json::from_str::<Facts>(&run.facts)
                .map_err(|e| ExplainError::Corrupt(format!("verify run {}: {e}", run.id)))?,
        ),
        None => None,
    };
    let plan = decode_plan(instance_plans::find(&mut conn, row.id).await?)?;
    Ok(ExplainContext {
        lang,
        facts,
        plan,
        gpu_model: Some(row.gpu_model),
        prices: Vec::new(),
        offers: Vec::new(),
    })
}

fn decode_plan(json: Option<String>) -> Result<Option<EstimateRequest>, ExplainError> {
    json.map(|text| {
        serde_json::from_str::<EstimateRequest>(&text)
            .map_err(|e| ExplainError::Corrupt(format!("planned task: {e}")))
    })
    .transpose()
}

/// The planned task saved for `instance`, if any.
pub async fn load_plan(
    store: &Store,
    instance_name: &str,
) -> Result<Option<EstimateRequest>, ExplainError> {
    let row = instance(store, instance_name).await?;
    let mut conn = store.pool().acquire().await.map_err(StoreError::Query)?;
    decode_plan(instance_plans::find(&mut conn, row.id).await?)
}

/// Keep `plan` as the task planned for `instance` (replacing the previous one). The estimator
/// must accept it, so a saved plan always gives figures.
pub async fn save_plan(
    store: &Store,
    instance_name: &str,
    plan: &EstimateRequest,
    now: DateTime<Utc>,
) -> Result<(), ExplainError> {
    estimate(plan).map_err(|e| ExplainError::BadPlan(e.to_string()))?;
    let row = instance(store, instance_name).await?;
    let json = serde_json::to_string(plan).map_err(|e| ExplainError::BadPlan(e.to_string()))?;
    let mut tx = store.write().await?;
    instance_plans::upsert(&mut tx, row.id, &json, now).await?;
    tx.commit().await.map_err(StoreError::Query)?;
    Ok(())
}

/// Explain `text` as seen on `instance` (its latest Verify facts and planned task), or with no
/// instance at all. A `plan` given here is the task the user just stated: it is used at once
/// and, with an instance, kept as that instance's plan. The app's "Paste an error" box and a
/// failed job's log come through here.
pub async fn explain_on(
    store: &Store,
    instance: Option<&str>,
    text: &str,
    lang: Lang,
    plan: Option<&EstimateRequest>,
    now: DateTime<Utc>,
) -> Result<super::Explanation, ExplainError> {
    super::check_input(text)?;
    let mut context = match instance {
        Some(name) => {
            if let Some(plan) = plan {
                save_plan(store, name, plan, now).await?;
            }
            load_context(store, name, lang).await?
        }
        None => ExplainContext::new(lang),
    };
    if let Some(plan) = plan {
        estimate(plan).map_err(|e| ExplainError::BadPlan(e.to_string()))?;
        context.plan = Some(plan.clone());
    }
    // Only to price the bigger card named last: a ledger or a market cache that cannot be read
    // costs the price, not the explanation.
    context.prices = crate::catalog::recommend::earlier_prices(store, now)
        .await
        .unwrap_or_default();
    context.offers = crate::market::snapshot::all_offers(store)
        .await
        .unwrap_or_default();
    Ok(super::explain(text, &context))
}

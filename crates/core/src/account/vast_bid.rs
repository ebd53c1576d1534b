//! Vast.ai interruptible instances and hosts' price increases (`vast-ai/docs`
//! `api-reference/openapi`): the instance's own record (`GET /api/v0/instances/{id}/`: `is_bid`,
//! `actual_status`, `intended_status`, `min_bid`, `dph_total`), the documented
//! bid change (`PUT /api/v0/instances/bid_price/{id}/` with `{"client_id": "me", "price": X}`,
//! Vast's bid per GPU-hour), and pending price increases (`GET
//! /api/v0/instances/pending-price-increases/`; `PUT /api/v0/instances/accept-price-increase/`
//! or `…/reject-price-increase/` with exactly `{"pending_price_increase_id": N}`, any other key
//! refused by Vast).

use reqwest::Method;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::http::{provider_words, refusal, Api};
use super::remote;
use super::AccountError;

const NAME: &str = "Vast.ai";

/// What Vast.ai says of an interruptible instance's bid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BidState {
    /// Rented as interruptible (a bid), not on demand.
    pub interruptible: bool,
    /// Meant to run but stopped: a higher bid took the GPU. Storage keeps billing.
    pub outbid: bool,
    /// Vast.ai's words for its state now and the state it is meant to be in.
    pub actual: String,
    pub intended: String,
    /// What Vast.ai says it bills an hour now (`dph_total`); outbid, that is the storage.
    #[ts(type = "string | null")]
    pub per_hour: Option<Decimal>,
    /// The lowest bid that would win the GPU back now, per GPU-hour, when Vast.ai says.
    #[ts(type = "string | null")]
    pub min_bid: Option<Decimal>,
}

fn word(item: &Value, key: &str) -> String {
    remote::clean_text(item.get(key).and_then(Value::as_str).unwrap_or(""), 20)
}

/// Read an instance record (untrusted: a missing or odd field reads as unknown, never a crash).
pub fn bid_state(item: &Value) -> BidState {
    let actual = word(item, "actual_status");
    let intended = word(item, "intended_status");
    let interruptible = item.get("is_bid").and_then(Value::as_bool) == Some(true);
    let stopped = matches!(
        actual.as_str(),
        "stopped" | "exited" | "inactive" | "offline"
    );
    BidState {
        interruptible,
        outbid: interruptible && intended == "running" && stopped,
        per_hour: remote::price(item.get("dph_total")),
        min_bid: remote::price(item.get("min_bid")),
        actual,
        intended,
    }
}

pub async fn look(api: &Api, id: &str) -> Result<BidState, AccountError> {
    let answer = api
        .send(Method::GET, &format!("/api/v0/instances/{id}/"), &[], None)
        .await?;
    let answer = answer.or_refusal(NAME, Some(id))?;
    match answer.body.get("instances") {
        Some(item @ Value::Object(_)) => Ok(bid_state(item)),
        _ => Err(AccountError::UnknownRemote {
            provider: NAME,
            id: id.to_owned(),
        }),
    }
}

fn success(
    answer: &super::http::Answer,
    id: Option<&str>,
    action: &'static str,
) -> Result<(), AccountError> {
    match answer.status {
        200..=299 if answer.body.get("success").and_then(Value::as_bool) != Some(false) => Ok(()),
        200..=299 => Err(AccountError::ActionNotAllowed {
            provider: NAME,
            action,
            detail: provider_words(&answer.body),
        }),
        _ => Err(refusal(NAME, answer, id)),
    }
}

/// Change the bid of interruptible instance `id` to `price` per GPU-hour.
pub async fn change_bid(api: &Api, id: &str, price: Decimal) -> Result<(), AccountError> {
    let price =
        price
            .normalize()
            .to_string()
            .parse::<f64>()
            .map_err(|_| AccountError::Malformed {
                provider: NAME,
                detail: "the bid is not a number".into(),
            })?;
    let answer = api
        .send(
            Method::PUT,
            &format!("/api/v0/instances/bid_price/{id}/"),
            &[],
            Some(&json!({ "client_id": "me", "price": price })),
        )
        .await?;
    success(&answer, Some(id), "change the bid of")
}

/// A host's pending price increase on one rental.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PriceIncrease {
    #[ts(type = "number")]
    pub pending_id: i64,
    /// The instance (contract) id.
    pub instance_id: String,
    /// GPU, disk and RAM per hour, before and after.
    #[ts(type = "string")]
    pub old_per_hour: Decimal,
    #[ts(type = "string")]
    pub new_per_hour: Decimal,
}

/// Per second → per hour (GPU plus disk and RAM).
fn hourly(row: &Value, gpu: &str, disk: &str) -> Option<Decimal> {
    let per_second =
        remote::number(row.get(gpu))? + remote::number(row.get(disk)).unwrap_or_default();
    remote::hourly((per_second * Decimal::from(3600)).round_dp(6))
}

fn increase(row: &Value) -> Option<PriceIncrease> {
    Some(PriceIncrease {
        pending_id: row.get("pending_price_increase_id")?.as_i64()?,
        instance_id: row.get("contract_id")?.as_u64()?.to_string(),
        old_per_hour: hourly(row, "old_gpu_costpersec", "old_disk_ram_costpersec")?,
        new_per_hour: hourly(row, "new_gpu_costpersec", "new_disk_ram_costpersec")?,
    })
}

/// Every pending increase; a row that does not read is left out, never the others.
pub async fn pending_increases(api: &Api) -> Result<Vec<PriceIncrease>, AccountError> {
    let answer = api
        .send(
            Method::GET,
            "/api/v0/instances/pending-price-increases/",
            &[],
            None,
        )
        .await?;
    let answer = answer.or_refusal(NAME, None)?;
    let rows = answer
        .body
        .get("pending_price_increases")
        .and_then(Value::as_array)
        .ok_or_else(|| AccountError::Malformed {
            provider: NAME,
            detail: "no pending_price_increases list".into(),
        })?;
    Ok(rows.iter().filter_map(increase).collect())
}

/// Accept or reject one pending increase.
pub async fn answer_increase(api: &Api, pending_id: i64, accept: bool) -> Result<(), AccountError> {
    let path = if accept {
        "/api/v0/instances/accept-price-increase/"
    } else {
        "/api/v0/instances/reject-price-increase/"
    };
    let answer = api
        .send(
            Method::PUT,
            path,
            &[],
            Some(&json!({ "pending_price_increase_id": pending_id })),
        )
        .await?;
    success(
        &answer,
        None,
        if accept {
            "accept the price increase of"
        } else {
            "reject the price increase of"
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn outbid_is_meant_to_run_but_stopped_and_interruptible() {
        let outbid = bid_state(&json!({"is_bid": true, "actual_status": "exited",
            "intended_status": "running", "dph_total": 0.12, "storage_cost": 0.12, "min_bid": 0.31}));
        assert!(outbid.outbid && outbid.interruptible);
        assert_eq!(outbid.min_bid, Some(dec!(0.31)));
        let stopped_by_user = bid_state(&json!({"is_bid": true, "actual_status": "stopped",
            "intended_status": "stopped"}));
        assert!(!stopped_by_user.outbid);
        let on_demand = bid_state(&json!({"is_bid": false, "actual_status": "exited",
            "intended_status": "running"}));
        assert!(!on_demand.outbid);
        let hostile = bid_state(&json!({"is_bid": "yes", "actual_status": 7, "dph_total": "NaN"}));
        assert!(!hostile.outbid && hostile.per_hour.is_none());
    }

    #[test]
    fn increases_read_per_second_as_per_hour_and_skip_bad_rows() {
        let row = json!({"pending_price_increase_id": 999, "contract_id": 123,
            "old_gpu_costpersec": 0.0001, "old_disk_ram_costpersec": 0.00001,
            "new_gpu_costpersec": 0.0002, "new_disk_ram_costpersec": 0.00001});
        let read = increase(&row).unwrap();
        assert_eq!((read.pending_id, read.instance_id.as_str()), (999, "123"));
        assert_eq!(read.old_per_hour, dec!(0.396));
        assert_eq!(read.new_per_hour, dec!(0.756));
        assert!(increase(&json!({"contract_id": 1})).is_none());
    }
}

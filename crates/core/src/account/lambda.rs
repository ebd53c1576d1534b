//! Lambda Cloud (the public spec at docs.lambda.ai/api/cloud; SkyPilot's
//! `sky/provision/lambda_cloud` and dstack's `backends/lambdalabs` call the same paths):
//! `GET /api/v1/instances` → `{"data": [Instance]}` (status `booting`, `active`, `unhealthy`,
//! `terminating`, `terminated`, `preempted`; the instance's `instance_type` carries
//! `price_cents_per_hour`), `GET /api/v1/instances/{id}` → `{"data": Instance}`, and
//! `POST /api/v1/instance-operations/terminate` with `{"instance_ids": [id]}`. Lambda has no
//! stop and no billing records.

use chrono::{DateTime, Utc};
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::http::{refusal, Api};
use super::remote::{self, Listing, PowerVerb, RemoteInstance, RemoteState, SshEndpoint};
use super::AccountError;

const NAME: &str = "Lambda";

fn state_of(word: &str) -> RemoteState {
    match word {
        "active" => RemoteState::Running,
        "unhealthy" => RemoteState::Error,
        "terminated" | "terminating" | "preempted" => RemoteState::Gone,
        _ => RemoteState::Starting,
    }
}

pub fn parse_instance(item: &Value, now: DateTime<Utc>) -> Result<RemoteInstance, String> {
    let id = item
        .get("id")
        .and_then(Value::as_str)
        .and_then(remote::checked_id)
        .ok_or("an instance without a usable id")?;
    let word = item.get("status").and_then(Value::as_str).unwrap_or("");
    let kind = item.get("instance_type");
    // Cents read without a cap; the dollars pass the same cap as every provider's price.
    let cents_field = kind.and_then(|k| k.get("price_cents_per_hour"));
    let price = remote::number(cents_field).and_then(|c| remote::hourly(c / Decimal::ONE_HUNDRED));
    let gpu_text = kind
        .and_then(|k| k.get("gpu_description"))
        .and_then(Value::as_str)
        .unwrap_or("");
    // "A100 (40 GB SXM4)": the model is what comes before the bracket.
    let gpu_name = gpu_text.split('(').next().unwrap_or("").trim();
    Ok(RemoteInstance {
        name: remote::clean_text(
            item.get("name").and_then(Value::as_str).unwrap_or(""),
            remote::MAX_NAME_CHARS,
        ),
        provider_word: remote::clean_text(word, 20),
        gpu_model: remote::gpu_model(gpu_name),
        gpu_count: remote::gpu_count(
            kind.and_then(|k| k.get("specs"))
                .and_then(|s| s.get("gpus")),
        )
        .unwrap_or(1),
        region: item
            .get("region")
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
            .map(|r| remote::clean_text(r, 40))
            .filter(|r| !r.is_empty()),
        price_per_hour: price.filter(|p| !p.is_zero()),
        stopped_per_hour: None,
        refused_price: remote::refused_price(cents_field, price)
            .map(|cents| format!("{cents} cents")),
        // The spec gives no creation time; one is used if sent.
        created_at: remote::time(item.get("created_at"), now),
        started_at: None,
        ssh: item
            .get("ip")
            .and_then(Value::as_str)
            .and_then(|ip| SshEndpoint::checked(ip, 22, "ubuntu")),
        password: None,
        // Terminate is the only power change Lambda has.
        actions: Some(vec![PowerVerb::Release]),
        state: state_of(word),
        id,
    })
}

pub async fn check_key(api: &Api) -> Result<(), AccountError> {
    let answer = api
        .send(Method::GET, "/api/v1/instances", &[], None)
        .await?;
    answer.or_refusal(NAME, None).map(drop)
}

pub async fn list(api: &Api, now: DateTime<Utc>) -> Result<Listing, AccountError> {
    let answer = api
        .send(Method::GET, "/api/v1/instances", &[], None)
        .await?;
    let answer = answer.or_refusal(NAME, None)?;
    let mut listing = Listing::new();
    listing.read_page(NAME, &answer.body, "data", |item| parse_instance(item, now))?;
    listing.drop_duplicates(NAME);
    Ok(listing)
}

pub async fn one(
    api: &Api,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<RemoteInstance>, AccountError> {
    let answer = api
        .send(Method::GET, &format!("/api/v1/instances/{id}"), &[], None)
        .await?;
    match answer.status {
        200..=299 => parse_instance(answer.body.get("data").unwrap_or(&Value::Null), now)
            .map(Some)
            .map_err(|detail| AccountError::Malformed {
                provider: NAME,
                detail,
            }),
        404 => Ok(None),
        _ => Err(refusal(NAME, &answer, Some(id))),
    }
}

pub async fn power(api: &Api, id: &str, verb: PowerVerb) -> Result<(), AccountError> {
    if verb != PowerVerb::Release {
        return Err(AccountError::ActionUnsupported {
            provider: NAME,
            action: verb.as_str(),
            hint: ": Lambda instances cannot be stopped, only terminated (released)",
        });
    }
    let answer = api
        .send(
            Method::POST,
            "/api/v1/instance-operations/terminate",
            &[],
            Some(&json!({ "instance_ids": [id] })),
        )
        .await?;
    match answer.status {
        200..=299 => Ok(()),
        _ => Err(refusal(NAME, &answer, Some(id))),
    }
}

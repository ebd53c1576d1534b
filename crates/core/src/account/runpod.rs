//! RunPod REST v2 (`runpod/docs`, `api-reference-v2/openapi.json`; v1 was retired in 2026):
//! `GET /v2/pods` → `{"pods": [Pod]}` (one page, no paging), `GET /v2/pods/{id}`,
//! `POST /v2/pods/{id}/action` with `{"action": "start"|"stop"|"terminate"}` (409 when the
//! action does not fit the pod's status), `DELETE /v2/pods/{id}` (204), and
//! `GET /v2/billing/pods?startTime&endTime&bucketSize=day&podId` → `{"records": [{startTime,
//! endTime, podId, totalAmount, …}]}`. Amounts and `cost` are USD; `cost` is 0 while stopped.

use chrono::{DateTime, NaiveDate, Utc};
use reqwest::Method;
use serde_json::{json, Value};

use super::http::{refusal, Api};
use super::remote::{self, Charge, Listing, PowerVerb, RemoteInstance, RemoteState, SshEndpoint};
use super::AccountError;

const NAME: &str = "RunPod";

fn state_of(word: &str) -> RemoteState {
    match word {
        "RUNNING" => RemoteState::Running,
        "EXITED" => RemoteState::Stopped,
        "TERMINATED" => RemoteState::Gone,
        "ERROR" => RemoteState::Error,
        // PROVISIONING, STARTING, and any status added later: between states.
        _ => RemoteState::Starting,
    }
}

/// One pod of a listing or a `GET /v2/pods/{id}` answer.
pub fn parse_pod(pod: &Value, now: DateTime<Utc>) -> Result<RemoteInstance, String> {
    let id = pod
        .get("id")
        .and_then(Value::as_str)
        .and_then(remote::checked_id)
        .ok_or("a pod without a usable id")?;
    let word = pod.get("status").and_then(Value::as_str).unwrap_or("");
    let state = state_of(word);
    let gpu = pod.get("gpu");
    let price = remote::price(pod.get("cost"));
    let ssh = pod.get("ssh").and_then(|ssh| {
        ["direct", "proxy"].iter().find_map(|way| {
            let e = ssh.get(*way)?;
            SshEndpoint::checked(
                e.get("host")?.as_str()?,
                e.get("port")?.as_i64()?,
                e.get("username")?.as_str()?,
            )
        })
    });
    let actions = pod.get("actions").and_then(Value::as_array).map(|list| {
        list.iter()
            .filter_map(Value::as_str)
            .filter_map(|a| match a {
                "start" => Some(PowerVerb::On),
                "stop" => Some(PowerVerb::Off),
                "terminate" => Some(PowerVerb::Release),
                _ => None,
            })
            .collect()
    });
    Ok(RemoteInstance {
        name: remote::clean_text(
            pod.get("name").and_then(Value::as_str).unwrap_or(""),
            remote::MAX_NAME_CHARS,
        ),
        provider_word: remote::clean_text(word, 20),
        gpu_model: gpu
            .and_then(|g| g.get("id"))
            .and_then(Value::as_str)
            .and_then(remote::gpu_model),
        gpu_count: remote::gpu_count(gpu.and_then(|g| g.get("count"))).unwrap_or(1),
        region: pod
            .get("dataCenterId")
            .and_then(Value::as_str)
            .map(|r| remote::clean_text(r, 40))
            .filter(|r| !r.is_empty()),
        price_per_hour: price.filter(|p| state == RemoteState::Running && !p.is_zero()),
        stopped_per_hour: None,
        refused_price: remote::refused_price(pod.get("cost"), price),
        created_at: remote::time(pod.get("createdAt"), now),
        started_at: remote::time(pod.get("startedAt"), now),
        ssh,
        password: None,
        actions,
        state,
        id,
    })
}

pub async fn check_key(api: &Api) -> Result<(), AccountError> {
    let answer = api.send(Method::GET, "/v2/pods", &[], None).await?;
    answer.or_refusal(NAME, None).map(drop)
}

pub async fn list(api: &Api, now: DateTime<Utc>) -> Result<Listing, AccountError> {
    let answer = api.send(Method::GET, "/v2/pods", &[], None).await?;
    let answer = answer.or_refusal(NAME, None)?;
    let mut listing = Listing::new();
    listing.read_page(NAME, &answer.body, "pods", |pod| parse_pod(pod, now))?;
    listing.drop_duplicates(NAME);
    Ok(listing)
}

pub async fn one(
    api: &Api,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<RemoteInstance>, AccountError> {
    let answer = api
        .send(Method::GET, &format!("/v2/pods/{id}"), &[], None)
        .await?;
    match answer.status {
        200..=299 => parse_pod(&with_id(&answer.body, id), now)
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
    let answer = match verb {
        PowerVerb::Release => {
            api.send(Method::DELETE, &format!("/v2/pods/{id}"), &[], None)
                .await?
        }
        PowerVerb::On | PowerVerb::Off => {
            let action = if verb == PowerVerb::On {
                "start"
            } else {
                "stop"
            };
            api.send(
                Method::POST,
                &format!("/v2/pods/{id}/action"),
                &[],
                Some(&json!({ "action": action })),
            )
            .await?
        }
    };
    match answer.status {
        200..=299 => Ok(()),
        409 => Err(AccountError::ActionNotAllowed {
            provider: NAME,
            action: verb.as_str(),
            detail: super::http::provider_words(&answer.body),
        }),
        _ => Err(refusal(NAME, &answer, Some(id))),
    }
}

/// Daily pod billing records between `from` and `to` (inclusive days).
pub async fn charges(
    api: &Api,
    id: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<Charge>, AccountError> {
    let start = from.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
    let end = (to + chrono::Duration::days(1))
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let query = [
        (
            "startTime",
            start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        (
            "endTime",
            end.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        ("bucketSize", "day".to_owned()),
        ("podId", id.to_owned()),
    ];
    let answer = api
        .send(Method::GET, "/v2/billing/pods", &query, None)
        .await?;
    let answer = answer.or_refusal(NAME, None)?;
    let records = answer
        .body
        .get("records")
        .and_then(Value::as_array)
        .ok_or_else(|| AccountError::Malformed {
            provider: NAME,
            detail: "no \"records\" list".into(),
        })?;
    let far_future = end + chrono::Duration::days(1);
    Ok(records
        .iter()
        .filter(|r| r.get("podId").and_then(Value::as_str) == Some(id))
        .filter_map(|r| {
            let day = remote::time(r.get("startTime"), far_future)?.date_naive();
            let amount = remote::price(r.get("totalAmount"))?;
            Some(Charge {
                remote_id: id.to_owned(),
                day,
                amount,
            })
        })
        .collect())
}

/// `pod` with `"id": id` when it carries none (the id asked for stands in).
fn with_id(pod: &Value, id: &str) -> Value {
    let mut pod = pod.clone();
    if let Value::Object(fields) = &mut pod {
        fields.entry("id").or_insert_with(|| Value::from(id));
    }
    pod
}

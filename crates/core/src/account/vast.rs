//! Vast.ai (`vast-ai/docs`, `api-reference/openapi/yaml/`): `GET /api/v1/instances/` pages of
//! at most 25 with `next_token` / `after_token` (show_instances.yaml), `GET
//! /api/v0/instances/{id}/` → `{"instances": {…}}` (show_instance.yaml), `PUT
//! /api/v0/instances/{id}/` with `{"state": "running"|"stopped"}` → `{"success": true}`
//! (manage_instance.yaml), `DELETE /api/v0/instances/{id}/` (destroy_instance.yaml) and `GET
//! /api/v0/charges/?select_filters={"day":{…}}` (show_charges.yaml: per contract over the day
//! range, `source` `instance-<id>`, `amount`). Prices (`dph_total`) are USD per hour.

use chrono::{DateTime, NaiveDate, Utc};
use reqwest::Method;
use serde_json::{json, Value};

use super::http::{refusal, Api};
use super::remote::{self, Charge, Listing, PowerVerb, RemoteInstance, RemoteState, SshEndpoint};
use super::AccountError;

const NAME: &str = "Vast.ai";
/// The documented page size maximum.
const PAGE: u32 = 25;
/// A listing longer than this many pages is not believed (a loop of `next_token`s).
const MAX_PAGES: u32 = 200;

fn state_of(actual: &str) -> RemoteState {
    match actual {
        "running" => RemoteState::Running,
        "stopped" | "exited" | "inactive" => RemoteState::Stopped,
        "offline" | "error" => RemoteState::Error,
        // created, loading, scheduling, null: between states.
        _ => RemoteState::Starting,
    }
}

fn id_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Number(n) => n.as_u64().map(|n| n.to_string()),
        Value::String(s) if s.chars().all(|c| c.is_ascii_digit()) => remote::checked_id(s),
        _ => None,
    }
}

pub fn parse_instance(item: &Value, now: DateTime<Utc>) -> Result<RemoteInstance, String> {
    let id = id_of(item.get("id")).ok_or("an instance without a numeric id")?;
    let word = item
        .get("actual_status")
        .and_then(Value::as_str)
        .unwrap_or("");
    let state = state_of(word);
    // Direct (the public IP and the host port mapped to 22) before Vast.ai's SSH proxy.
    let direct = item
        .get("public_ipaddr")
        .and_then(Value::as_str)
        .and_then(|ip| {
            let mapped = item.get("ports")?.get("22/tcp")?.as_array()?.first()?;
            let port = match mapped.get("HostPort")? {
                Value::String(s) => s.trim().parse::<i64>().ok()?,
                Value::Number(n) => n.as_i64()?,
                _ => return None,
            };
            SshEndpoint::checked(ip, port, "root")
        });
    let proxy = || {
        SshEndpoint::checked(
            item.get("ssh_host")?.as_str()?,
            item.get("ssh_port")?.as_i64()?,
            "root",
        )
    };
    let label = item.get("label").and_then(Value::as_str).unwrap_or("");
    let price = remote::price(item.get("dph_total"));
    Ok(RemoteInstance {
        name: remote::clean_text(label, remote::MAX_NAME_CHARS),
        provider_word: remote::clean_text(word, 20),
        gpu_model: item
            .get("gpu_name")
            .and_then(Value::as_str)
            .and_then(remote::gpu_model),
        gpu_count: remote::gpu_count(item.get("num_gpus")).unwrap_or(1),
        region: item
            .get("geolocation")
            .and_then(Value::as_str)
            .map(|r| remote::clean_text(r, 60))
            .filter(|r| !r.is_empty()),
        price_per_hour: price.filter(|p| !p.is_zero()),
        stopped_per_hour: None,
        refused_price: remote::refused_price(item.get("dph_total"), price),
        created_at: remote::time(item.get("start_date"), now),
        started_at: None,
        ssh: direct.or_else(proxy),
        password: None,
        actions: None,
        state,
        id,
    })
}

pub async fn check_key(api: &Api) -> Result<(), AccountError> {
    let answer = api
        .send(
            Method::GET,
            "/api/v1/instances/",
            &[("limit", "1".into())],
            None,
        )
        .await?;
    answer.or_refusal(NAME, None).map(drop)
}

pub async fn list(api: &Api, now: DateTime<Utc>) -> Result<Listing, AccountError> {
    let mut listing = Listing::new();
    let mut after: Option<String> = None;
    loop {
        let mut query = vec![("limit", PAGE.to_string())];
        if let Some(token) = &after {
            query.push(("after_token", token.clone()));
        }
        let answer = api
            .send(Method::GET, "/api/v1/instances/", &query, None)
            .await?;
        let answer = answer.or_refusal(NAME, None)?;
        let found = listing.read_page(NAME, &answer.body, "instances", |item| {
            parse_instance(item, now)
        })?;
        match answer.body.get("next_token").and_then(Value::as_str) {
            Some(token) if !token.is_empty() && found > 0 => {
                if listing.requests >= MAX_PAGES {
                    return Err(AccountError::Malformed {
                        provider: NAME,
                        detail: format!("more than {MAX_PAGES} pages of instances"),
                    });
                }
                after = Some(token.to_owned());
            }
            _ => {
                listing.drop_duplicates(NAME);
                return Ok(listing);
            }
        }
    }
}

pub async fn one(
    api: &Api,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<RemoteInstance>, AccountError> {
    let answer = api
        .send(Method::GET, &format!("/api/v0/instances/{id}/"), &[], None)
        .await?;
    match answer.status {
        200..=299 => match answer.body.get("instances") {
            // A destroyed instance reads back as `{"instances": null}`.
            None | Some(Value::Null) => Ok(None),
            // The id asked for stands in where the answer leaves it out.
            Some(item) => parse_instance(&with_id(item, id), now)
                .map(Some)
                .map_err(|detail| AccountError::Malformed {
                    provider: NAME,
                    detail,
                }),
        },
        404 => Ok(None),
        _ => Err(refusal(NAME, &answer, Some(id))),
    }
}

pub async fn power(api: &Api, id: &str, verb: PowerVerb) -> Result<(), AccountError> {
    let path = format!("/api/v0/instances/{id}/");
    let answer = match verb {
        PowerVerb::Release => api.send(Method::DELETE, &path, &[], None).await?,
        PowerVerb::On | PowerVerb::Off => {
            let state = if verb == PowerVerb::On {
                "running"
            } else {
                "stopped"
            };
            api.send(Method::PUT, &path, &[], Some(&json!({ "state": state })))
                .await?
        }
    };
    match answer.status {
        200..=299 if answer.body.get("success").and_then(Value::as_bool) == Some(true) => Ok(()),
        200..=299 => Err(AccountError::ActionNotAllowed {
            provider: NAME,
            action: verb.as_str(),
            detail: super::http::provider_words(&answer.body),
        }),
        _ => Err(refusal(NAME, &answer, Some(id))),
    }
}

/// What each instance was charged on `day` (the documented filter takes a day range in unix
/// seconds; one range per day gives per-day amounts).
pub async fn charges_on(api: &Api, day: NaiveDate) -> Result<Vec<Charge>, AccountError> {
    let start = day
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc()
        .timestamp();
    let filters = json!({
        "day": {"gte": start, "lte": start + 86_399},
        "type": {"in": ["instance"]},
    });
    let mut found = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut query = vec![
            ("select_filters", filters.to_string()),
            ("limit", "500".to_owned()),
        ];
        if let Some(token) = &after {
            query.push(("after_token", token.clone()));
        }
        let answer = api
            .send(Method::GET, "/api/v0/charges/", &query, None)
            .await?;
        let answer = answer.or_refusal(NAME, None)?;
        let results = answer
            .body
            .get("results")
            .and_then(Value::as_array)
            .ok_or_else(|| AccountError::Malformed {
                provider: NAME,
                detail: "no \"results\" list".into(),
            })?;
        for row in results {
            let id = row
                .get("source")
                .and_then(Value::as_str)
                .and_then(|s| s.strip_prefix("instance-"))
                .and_then(|id| id_of(Some(&Value::String(id.to_owned()))));
            if let (Some(remote_id), Some(amount)) = (id, remote::price(row.get("amount"))) {
                found.push(Charge {
                    remote_id,
                    day,
                    amount,
                });
            }
        }
        match answer.body.get("next_token").and_then(Value::as_str) {
            Some(token) if !token.is_empty() && !results.is_empty() => {
                after = Some(token.to_owned());
            }
            _ => return Ok(found),
        }
    }
    Ok(found)
}

/// `item` with `"id": id` when it carries none.
fn with_id(item: &Value, id: &str) -> Value {
    let mut item = item.clone();
    if let Value::Object(fields) = &mut item {
        fields
            .entry("id")
            .or_insert_with(|| id.parse::<u64>().map_or(Value::Null, Value::from));
    }
    item
}

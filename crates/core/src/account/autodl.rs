//! AutoDL 容器实例 Pro API (`https://api.autodl.com`, header `Authorization: TOKEN` without
//! "Bearer"; every answer is `{"code": "Success", "msg": …, "data": …}`, a refusal another
//! `code` with HTTP 200): `POST /api/v1/dev/instance/pro/list` with `{page_index, page_size}`,
//! `GET …/pro/status?instance_uuid=`, `GET …/pro/snapshot?instance_uuid=` (`payg_price` in
//! 1/1000 yuan per hour, the GPU, `ssh_command`, `root_password`, the region), `POST
//! …/pro/power_on` (`{instance_uuid, payload: "gpu"}`), `…/pro/power_off`, `…/pro/release`
//! (powered off first) and `POST /api/v1/dev/wallet/balance` (`accumulate`: all spent, 1/1000
//! yuan). Only Pro instances appear here; ordinary AutoDL instances stay hand-recorded.

use chrono::{DateTime, Utc};
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::http::{provider_words, refusal, Answer, Api};
use super::remote::{self, Listing, PowerVerb, RemoteInstance, RemoteState, SshEndpoint};
use super::AccountError;
use crate::ssh::Secret;

const NAME: &str = "AutoDL";
const PAGE: u32 = 50;
const MAX_PAGES: u32 = 100;
const PRO: &str = "/api/v1/dev/instance/pro";

fn state_of(word: &str) -> RemoteState {
    match word {
        "running" => RemoteState::Running,
        "shutdown" | "stopped" | "power_off" => RemoteState::Stopped,
        "released" | "removed" => RemoteState::Gone,
        "failed" | "error" => RemoteState::Error,
        // creating, starting, shutting_down, re_initing …: between states.
        _ => RemoteState::Starting,
    }
}

/// `data` of a successful answer; a refusal in AutoDL's words otherwise.
fn data(answer: &Answer, id: Option<&str>) -> Result<Value, AccountError> {
    if !answer.accepted() {
        return Err(refusal(NAME, answer, id));
    }
    match answer.body.get("code").and_then(Value::as_str) {
        Some("Success") => Ok(answer.body.get("data").cloned().unwrap_or(Value::Null)),
        Some(code) => {
            let words = provider_words(&answer.body);
            let detail = if words.is_empty() {
                remote::clean_text(code, 60)
            } else {
                words
            };
            let lower = code.to_ascii_lowercase();
            Err(if id.is_some() && lower.contains("notfound") {
                AccountError::UnknownRemote {
                    provider: NAME,
                    id: id.unwrap_or_default().to_owned(),
                }
            } else if lower.contains("auth") || lower.contains("token") {
                AccountError::KeyRefused {
                    provider: NAME,
                    detail,
                }
            } else {
                AccountError::Refused {
                    provider: NAME,
                    status: answer.status,
                    detail,
                }
            })
        }
        None => Err(AccountError::Malformed {
            provider: NAME,
            detail: "no \"code\" in the answer".into(),
        }),
    }
}

fn text<'a>(item: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
}

/// 1/1000 yuan (an integer or numeric string) as yuan, without a cap (the account's totals).
fn milli_yuan(value: Option<&Value>) -> Option<Decimal> {
    remote::number(value).map(|raw| (raw / Decimal::from(1000)).normalize())
}

/// An hourly price in 1/1000 yuan as yuan per hour, through the cap every provider's price
/// passes ([`remote::hourly`]).
fn milli_yuan_rate(value: Option<&Value>) -> Option<Decimal> {
    milli_yuan(value).and_then(remote::hourly)
}

/// One entry of the list (state, id, name); the snapshot fills in the rest.
pub fn parse_listed(item: &Value, now: DateTime<Utc>) -> Result<RemoteInstance, String> {
    let id = text(item, &["uuid", "instance_uuid"])
        .and_then(remote::checked_id)
        .ok_or("an instance without a usable uuid")?;
    let word = text(item, &["status"]).unwrap_or("");
    Ok(RemoteInstance {
        name: remote::clean_text(
            text(item, &["name", "instance_name"]).unwrap_or(""),
            remote::MAX_NAME_CHARS,
        ),
        provider_word: remote::clean_text(word, 20),
        gpu_model: text(item, &["gpu_name", "gpu_type"]).and_then(remote::gpu_model),
        gpu_count: remote::gpu_count(item.get("gpu_num").or_else(|| item.get("req_gpu_amount")))
            .unwrap_or(1),
        region: text(item, &["region_name", "region"])
            .map(|r| remote::clean_text(r, 40))
            .filter(|r| !r.is_empty()),
        price_per_hour: milli_yuan_rate(item.get("payg_price")).filter(|p| !p.is_zero()),
        stopped_per_hour: None,
        refused_price: remote::refused_price(
            item.get("payg_price"),
            milli_yuan_rate(item.get("payg_price")),
        )
        .map(|milli| format!("{milli} (1/1000 yuan)")),
        created_at: remote::time(item.get("created_at"), now),
        started_at: remote::time(item.get("started_at"), now),
        ssh: None,
        password: None,
        actions: None,
        state: state_of(word),
        id,
    })
}

/// Fill in what the snapshot says: price, GPU, region, SSH endpoint and password.
pub fn apply_snapshot(instance: &mut RemoteInstance, snapshot: &Value) {
    let rate = milli_yuan_rate(snapshot.get("payg_price"));
    if let Some(price) = rate.filter(|p| !p.is_zero()) {
        instance.price_per_hour = Some(price);
        instance.refused_price = None;
    } else if let Some(refused) = remote::refused_price(snapshot.get("payg_price"), rate) {
        instance.price_per_hour = None;
        instance.refused_price = Some(format!("{refused} (1/1000 yuan)"));
    }
    if let Some(gpu) = text(snapshot, &["gpu_name", "gpu_type"]).and_then(remote::gpu_model) {
        instance.gpu_model = Some(gpu);
    }
    if let Some(count) = remote::gpu_count(
        snapshot
            .get("gpu_num")
            .or_else(|| snapshot.get("req_gpu_amount")),
    ) {
        instance.gpu_count = count;
    }
    if let Some(region) = text(snapshot, &["region_name", "region"])
        .map(|r| remote::clean_text(r, 40))
        .filter(|r| !r.is_empty())
    {
        instance.region = Some(region);
    }
    if let Some(command) = text(snapshot, &["ssh_command"]) {
        instance.ssh = crate::ssh::parse_ssh_command(command)
            .ok()
            .and_then(|parsed| {
                SshEndpoint::checked(
                    parsed.host_name.as_deref().unwrap_or(&parsed.host),
                    i64::from(parsed.port.unwrap_or(22)),
                    parsed.user.as_deref().unwrap_or("root"),
                )
            });
    }
    instance.password = text(snapshot, &["root_password"])
        .filter(|p| !p.is_empty() && p.len() <= 200 && !p.chars().any(char::is_control))
        .map(Secret::new);
}

pub async fn check_key(api: &Api) -> Result<(), AccountError> {
    balance(api).await.map(|_| ())
}

/// The account's total spend so far, in yuan.
pub async fn balance(api: &Api) -> Result<Decimal, AccountError> {
    let answer = api
        .send(
            Method::POST,
            "/api/v1/dev/wallet/balance",
            &[],
            Some(&json!({})),
        )
        .await?;
    let data = data(&answer, None)?;
    milli_yuan(data.get("accumulate")).ok_or_else(|| AccountError::Malformed {
        provider: NAME,
        detail: "no \"accumulate\" in the balance".into(),
    })
}

pub async fn snapshot(api: &Api, id: &str) -> Result<Value, AccountError> {
    let answer = api
        .send(
            Method::GET,
            &format!("{PRO}/snapshot"),
            &[("instance_uuid", id.to_owned())],
            None,
        )
        .await?;
    data(&answer, Some(id))
}

/// Every Pro instance; `needs_snapshot` says which ones to read in full (new or changed ones:
/// the listing carries the state, so unchanged instances cost no request).
pub async fn list(
    api: &Api,
    now: DateTime<Utc>,
    needs_snapshot: &(dyn Fn(&RemoteInstance) -> bool + Sync),
) -> Result<Listing, AccountError> {
    let mut listing = Listing::new();
    for page_index in 1..=MAX_PAGES {
        let answer = api
            .send(
                Method::POST,
                &format!("{PRO}/list"),
                &[],
                Some(&json!({ "page_index": page_index, "page_size": PAGE })),
            )
            .await?;
        let data = data(&answer, None)?;
        let found = listing.read_page(NAME, &data, "list", |item| parse_listed(item, now))?;
        // Without `max_page` nobody knows whether a next page exists: what this page leaves out
        // is not taken as gone.
        let Some(max_page) = data.get("max_page").and_then(Value::as_u64) else {
            if found > 0 {
                listing.complete = false;
                listing.warnings.push(format!(
                    "{NAME} did not say how many pages of instances there are; nothing it leaves out is taken as released"
                ));
            }
            break;
        };
        if found == 0 || u64::from(page_index) >= max_page {
            break;
        }
        if page_index == MAX_PAGES {
            listing.complete = false;
        }
    }
    listing.drop_duplicates(NAME);
    let mut refused = Vec::new();
    for instance in &mut listing.instances {
        if needs_snapshot(instance) {
            listing.requests += 1;
            match snapshot(api, &instance.id).await {
                Ok(snap) => apply_snapshot(instance, &snap),
                // One refused snapshot leaves that instance as it was; the others go on. A
                // refused key is the whole account's.
                Err(err @ AccountError::KeyRefused { .. }) => return Err(err),
                Err(err) => {
                    listing.warnings.push(format!(
                        "{NAME} instance {} ({}): its snapshot was refused ({err}); left as it was this time",
                        instance.id,
                        if instance.name.is_empty() { "no name" } else { &instance.name }
                    ));
                    refused.push(instance.id.clone());
                }
            }
        }
    }
    listing.instances.retain(|i| !refused.contains(&i.id));
    listing.skipped.extend(refused);
    Ok(listing)
}

pub async fn one(
    api: &Api,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<RemoteInstance>, AccountError> {
    let answer = api
        .send(
            Method::GET,
            &format!("{PRO}/status"),
            &[("instance_uuid", id.to_owned())],
            None,
        )
        .await?;
    let data = match data(&answer, Some(id)) {
        Ok(data) => data,
        Err(AccountError::UnknownRemote { .. }) => return Ok(None),
        Err(err) => return Err(err),
    };
    // `data` is the status word itself, or an object holding it.
    let word = data
        .as_str()
        .or_else(|| data.get("status").and_then(Value::as_str))
        .unwrap_or("");
    let mut instance =
        parse_listed(&json!({ "uuid": id, "status": word }), now).map_err(|detail| {
            AccountError::Malformed {
                provider: NAME,
                detail,
            }
        })?;
    instance.state = state_of(word);
    Ok((instance.state != RemoteState::Gone).then_some(instance))
}

pub async fn power(api: &Api, id: &str, verb: PowerVerb) -> Result<(), AccountError> {
    let (path, body) = match verb {
        PowerVerb::On => ("power_on", json!({ "instance_uuid": id, "payload": "gpu" })),
        PowerVerb::Off => ("power_off", json!({ "instance_uuid": id })),
        PowerVerb::Release => ("release", json!({ "instance_uuid": id })),
    };
    let answer = api
        .send(Method::POST, &format!("{PRO}/{path}"), &[], Some(&body))
        .await?;
    match data(&answer, Some(id)) {
        Ok(_) => Ok(()),
        Err(AccountError::Refused { detail, .. }) => Err(AccountError::ActionNotAllowed {
            provider: NAME,
            action: verb.as_str(),
            detail,
        }),
        Err(err) => Err(err),
    }
}

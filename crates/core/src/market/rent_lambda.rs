//! Renting on Lambda: the SSH key by name (Lambda installs only keys it knows by name), then the
//! launch. See [`super::rent`] for the flow around it.

use reqwest::Method;
use serde_json::{json, Value};

use super::offer::Offer;
use super::rent::{send, Created, RentRequest, Sent};
use super::MarketError;
use crate::account::http::{provider_words, refusal, Api};
use crate::account::AccountError;

/// Lambda `POST /api/v1/instance-operations/launch`; the SSH key by name (added through
/// `POST /api/v1/ssh-keys` when it is not there yet); no capacity is
/// `instance-operations/launch/insufficient-capacity`.
pub(super) async fn create(
    api: &Api,
    request: &RentRequest,
    offer: &Offer,
) -> Result<Created, Sent> {
    let (kind, region) = offer.offer_id.split_once(':').ok_or_else(|| {
        Sent::Refused(MarketError::NoCapacity {
            provider: "Lambda",
            detail: "no region has capacity for this instance type now".into(),
        })
    })?;
    let keys = key_names(api, request).await?;
    let body = json!({
        "region_name": region,
        "instance_type_name": kind,
        "ssh_key_names": keys,
        "name": request.name,
    });
    let answer = send(
        api,
        Method::POST,
        "/api/v1/instance-operations/launch",
        &body,
    )
    .await?;
    if !answer.accepted() {
        let code = answer
            .body
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if code == "instance-operations/launch/insufficient-capacity" {
            return Err(Sent::Refused(MarketError::NoCapacity {
                provider: "Lambda",
                detail: provider_words(&answer.body),
            }));
        }
        return Err(Sent::Refused(refusal("Lambda", &answer, None).into()));
    }
    let remote_id = answer
        .body
        .get("data")
        .and_then(|d| d.get("instance_ids"))
        .and_then(Value::as_array)
        .and_then(|ids| ids.first())
        .and_then(Value::as_str)
        .and_then(crate::account::remote::checked_id)
        .ok_or_else(|| Sent::Lost("an answer without instance_ids".into()))?;
    Ok(Created {
        remote_id,
        price_per_hour: Some(offer.price_per_hour),
        ssh: None,
        running: false,
    })
}

async fn key_names(api: &Api, request: &RentRequest) -> Result<Vec<String>, Sent> {
    let refused = |err: AccountError| Sent::Refused(err.into());
    let answer = api
        .send(Method::GET, "/api/v1/ssh-keys", &[], None)
        .await
        .map_err(refused)?;
    if !answer.accepted() {
        return Err(Sent::Refused(refusal("Lambda", &answer, None).into()));
    }
    let listed: Vec<(String, String)> = answer
        .body
        .get("data")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|k| {
                    let name = k
                        .get("name")?
                        .as_str()
                        .and_then(crate::account::remote::checked_id)?;
                    let key = k.get("public_key").and_then(Value::as_str).unwrap_or("");
                    Some((
                        name,
                        key.split_whitespace().take(2).collect::<Vec<_>>().join(" "),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(ours) = &request.ssh_public_key else {
        if listed.is_empty() {
            return Err(Sent::Refused(MarketError::CannotRent {
                provider: "Lambda",
                detail: "the account has no SSH key; pass --ssh-key".into(),
            }));
        }
        return Ok(listed.into_iter().map(|(name, _)| name).collect());
    };
    let ours_core = ours
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    if let Some((name, _)) = listed.iter().find(|(_, key)| *key == ours_core) {
        return Ok(vec![name.clone()]);
    }
    let name = format!("leasehold-{}", listed.len() + 1);
    let answer = api
        .send(
            Method::POST,
            "/api/v1/ssh-keys",
            &[],
            Some(&json!({"name": name, "public_key": ours.trim()})),
        )
        .await
        .map_err(refused)?;
    if !answer.accepted() {
        return Err(Sent::Refused(refusal("Lambda", &answer, None).into()));
    }
    Ok(vec![name])
}

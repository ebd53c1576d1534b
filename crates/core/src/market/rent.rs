//! Renting an offer through the provider's documented create call, recorded at once.
//!
//! Before anything is sent the offer is read again from the provider (its live price must be
//! at most the cap); the create call is sent once and never retried (a retried create can make
//! a second instance). It carries the ledger name as the instance's name (RunPod `name`, Vast.ai
//! `label`, Lambda `name`, AutoDL `instance_name`), so when its answer is lost the provider's listing is read for that
//! name, and otherwise the next account sync imports the instance under it: one click, one
//! instance. A refusal (no capacity, the offer taken, the price above the cap, the key refused)
//! records nothing. A created instance is recorded in one transaction: the `created` event with
//! the provider's price and the preset's rules, its provider id, and the link to the account.
//! AutoDL has no offers and names its price only after the create: `rent_autodl` holds it to
//! the cap afterwards.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use reqwest::Method;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::offer::Offer;
use super::snapshot::account_key;
use super::{parse, MarketError};
use crate::account::http::{provider_words, refusal, Answer, Api};
use crate::account::remote::SshEndpoint;
use crate::account::{client, AccountError, AccountRef, Backoff, Endpoints, Provider};
use crate::billing::{ledger, BillingRules, NewInstance};
use crate::ssh::Secret;
use crate::store::Store;

/// The image when none is given: the PyTorch image the seeds use, per provider.
pub fn default_image(provider: Provider) -> &'static str {
    match provider {
        Provider::Autodl => super::rent_autodl::DEFAULT_IMAGE,
        Provider::Runpod => "runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04",
        Provider::Vast | Provider::Lambda => "pytorch/pytorch:2.8.0-cuda12.8-cudnn9-devel",
    }
}

pub const DEFAULT_DISK_GB: u32 = 50;
const MAX_DISK_GB: u32 = 4000;
const ONE_TRY: Backoff = Backoff {
    first: std::time::Duration::from_secs(1),
    attempts: 1,
};

/// What the renter asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RentRequest {
    pub provider: Provider,
    pub offer_id: String,
    /// The ledger name, also sent as the instance's name at the provider.
    pub name: String,
    /// Never more than this per hour for the whole offer.
    #[ts(type = "string")]
    pub max_price_per_hour: Decimal,
    pub disk_gb: Option<u32>,
    pub image: Option<String>,
    /// The public key to install (one `ssh-… AAAA… comment` line).
    pub ssh_public_key: Option<String>,
}

/// What renting did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Rented {
    pub instance: String,
    pub provider: Provider,
    pub remote_id: String,
    #[ts(type = "string")]
    pub price_per_hour: Decimal,
    pub currency: String,
    /// `ssh …` when the provider already says how to reach it; the sync fills it in later.
    pub ssh: Option<String>,
}

/// What the review screen starts from: the image, the disk and the key that will be installed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RentDefaults {
    pub image: String,
    pub disk_gb: u32,
    /// The user's own public key (`~/.ssh/id_ed25519.pub`, then ECDSA, then RSA); `None` when
    /// there is none.
    pub ssh_public_key: Option<String>,
    /// AutoDL's documented compute specs (empty for the other providers, which rent offers).
    pub specs: Vec<super::rent_autodl::AutodlSpec>,
}

/// The defaults for renting on `provider`, with the public key from `home`'s `.ssh`.
pub fn defaults(provider: Provider, home: Option<&Path>) -> RentDefaults {
    RentDefaults {
        image: default_image(provider).to_owned(),
        // AutoDL's disk is what the system disk grows by.
        disk_gb: if provider == Provider::Autodl {
            0
        } else {
            DEFAULT_DISK_GB
        },
        ssh_public_key: public_key(None, home).ok().flatten(),
        specs: if provider == Provider::Autodl {
            super::rent_autodl::documented_specs()
        } else {
            Vec::new()
        },
    }
}

/// The public key to install: the one `given` (a private key's `.pub` beside it), else the
/// user's default one in `home`'s `.ssh`. A file holding a private key is never sent.
pub fn public_key(
    given: Option<&Path>,
    home: Option<&Path>,
) -> Result<Option<String>, MarketError> {
    let candidates: Vec<PathBuf> = match given {
        Some(path) => {
            let mut with_pub = path.as_os_str().to_owned();
            with_pub.push(".pub");
            vec![path.to_path_buf(), PathBuf::from(with_pub)]
        }
        None => {
            let Some(home) = home else {
                return Ok(None);
            };
            ["id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub"]
                .iter()
                .map(|f| home.join(".ssh").join(f))
                .collect()
        }
    };
    for path in &candidates {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if text.contains("PRIVATE KEY") {
            continue;
        }
        return Ok(Some(text.trim().to_owned()));
    }
    match given {
        Some(path) => Err(MarketError::NoPublicKey {
            path: path.display().to_string(),
        }),
        None => Ok(None),
    }
}

/// Every check that needs no provider.
pub fn validate(request: &RentRequest) -> Result<(), MarketError> {
    if request.max_price_per_hour <= Decimal::ZERO {
        return Err(MarketError::InvalidInput(
            "--max-price-per-hour must be more than zero".into(),
        ));
    }
    if request.provider == Provider::Autodl {
        super::rent_autodl::validate(request)?;
    } else if let Some(disk) = request.disk_gb {
        if !(1..=MAX_DISK_GB).contains(&disk) {
            return Err(MarketError::InvalidInput(format!(
                "--disk-gb must be between 1 and {MAX_DISK_GB}"
            )));
        }
    }
    if let Some(image) = request
        .image
        .as_ref()
        .filter(|_| request.provider != Provider::Autodl)
    {
        let ok = !image.is_empty()
            && image.len() <= 200
            && !image.starts_with('-')
            && image
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:@".contains(c));
        if !ok {
            return Err(MarketError::InvalidInput(format!(
                "{:?} is not an image name like pytorch/pytorch:2.8.0-cuda12.8-cudnn9-devel",
                crate::account::remote::clean_text(image, 60)
            )));
        }
    }
    if let Some(key) = &request.ssh_public_key {
        let words: Vec<&str> = key.split_whitespace().collect();
        let ok = key.len() <= 4096
            && !key.trim().contains('\n')
            && words.len() >= 2
            && (words[0].starts_with("ssh-")
                || words[0].starts_with("ecdsa-")
                || words[0].starts_with("sk-"));
        if !ok {
            return Err(MarketError::InvalidInput(
                "--ssh-key must be a public key file (one \"ssh-ed25519 AAAA… comment\" line)"
                    .into(),
            ));
        }
    }
    // The name's own checks (length, characters) are the ledger's.
    NewInstance {
        name: request.name.clone(),
        provider: request.provider.preset().as_str().to_owned(),
        region: None,
        gpu_model: "GPU".into(),
        currency: request.provider.currency().to_owned(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: BillingRules::simple(Decimal::ONE, 1),
    }
    .validate()?;
    Ok(())
}

/// Rent `request.offer_id` and record it; see the module doc.
pub async fn rent(
    store: &Store,
    endpoints: &Endpoints,
    request: &RentRequest,
    now: DateTime<Utc>,
) -> Result<Rented, MarketError> {
    validate(request)?;
    let provider = request.provider;
    {
        let mut conn = store
            .pool()
            .acquire()
            .await
            .map_err(crate::store::StoreError::from)?;
        if crate::store::ledger::find_instance(&mut conn, &request.name)
            .await?
            .is_some()
        {
            return Err(crate::billing::BillingError::DuplicateName {
                name: request.name.clone(),
            }
            .into());
        }
    }
    let (account, key) = account_key(store, provider).await?.ok_or_else(|| {
        MarketError::Account(AccountError::UnknownAccount {
            provider: provider.as_str().to_owned(),
            label: crate::account::DEFAULT_LABEL.to_owned(),
        })
    })?;
    let api = Api::new(provider, endpoints.base(provider), key, ONE_TRY)?;
    if provider == Provider::Autodl {
        // No offers to read first: the price is known only once it exists.
        return super::rent_autodl::rent(store, &account, &api, request, now).await;
    }
    let offer = live_offer(&api, endpoints, &request.offer_id, now).await?;
    if offer.price_per_hour > request.max_price_per_hour {
        return Err(MarketError::AboveCap {
            provider: provider.display(),
            price: offer.price_per_hour.to_string(),
            cap: request.max_price_per_hour.normalize().to_string(),
            currency: offer.currency.clone(),
        });
    }
    let created = match provider {
        Provider::Runpod => create_runpod(&api, request, &offer, now).await,
        Provider::Vast => create_vast(&api, request, &offer).await,
        Provider::Lambda => super::rent_lambda::create(&api, request, &offer).await,
        // Rented by `rent_autodl` above, which needs no offer.
        Provider::Autodl => Err(Sent::Refused(MarketError::CannotRent {
            provider: "AutoDL",
            detail: "AutoDL is rented by its compute spec, not an offer".into(),
        })),
    };
    let created = match created {
        Ok(created) => created,
        Err(Sent::Refused(err)) => return Err(err),
        Err(Sent::Lost(detail)) => {
            find_by_name(&api, &request.name, now)
                .await
                .ok_or(MarketError::AnswerLost {
                    name: request.name.clone(),
                    detail,
                })?
        }
    };
    record(store, &account, request, &offer, created, now).await
}

/// The offer as the provider lists it now (Vast.ai: one search for its id; RunPod and Lambda:
/// the catalog again).
async fn live_offer(
    api: &Api,
    endpoints: &Endpoints,
    offer_id: &str,
    now: DateTime<Utc>,
) -> Result<Offer, MarketError> {
    let provider = api.provider();
    let gone = |detail: &str| MarketError::OfferGone {
        provider: provider.display(),
        offer_id: crate::account::remote::clean_text(offer_id, 80),
        detail: detail.to_owned(),
    };
    let parsed = match provider {
        Provider::Vast => {
            let ask = offer_id.trim_end_matches("-bid");
            let Ok(number) = ask.parse::<u64>() else {
                return Err(MarketError::InvalidInput(format!(
                    "{:?} is not a Vast.ai offer id (a number, or NUMBER-bid)",
                    crate::account::remote::clean_text(offer_id, 40)
                )));
            };
            let keyless = Api::new(
                Provider::Vast,
                endpoints.base(Provider::Vast),
                Secret::new(""),
                ONE_TRY,
            )?;
            let mut query = parse::vast_query(10);
            query["id"] = json!({ "eq": number });
            let answer = keyless
                .send(Method::POST, "/api/v0/bundles/", &[], Some(&query))
                .await?;
            let answer = answer.or_refusal("Vast.ai", None)?;
            parse::vast(&answer.body, now)
        }
        Provider::Runpod | Provider::Lambda => super::snapshot::read_catalog(api, now).await?,
        Provider::Autodl => return Err(gone("no offers")),
    };
    parsed
        .offers
        .into_iter()
        .find(|o| o.offer_id == offer_id)
        .ok_or_else(|| gone("it is not in the provider's list any more"))
}

/// What a create call gave.
pub(super) struct Created {
    pub(super) remote_id: String,
    pub(super) price_per_hour: Option<Decimal>,
    pub(super) ssh: Option<SshEndpoint>,
    /// The provider says it runs already (AutoDL starts what it creates): the power-on is
    /// recorded with the creation, so the follow-through to Connect and Verify starts at once.
    pub(super) running: bool,
}

pub(super) enum Sent {
    /// The provider said no; nothing was created.
    Refused(MarketError),
    /// No answer (a dropped link, a timeout, a 5xx): it may have been created.
    Lost(String),
}

fn sent_error(err: AccountError) -> Sent {
    match err {
        AccountError::Unreachable { detail, .. } => Sent::Lost(detail),
        AccountError::Refused { status, detail, .. } if status >= 500 => {
            Sent::Lost(format!("HTTP {status} {detail}"))
        }
        other => Sent::Refused(other.into()),
    }
}

pub(super) async fn send(
    api: &Api,
    method: Method,
    path: &str,
    body: &Value,
) -> Result<Answer, Sent> {
    let answer = api
        .send(method, path, &[], Some(body))
        .await
        .map_err(sent_error)?;
    if answer.status >= 500 {
        return Err(Sent::Lost(format!("HTTP {}", answer.status)));
    }
    Ok(answer)
}

fn env_with_key(request: &RentRequest) -> Value {
    match &request.ssh_public_key {
        Some(key) => json!({ "PUBLIC_KEY": key.trim() }),
        None => json!({}),
    }
}

/// RunPod REST v2 `POST /v2/pods` with v2's own fields; no capacity is a 400 with free text.
async fn create_runpod(
    api: &Api,
    request: &RentRequest,
    offer: &Offer,
    now: DateTime<Utc>,
) -> Result<Created, Sent> {
    let mut parts = offer.offer_id.splitn(4, ':');
    let (cloud, gpu_id) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let data_centre = parts.nth(1);
    let mut body = json!({
        "name": request.name,
        "image": request.image.as_deref().unwrap_or(default_image(Provider::Runpod)),
        "gpu": {"id": gpu_id, "count": offer.count},
        "cloud": cloud,
        "disk": request.disk_gb.unwrap_or(DEFAULT_DISK_GB),
        "ports": ["22/tcp"],
        "startSsh": true,
        "env": env_with_key(request),
    });
    if let Some(dc) = data_centre {
        body["dataCenterIds"] = json!([dc]);
    }
    let answer = send(api, Method::POST, "/v2/pods", &body).await?;
    match answer.status {
        200..=299 => {
            let pod = crate::account::runpod::parse_pod(&answer.body, now).map_err(|detail| {
                Sent::Lost(format!("an answer without a usable pod: {detail}"))
            })?;
            Ok(Created {
                remote_id: pod.id,
                price_per_hour: remote_cost(answer.body.get("cost")),
                ssh: pod.ssh,
                running: false,
            })
        }
        400 | 409 => Err(Sent::Refused(MarketError::NoCapacity {
            provider: "RunPod",
            detail: provider_words(&answer.body),
        })),
        _ => Err(Sent::Refused(refusal("RunPod", &answer, None).into())),
    }
}

fn remote_cost(value: Option<&Value>) -> Option<Decimal> {
    crate::account::remote::price(value).filter(|p| !p.is_zero())
}

/// Vast.ai `PUT /api/v0/asks/{id}/` → `new_contract`; a taken offer is 404 `no_such_ask`.
async fn create_vast(api: &Api, request: &RentRequest, offer: &Offer) -> Result<Created, Sent> {
    let ask = offer.offer_id.trim_end_matches("-bid");
    let mut body = json!({
        "client_id": "me",
        "image": request.image.as_deref().unwrap_or(default_image(Provider::Vast)),
        "disk": request.disk_gb.unwrap_or(DEFAULT_DISK_GB),
        "label": request.name,
        "runtype": "ssh",
        "env": env_with_key(request),
    });
    if offer.interruptible {
        body["price"] = json!(offer
            .price_per_hour
            .to_string()
            .parse::<f64>()
            .unwrap_or(0.0));
    }
    let answer = send(api, Method::PUT, &format!("/api/v0/asks/{ask}/"), &body).await?;
    let said = |key: &str| answer.body.get(key).and_then(Value::as_str).unwrap_or("");
    if answer.status == 404 || said("error") == "no_such_ask" {
        return Err(Sent::Refused(MarketError::OfferGone {
            provider: "Vast.ai",
            offer_id: offer.offer_id.clone(),
            detail: provider_words(&answer.body),
        }));
    }
    if !answer.accepted() || answer.body.get("success") == Some(&Value::Bool(false)) {
        return Err(Sent::Refused(refusal("Vast.ai", &answer, None).into()));
    }
    let remote_id = match answer.body.get("new_contract") {
        Some(Value::Number(n)) => n.as_u64().map(|n| n.to_string()),
        Some(Value::String(s)) => crate::account::remote::checked_id(s),
        _ => None,
    }
    .ok_or_else(|| Sent::Lost("an answer without new_contract".into()))?;
    Ok(Created {
        remote_id,
        price_per_hour: Some(offer.price_per_hour),
        ssh: None,
        running: false,
    })
}

/// After a lost answer: the provider's instance carrying our name, if it was created.
pub(super) async fn find_by_name(api: &Api, name: &str, now: DateTime<Utc>) -> Option<Created> {
    let listing = client::list(api, now, &Default::default()).await.ok()?;
    let found = listing
        .instances
        .into_iter()
        .find(|i| i.name == name && i.state != crate::account::RemoteState::Gone)?;
    Some(Created {
        remote_id: found.id,
        price_per_hour: found.price_per_hour,
        ssh: found.ssh,
        running: false,
    })
}

/// The ledger entry, its provider id and the link to the account, in one transaction.
pub(super) async fn record(
    store: &Store,
    account: &AccountRef,
    request: &RentRequest,
    offer: &Offer,
    created: Created,
    now: DateTime<Utc>,
) -> Result<Rented, MarketError> {
    let provider = request.provider;
    let price = created.price_per_hour.unwrap_or(offer.price_per_hour);
    let preset = provider.preset().preset();
    let rules = BillingRules {
        billing_starts: preset.billing_starts,
        granularity: preset.granularity,
        wipe_after_stopped_days: preset.wipe_after_stopped_days,
        ..BillingRules::simple(
            (price / Decimal::from(offer.count.max(1)))
                .round_dp(6)
                .normalize(),
            offer.count,
        )
    };
    let new = NewInstance {
        name: request.name.clone(),
        provider: provider.preset().as_str().to_owned(),
        region: offer.region.clone(),
        gpu_model: offer.gpu.clone(),
        currency: offer.currency.clone(),
        notes: Some(format!(
            "Rented through Leasehold: {} offer {} (instance {})",
            provider.display(),
            offer.offer_id,
            created.remote_id
        )),
        planned_hours: None,
        budget: None,
        rules,
    };
    let mut tx = store.write().await?;
    let summary = ledger::add_instance_in(&mut tx, &new, now).await?;
    if created.running {
        ledger::append_in(
            &mut tx,
            &request.name,
            crate::billing::LedgerEvent::new(now, crate::billing::EventKind::Started),
        )
        .await?;
    }
    crate::store::provider_ids::upsert(&mut tx, summary.id, &created.remote_id, now).await?;
    let row = crate::account::row_of(&mut tx, account).await?;
    crate::store::accounts::insert_link(
        &mut tx,
        &crate::store::accounts::NewLink {
            instance_id: summary.id,
            account_id: row.id,
            remote_id: &created.remote_id,
            remote_state: if created.running {
                crate::account::RemoteState::Running.as_str()
            } else {
                crate::account::RemoteState::Starting.as_str()
            },
            seen_at: now,
            imported: false,
            note: None,
        },
    )
    .await?;
    crate::store::follow_ups::put(&mut tx, summary.id, "rent", now).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(Rented {
        instance: request.name.clone(),
        provider,
        remote_id: created.remote_id,
        price_per_hour: price,
        currency: offer.currency.clone(),
        ssh: created.ssh.map(|s| s.command()),
    })
}

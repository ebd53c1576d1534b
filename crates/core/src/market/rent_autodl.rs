//! Renting on AutoDL through its Pro create call (`POST /api/v1/dev/instance/pro/create`, as
//! documented on www.autodl.com/docs/instance_pro_api/). See [`super::rent`] for the flow
//! around it.
//!
//! AutoDL differs from the other providers in three ways this module handles:
//! - **No offers.** AutoDL publishes no price list and no stock, so the "offer" is a compute
//!   spec id (算力规格, `gpu_spec_uuid` such as `v-48g`), with an optional GPU count and data
//!   centres: `SPEC[:COUNT[:DC,DC…]]`.
//! - **The price comes after.** It is known only from the new instance's snapshot
//!   (`payg_price`), so the cap is held after the create: above it, or when the snapshot never
//!   says, the instance is powered off and released at once and nothing is recorded. When that
//!   release fails the instance is recorded and linked anyway, so the Stop wing and the account
//!   sync see a machine that may bill, and the error says so.
//! - **Images are AutoDL's own ids** (`base-image-…`, a private `image-…`), and the create asks
//!   for the lowest CUDA the host's driver must run (`cuda_v_from`, 118 = CUDA 11.8). The
//!   renter's public key goes in through `start_command`, quoted by [`crate::shell::quote`].

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ts_rs::TS;

use super::offer::{Offer, PriceSource, Stock};
use super::rent::{find_by_name, record, send, Created, RentRequest, Rented, Sent};
use super::MarketError;
use crate::account::http::{provider_words, Api};
use crate::account::remote::{self, PowerVerb, RemoteInstance, RemoteState};
use crate::account::{autodl, AccountError, AccountRef};
use crate::store::Store;

const NAME: &str = "AutoDL";
const CREATE: &str = "/api/v1/dev/instance/pro/create";

/// The PyTorch base image AutoDL documents (PyTorch 2.0.0, CUDA 11.8, Python 3.8).
pub const DEFAULT_IMAGE: &str = "base-image-l2t43iu6uk";
/// The public base images AutoDL documents, with the CUDA each carries (`cuda_v_from`).
const BASE_IMAGES: [(&str, u32); 5] = [
    ("base-image-l2t43iu6uk", 118),
    ("base-image-l374uiucui", 113),
    ("base-image-uxeklgirir", 112),
    ("base-image-mbr2n4urrc", 116),
    ("base-image-l2843iu23k", 118),
];
/// A private image's CUDA is not known here: CUDA 11.8, which every current AutoDL host runs.
/// Verify reports a driver too old for what the image carries.
const UNKNOWN_IMAGE_CUDA: u32 = 118;
/// The system disk may grow by this much at create (AutoDL's range is 0–500 GB).
pub const MAX_EXTRA_DISK_GB: u32 = 500;
const MAX_GPUS: u32 = 4;
/// The snapshot is read this many times, a second apart, before the price counts as unknown.
const PRICE_LOOKS: u32 = 4;
/// How long a power-off may take before the release is given up.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(90);

/// A compute spec AutoDL documents, with the GPU as our catalog names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AutodlSpec {
    /// `gpu_spec_uuid`, what the create call takes.
    pub spec: String,
    pub gpu: String,
    /// Memory per GPU, GB (AutoDL's modified cards carry more than the stock ones).
    pub vram_gb: u32,
}

/// The specs AutoDL's Pro API page lists. AutoDL adds specs over time; any other spec id is
/// accepted as typed (`leasehold rent autodl SPEC`).
const SPECS: [(&str, &str, u32); 7] = [
    ("h800", "H800", 80),
    ("v-48g", "RTX 4090", 48),
    ("pro6000-p", "RTX PRO 6000 Blackwell", 96),
    ("v-32g-p", "RTX 4080 SUPER", 32),
    ("v-48g-350w", "RTX 3090", 48),
    ("5090-p", "RTX 5090", 32),
    ("4090D", "RTX 4090 D", 24),
];

/// Every documented spec, the GPU named as the catalog names it.
pub fn documented_specs() -> Vec<AutodlSpec> {
    SPECS
        .iter()
        .map(|(spec, gpu, vram_gb)| AutodlSpec {
            spec: (*spec).to_owned(),
            gpu: crate::catalog::find_gpu(gpu)
                .map_or_else(|| (*gpu).to_owned(), |c| c.name.clone()),
            vram_gb: *vram_gb,
        })
        .collect()
}

/// The documented spec of `gpu` (as the catalog names it) with `vram_gb` of memory.
pub fn spec_for(gpu: &str, vram_gb: u32) -> Option<&'static str> {
    let wanted = crate::catalog::find_gpu(gpu).map_or(gpu, |c| c.name.as_str());
    SPECS.iter().find_map(|(spec, name, memory)| {
        let name = crate::catalog::find_gpu(name).map_or(*name, |c| c.name.as_str());
        (name == wanted && *memory == vram_gb).then_some(*spec)
    })
}

/// What `SPEC[:COUNT[:DC,DC…]]` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecRequest {
    pub spec: String,
    pub count: u32,
    pub data_centres: Vec<String>,
}

/// Read an AutoDL offer id: a spec id, then optionally a GPU count (1–4) and data centres.
pub fn parse_offer_id(raw: &str) -> Result<SpecRequest, MarketError> {
    let bad = || {
        MarketError::InvalidInput(format!(
            "{:?} is not an AutoDL compute spec: SPEC[:COUNT[:DATA CENTRES]], e.g. v-48g or v-48g:2:westDC2,beijingDC2",
            remote::clean_text(raw, 60)
        ))
    };
    let mut parts = raw.trim().splitn(3, ':');
    let spec = parts
        .next()
        .and_then(remote::checked_id)
        .filter(|s| s.len() <= 40)
        .ok_or_else(bad)?;
    let count = match parts.next() {
        None => 1,
        Some(n) => n
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_GPUS).contains(n))
            .ok_or_else(|| {
                MarketError::InvalidInput(format!("AutoDL rents 1 to {MAX_GPUS} GPUs at a time"))
            })?,
    };
    let data_centres = match parts.next() {
        None => Vec::new(),
        Some(list) => list
            .split(',')
            .map(|dc| remote::checked_id(dc).filter(|dc| dc.len() <= 40))
            .collect::<Option<Vec<_>>>()
            .filter(|dcs| !dcs.is_empty() && dcs.len() <= 10)
            .ok_or_else(bad)?,
    };
    Ok(SpecRequest {
        spec,
        count,
        data_centres,
    })
}

/// The checks that differ from the other providers': the spec, AutoDL's image ids and the
/// extra system disk.
pub(super) fn validate(request: &RentRequest) -> Result<(), MarketError> {
    parse_offer_id(&request.offer_id)?;
    if let Some(disk) = request.disk_gb {
        if disk > MAX_EXTRA_DISK_GB {
            return Err(MarketError::InvalidInput(format!(
                "on AutoDL --disk-gb is what the system disk grows by: 0 to {MAX_EXTRA_DISK_GB}"
            )));
        }
    }
    if let Some(image) = &request.image {
        let ok = remote::checked_id(image).is_some_and(|id| id.contains("image-"));
        if !ok {
            return Err(MarketError::InvalidInput(format!(
                "{:?} is not an AutoDL image id: AutoDL creates from its own images (base-image-… or a private image-…), not Docker names",
                remote::clean_text(image, 60)
            )));
        }
    }
    Ok(())
}

/// The image and the lowest CUDA the host must run for it.
fn image_and_cuda(request: &RentRequest) -> (&str, u32) {
    let image = request.image.as_deref().unwrap_or(DEFAULT_IMAGE);
    let cuda = BASE_IMAGES
        .iter()
        .find(|(id, _)| *id == image)
        .map_or(UNKNOWN_IMAGE_CUDA, |(_, cuda)| *cuda);
    (image, cuda)
}

/// Adds the renter's key to root's authorized keys at start, once however often it starts.
fn start_command(public_key: &str) -> String {
    let key = crate::shell::quote(public_key.trim());
    format!(
        "mkdir -p ~/.ssh && chmod 700 ~/.ssh && (grep -qxF {key} ~/.ssh/authorized_keys 2>/dev/null || echo {key} >> ~/.ssh/authorized_keys)"
    )
}

fn create_body(request: &RentRequest, spec: &SpecRequest) -> Value {
    let (image, cuda) = image_and_cuda(request);
    let mut body = json!({
        "req_gpu_amount": spec.count,
        "expand_system_disk_by_gb": request.disk_gb.unwrap_or(0),
        "gpu_spec_uuid": spec.spec,
        "image_uuid": image,
        "cuda_v_from": cuda,
        "instance_name": request.name,
    });
    if !spec.data_centres.is_empty() {
        body["data_center_list"] = json!(spec.data_centres);
    }
    if let Some(key) = &request.ssh_public_key {
        body["start_command"] = json!(start_command(key));
    }
    body
}

/// The create call; its answer's `data` is the new instance's uuid.
async fn create(api: &Api, request: &RentRequest, spec: &SpecRequest) -> Result<String, Sent> {
    let answer = send(api, Method::POST, CREATE, &create_body(request, spec)).await?;
    let code = answer
        .body
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("");
    let words = provider_words(&answer.body);
    if answer.accepted() && code == "Success" {
        let data = answer.body.get("data");
        // The documented answer is the uuid itself; some clients report an object holding it.
        let id = data
            .and_then(Value::as_str)
            .or_else(|| {
                data.and_then(|d| d.get("instance_uuid"))
                    .and_then(Value::as_str)
            })
            .and_then(remote::checked_id);
        return id.ok_or_else(|| Sent::Lost("an answer without the new instance's uuid".into()));
    }
    let refused = if words.contains("暂无库存") {
        MarketError::NoCapacity {
            provider: NAME,
            detail: words,
        }
    } else if code == "TORealName" {
        MarketError::CannotRent {
            provider: NAME,
            detail: format!(
                "AutoDL creates instances only for accounts with real-name verification (实名认证); finish it in AutoDL's console, then try again ({words})"
            ),
        }
    } else if answer.status == 401 || code.to_ascii_lowercase().contains("auth") {
        AccountError::KeyRefused {
            provider: NAME,
            detail: words,
        }
        .into()
    } else {
        AccountError::Refused {
            provider: NAME,
            status: answer.status,
            detail: if words.is_empty() {
                remote::clean_text(code, 60)
            } else {
                words
            },
        }
        .into()
    };
    Err(Sent::Refused(refused))
}

/// The new instance as its snapshot describes it, read until it names a price.
async fn priced(api: &Api, id: &str, now: DateTime<Utc>) -> Result<RemoteInstance, String> {
    let mut last = String::from("no price in its snapshot");
    for look in 0..PRICE_LOOKS {
        if look > 0 {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        match autodl::snapshot(api, id).await {
            Ok(snapshot) => {
                // The snapshot's status says whether it runs yet (a create starts it).
                let status = snapshot
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("starting");
                let mut instance =
                    autodl::parse_listed(&json!({ "uuid": id, "status": status }), now)?;
                autodl::apply_snapshot(&mut instance, &snapshot);
                if instance.price_per_hour.is_some() {
                    return Ok(instance);
                }
            }
            Err(err) => last = err.to_string(),
        }
    }
    Err(last)
}

/// Power it off, wait for AutoDL to say it is shut down, then release it.
async fn let_go(api: &Api, id: &str, now: DateTime<Utc>) -> Result<(), AccountError> {
    autodl::power(api, id, PowerVerb::Off).await?;
    let started = tokio::time::Instant::now();
    loop {
        match autodl::one(api, id, now).await? {
            None => return Ok(()),
            Some(seen) if seen.state == RemoteState::Stopped => break,
            Some(_) if started.elapsed() > SHUTDOWN_WAIT => {
                return Err(AccountError::ActionNotAllowed {
                    provider: NAME,
                    action: PowerVerb::Release.as_str(),
                    detail: format!("it was not shut down after {} s", SHUTDOWN_WAIT.as_secs()),
                })
            }
            Some(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
    autodl::power(api, id, PowerVerb::Release).await
}

/// The offer the ledger records: what the snapshot says, or the cap when it said no price.
fn as_offer(
    request: &RentRequest,
    spec: &SpecRequest,
    seen: Option<&RemoteInstance>,
    now: DateTime<Utc>,
) -> Offer {
    let price = seen
        .and_then(|s| s.price_per_hour)
        .unwrap_or(request.max_price_per_hour);
    let count = seen.map_or(spec.count, |s| s.gpu_count.max(1));
    let said = seen.and_then(|s| s.gpu_model.clone());
    let known = said.as_deref().and_then(crate::catalog::find_gpu);
    let gpu = match (known, said) {
        (Some(card), _) => card.name.clone(),
        (None, Some(said)) => said,
        (None, None) => format!("AutoDL {}", spec.spec),
    };
    Offer {
        provider: crate::account::Provider::Autodl,
        offer_id: request.offer_id.clone(),
        vram_gb: known
            .and_then(|card| card.memory_gb.as_ref())
            .map_or(0, |gb| gb.value.round() as u32),
        gpu,
        count,
        price_per_hour: price,
        price_per_gpu_hour: (price / Decimal::from(count)).round_dp(6).normalize(),
        currency: "CNY".into(),
        storage_per_gb_month: None,
        region: seen.and_then(|s| s.region.clone()),
        stock: Stock::Unknown,
        interruptible: false,
        min_bid: None,
        reliability: None,
        fetched_at: now,
        source: PriceSource::YourLastPrice,
    }
}

/// Create, price, hold to the cap, record; see the module doc.
pub(super) async fn rent(
    store: &Store,
    account: &AccountRef,
    api: &Api,
    request: &RentRequest,
    now: DateTime<Utc>,
) -> Result<Rented, MarketError> {
    let spec = parse_offer_id(&request.offer_id)?;
    let id = match create(api, request, &spec).await {
        Ok(id) => id,
        Err(Sent::Refused(err)) => return Err(err),
        Err(Sent::Lost(detail)) => {
            find_by_name(api, &request.name, now)
                .await
                .ok_or(MarketError::AnswerLost {
                    name: request.name.clone(),
                    detail,
                })?
                .remote_id
        }
    };
    let seen = priced(api, &id, now).await;
    let cap = request.max_price_per_hour;
    let held = match &seen {
        Ok(instance) => instance.price_per_hour.filter(|p| *p <= cap).is_some(),
        Err(_) => false,
    };
    let seen = seen.ok();
    let offer = as_offer(request, &spec, seen.as_ref(), now);
    let created = Created {
        remote_id: id.clone(),
        price_per_hour: Some(offer.price_per_hour),
        ssh: seen.as_ref().and_then(|s| s.ssh.clone()),
        running: seen
            .as_ref()
            .is_some_and(|s| s.state == RemoteState::Running),
    };
    if held {
        return record(store, account, request, &offer, created, now).await;
    }
    let price = seen
        .as_ref()
        .and_then(|s| s.price_per_hour)
        .map(|p| p.normalize().to_string());
    match let_go(api, &id, now).await {
        Ok(()) => Err(match price {
            Some(price) => MarketError::ReleasedAboveCap {
                provider: NAME,
                price,
                cap: cap.normalize().to_string(),
                currency: "CNY".into(),
            },
            None => MarketError::ReleasedPriceUnknown { provider: NAME },
        }),
        Err(err) => {
            record(store, account, request, &offer, created, now).await?;
            Err(MarketError::KeptAboveCap {
                name: request.name.clone(),
                detail: err.to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_specs_match_their_gpu_and_memory_only() {
        let specs = documented_specs();
        assert_eq!(specs.len(), SPECS.len());
        let v48 = specs.iter().find(|s| s.spec == "v-48g").unwrap();
        assert_eq!(spec_for(&v48.gpu, 48), Some("v-48g"));
        assert_eq!(
            spec_for(&v48.gpu, 24),
            None,
            "a stock 24 GB 4090 is not the 48 GB spec"
        );
        let h800 = specs.iter().find(|s| s.spec == "h800").unwrap();
        assert_eq!(spec_for(&h800.gpu, 80), Some("h800"));
        assert_eq!(spec_for("A100 nobody documents", 80), None);
    }

    #[test]
    fn offer_ids_read_spec_count_and_data_centres() {
        assert_eq!(
            parse_offer_id("v-48g").unwrap(),
            SpecRequest {
                spec: "v-48g".into(),
                count: 1,
                data_centres: vec![]
            }
        );
        assert_eq!(
            parse_offer_id("5090-p:2:westDC2,beijingDC2").unwrap(),
            SpecRequest {
                spec: "5090-p".into(),
                count: 2,
                data_centres: vec!["westDC2".into(), "beijingDC2".into()]
            }
        );
        for bad in [
            "",
            "v 48g",
            "v-48g:0",
            "v-48g:5",
            "v-48g:1:",
            "v-48g:1:west;rm",
            "$(x)",
        ] {
            assert!(parse_offer_id(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn the_key_reaches_the_start_command_as_one_quoted_word() {
        let hostile = "ssh-ed25519 AAAA me'; rm -rf / #";
        let command = start_command(hostile);
        let words = shlex::split(&command).expect("the command parses");
        assert!(
            words.iter().filter(|w| *w == hostile).count() == 2,
            "{command}"
        );
        assert!(!words.iter().any(|w| w == "rm"), "{command}");
    }

    #[test]
    fn documented_base_images_carry_their_cuda_and_others_the_floor() {
        let mut request = RentRequest {
            provider: crate::account::Provider::Autodl,
            offer_id: "v-48g".into(),
            name: "a".into(),
            max_price_per_hour: Decimal::ONE,
            disk_gb: None,
            image: Some("base-image-l374uiucui".into()),
            ssh_public_key: None,
        };
        assert_eq!(image_and_cuda(&request), ("base-image-l374uiucui", 113));
        request.image = Some("image-db8346e037".into());
        assert_eq!(image_and_cuda(&request).1, UNKNOWN_IMAGE_CUDA);
        request.image = None;
        assert_eq!(image_and_cuda(&request), (DEFAULT_IMAGE, 118));
        let body = create_body(&request, &parse_offer_id("v-48g:2").unwrap());
        assert_eq!(body["expand_system_disk_by_gb"], 0);
        assert_eq!(body["req_gpu_amount"], 2);
        assert!(body.get("data_center_list").is_none());
        assert!(body.get("start_command").is_none());
    }
}

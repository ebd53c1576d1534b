//! The recommender: which GPUs (single cards and 2/4/8-GPU machines) fit the estimate with
//! headroom, cheapest for the planned hours first when the user has entered prices, and the
//! warnings the seeds give (CPU/RAM to match, PCIe vs NVLink, Blackwell wheels, learning vs
//! production, try the flow on the cheapest instance first).
//!
//! Prices come only from the caller (what the user typed or paid before); nothing here knows a
//! provider's price list.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::estimate::{estimate, estimate_on, Estimate, EstimateRequest, Note, Task};
use super::gpus::{find_gpu, gpus, GpuClass, GpuSpec};
use super::CatalogError;
use crate::billing::report::InstanceSummary;
use crate::billing::{ledger, BillingError};
use crate::store::Store;

/// Below this much free memory a run is one long sequence away from OOM.
pub const MIN_HEADROOM_PCT: f64 = 5.0;
const GPU_COUNTS: [u32; 4] = [1, 2, 4, 8];

/// Where a price came from: typed in for this plan, or paid for an earlier rental.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PriceOrigin {
    #[default]
    Entered,
    EarlierRental,
}

/// A price the user entered (or paid for an earlier rental), per card per hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PriceEntry {
    /// Any spelling the catalog knows ("RTX 4090", "NVIDIA A100-SXM4-80GB").
    pub gpu: String,
    #[ts(type = "string")]
    pub price_per_hour: Decimal,
    pub currency: String,
    #[serde(default)]
    pub origin: PriceOrigin,
}

/// The prices paid for the rentals recorded in `store` (see [`prices_from_rentals`]): the
/// recommender's price list for the GPUs the user has typed no price for. The Choose GPU page and
/// `leasehold recommend` both read them here.
pub async fn earlier_prices(
    store: &Store,
    now: DateTime<Utc>,
) -> Result<Vec<PriceEntry>, BillingError> {
    Ok(prices_from_rentals(&ledger::list(store, now).await?))
}

/// The price paid per GPU-hour for each catalog GPU in the recorded rentals (newest rental
/// wins). Rentals of GPUs the catalog does not know are skipped.
pub fn prices_from_rentals(rentals: &[InstanceSummary]) -> Vec<PriceEntry> {
    let mut newest: Vec<(&str, &InstanceSummary)> = Vec::new();
    for rental in rentals {
        let Some(gpu) = find_gpu(&rental.gpu_model) else {
            continue;
        };
        match newest.iter_mut().find(|(id, _)| *id == gpu.id) {
            Some(slot) if slot.1.created_at <= rental.created_at => slot.1 = rental,
            Some(_) => {}
            None => newest.push((gpu.id.as_str(), rental)),
        }
    }
    // Oldest first, so the last entry is the most recent rental.
    newest.sort_by_key(|(_, rental)| rental.created_at);
    newest
        .into_iter()
        .map(|(_, rental)| PriceEntry {
            gpu: rental.gpu_model.clone(),
            price_per_hour: rental.price_per_gpu_hour,
            currency: rental.currency.code().to_owned(),
            origin: PriceOrigin::EarlierRental,
        })
        .collect()
}

/// Prices to rank by: everything entered, plus earlier rentals' prices for GPUs not entered and
/// in the same currency (the entered one, else the newest rental's), since plans in different
/// currencies cannot be compared.
pub fn merge_prices(entered: Vec<PriceEntry>, from_rentals: Vec<PriceEntry>) -> Vec<PriceEntry> {
    let currency = entered
        .first()
        .or_else(|| from_rentals.last())
        .map(|p| p.currency.clone());
    let entered_ids: Vec<Option<&str>> = entered
        .iter()
        .map(|p| find_gpu(&p.gpu).map(|g| g.id.as_str()))
        .collect();
    let extra: Vec<PriceEntry> = from_rentals
        .into_iter()
        .filter(|p| {
            currency
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(&p.currency))
        })
        .filter(|p| {
            let id = find_gpu(&p.gpu).map(|g| g.id.as_str());
            !entered_ids.contains(&id)
        })
        .collect();
    entered.into_iter().chain(extra).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RecommendRequest {
    pub estimate: EstimateRequest,
    /// Planned hours, for the plan cost.
    #[serde(default)]
    #[ts(type = "string | null", optional)]
    pub hours: Option<Decimal>,
    #[serde(default)]
    pub prices: Vec<PriceEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Candidate {
    /// The catalog name (what nvidia-smi prints).
    pub gpu: String,
    pub gpu_id: String,
    pub count: u32,
    /// Usable memory per card, GiB.
    pub vram_gib: f64,
    /// Estimated need per card, GiB.
    pub need_gib: f64,
    pub fits: bool,
    /// Free memory left per card, percent of the card (negative when it does not fit).
    pub headroom_pct: i32,
    pub class: GpuClass,
    #[ts(type = "string | null")]
    pub price_per_hour: Option<Decimal>,
    /// price per card per hour × count × hours.
    #[ts(type = "string | null")]
    pub plan_cost: Option<Decimal>,
    pub currency: Option<String>,
    /// Whether the price was entered for this plan or paid for an earlier rental.
    pub price_origin: Option<PriceOrigin>,
    pub fp16_tensor_tflops: Option<f64>,
    pub notes: Vec<Note>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Recommendation {
    /// Fitting options first (cheapest plan first when priced), then the cards that do not fit.
    pub candidates: Vec<Candidate>,
    /// The single-GPU estimate the candidates were measured against.
    pub estimate: Estimate,
    pub notes: Vec<Note>,
}

/// Rank the catalog's GPUs for a task.
pub fn recommend(request: &RecommendRequest) -> Result<Recommendation, CatalogError> {
    let single = estimate(&request.estimate)?;
    let prices = resolve_prices(&request.prices)?;
    let hours = match request.hours {
        Some(h) if h <= Decimal::ZERO => {
            return Err(CatalogError::InvalidInput(format!(
                "--hours must be more than zero, not {h}"
            )))
        }
        other => other,
    };

    // The need per GPU depends only on the count, not on the card.
    let needs = GPU_COUNTS
        .iter()
        .map(|&count| {
            if count == 1 {
                Ok((count, single.total_gib))
            } else {
                estimate_on(&request.estimate, count).map(|e| (count, e.total_gib))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;

    let mut candidates = Vec::new();
    for gpu in gpus() {
        let Some(vram) = gpu.usable_gib() else {
            continue;
        };
        let price = prices.iter().find(|(id, _)| *id == gpu.id).map(|(_, p)| p);
        let mut single_fits = false;
        for &(count, need) in &needs {
            let headroom = (vram - need) / vram * 100.0;
            let fits = headroom >= MIN_HEADROOM_PCT;
            if count == 1 {
                single_fits = fits;
            } else if single_fits || !fits {
                continue;
            }
            candidates.push(candidate(
                gpu,
                count,
                vram,
                need,
                headroom,
                fits,
                price,
                hours,
                &request.estimate,
            ));
            if count > 1 {
                break;
            }
        }
    }
    candidates.sort_by(compare);

    Ok(Recommendation {
        candidates,
        notes: global_notes(&request.prices, &request.estimate),
        estimate: single,
    })
}

fn resolve_prices(entries: &[PriceEntry]) -> Result<Vec<(String, PriceEntry)>, CatalogError> {
    let mut currency: Option<&str> = None;
    let mut resolved = Vec::new();
    for entry in entries {
        let gpu =
            find_gpu(&entry.gpu).ok_or_else(|| CatalogError::UnknownGpu(entry.gpu.clone()))?;
        if entry.price_per_hour < Decimal::ZERO {
            return Err(CatalogError::InvalidInput(format!(
                "the price for {} is negative ({})",
                entry.gpu, entry.price_per_hour
            )));
        }
        match currency {
            Some(c) if !c.eq_ignore_ascii_case(&entry.currency) => {
                return Err(CatalogError::InvalidInput(format!(
                    "prices must share one currency to be compared ({c} and {})",
                    entry.currency
                )))
            }
            _ => currency = Some(&entry.currency),
        }
        resolved.push((gpu.id.clone(), entry.clone()));
    }
    Ok(resolved)
}

#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename the arguments
fn candidate(
    gpu: &GpuSpec,
    count: u32,
    vram: f64,
    need: f64,
    headroom: f64,
    fits: bool,
    price: Option<&PriceEntry>,
    hours: Option<Decimal>,
    request: &EstimateRequest,
) -> Candidate {
    let plan_cost = match (price, hours) {
        (Some(p), Some(h)) => Some((p.price_per_hour * Decimal::from(count) * h).round_dp(2)),
        _ => None,
    };
    Candidate {
        gpu: gpu.name.clone(),
        gpu_id: gpu.id.clone(),
        count,
        vram_gib: (vram * 10.0).round() / 10.0,
        need_gib: (need * 10.0).round() / 10.0,
        fits,
        headroom_pct: headroom.floor().clamp(-1000.0, 100.0) as i32,
        class: gpu.class,
        price_per_hour: price.map(|p| p.price_per_hour),
        plan_cost,
        currency: price.map(|p| p.currency.clone()),
        price_origin: price.map(|p| p.origin),
        fp16_tensor_tflops: gpu.fp16_tensor_tflops.as_ref().map(|t| t.value),
        notes: candidate_notes(gpu, count, vram, fits, request),
    }
}

/// Fitting first; among them priced before unpriced, cheaper plans (or hourly cost) first;
/// then fewer GPUs, then the smallest card that fits (least paid-for idle memory), then
/// faster. Cards that do not fit follow, largest first.
fn compare(a: &Candidate, b: &Candidate) -> Ordering {
    b.fits
        .cmp(&a.fits)
        .then_with(|| {
            if !a.fits {
                return b
                    .vram_gib
                    .total_cmp(&a.vram_gib)
                    .then(a.count.cmp(&b.count));
            }
            let cost = |c: &Candidate| {
                c.plan_cost
                    .or_else(|| c.price_per_hour.map(|p| p * Decimal::from(c.count)))
            };
            match (cost(a), cost(b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
            .then(a.count.cmp(&b.count))
            .then(a.vram_gib.total_cmp(&b.vram_gib))
            .then(
                b.fp16_tensor_tflops
                    .unwrap_or(0.0)
                    .total_cmp(&a.fp16_tensor_tflops.unwrap_or(0.0)),
            )
        })
        .then_with(|| a.gpu_id.cmp(&b.gpu_id))
}

fn candidate_notes(
    gpu: &GpuSpec,
    count: u32,
    vram: f64,
    fits: bool,
    request: &EstimateRequest,
) -> Vec<Note> {
    let mut notes = Vec::new();
    let training = request.task.is_training();
    if !fits && count == 1 && training && !request.grad_checkpointing {
        let mut with_ckpt = request.clone();
        with_ckpt.grad_checkpointing = true;
        if let Ok(e) = estimate(&with_ckpt) {
            if (vram - e.total_gib) / vram * 100.0 >= MIN_HEADROOM_PCT {
                notes.push(Note::new(
                    "recommend.fits_with_checkpointing",
                    format!(
                        "Fits with gradient checkpointing (≈ {:.1} GiB).",
                        e.total_gib
                    ),
                    format!("开启梯度检查点后可放下（约 {:.1} GiB）。", e.total_gib),
                ));
            }
        }
    }
    if count > 1 {
        if training && !gpu.has_nvlink() {
            notes.push(Note::new(
                "recommend.pcie_multi_gpu",
                format!(
                    "{count}× {} talk over PCIe, not NVLink: gradient synchronisation is roughly ten times slower than on NVLink A100s. Eight 4090s fine-tuning LLaMA spend 30–40 % of the time communicating (under 10 % on NVLink A100). LoRA syncs little and suffers less.",
                    gpu.name
                ),
                format!(
                    "{count} 张 {} 之间走 PCIe 而非 NVLink：梯度同步约比 NVLink 的 A100 慢一个数量级。8 张 4090 微调 LLaMA 时通信要占 30–40% 的时间（NVLink A100 不到 10%）。LoRA 同步量小，影响较轻。",
                    gpu.name
                ),
            ));
        }
        notes.push(Note::new(
            "recommend.use_all_gpus",
            "Frameworks use only GPU 0 unless told otherwise: use tensor parallelism (vLLM --tensor-parallel-size) for inference, DDP/FSDP/DeepSpeed for training; CUDA_VISIBLE_DEVICES picks the cards.",
            "框架默认只用 0 号卡：推理要开张量并行（如 vLLM --tensor-parallel-size），训练用 DDP/FSDP/DeepSpeed；用 CUDA_VISIBLE_DEVICES 指定用哪几张卡。",
        ));
    }
    if gpu.is_blackwell() {
        notes.push(Note::new(
            "recommend.blackwell_wheels",
            "Blackwell: needs PyTorch 2.7 or newer with cu128 (or later) wheels and a 570+ driver; older images fail with \"no kernel image is available\".",
            "Blackwell 架构：需要 PyTorch 2.7 及以上、cu128 或更新的 wheel，以及 570 以上驱动；旧镜像会报 \"no kernel image is available\"。",
        ));
    }
    if gpu
        .compute_capability()
        .is_some_and(|cc| cc.major == 7 && cc.minor == 0)
    {
        notes.push(Note::new(
            "recommend.volta_wheels",
            "Volta (V100): the cu130 PyTorch wheels dropped it; install cu126 or cu128 wheels.",
            "Volta（V100）：cu130 的 PyTorch wheel 已不再支持，请安装 cu126 或 cu128 版本。",
        ));
    }
    let cores = count * if training { 8 } else { 4 };
    let ram_gb = ((vram * f64::from(count)).ceil() as u32).max(16);
    notes.push(Note::new(
        "recommend.cpu_ram",
        format!(
            "Ask for at least {cores} CPU cores and {ram_gb} GB of RAM with it (rule of thumb): a strong GPU with 4 cores and 16 GB of RAM waits on data loading."
        ),
        format!(
            "建议同时配至少 {cores} 个 CPU 核、{ram_gb} GB 内存（经验值）：强卡只配 4 核 16 GB 内存时，GPU 会一直等数据。"
        ),
    ));
    match gpu.class {
        GpuClass::Consumer => notes.push(Note::new(
            "recommend.consumer",
            "Consumer card: good value for learning and experiments; rebuilding a broken environment is cheap.",
            "消费级显卡：适合学习和实验，性价比高，环境弄坏了重建也便宜。",
        )),
        GpuClass::Datacenter | GpuClass::Workstation => notes.push(Note::new(
            "recommend.production",
            "For production: record the instance spec and image, keep code and data off the instance, snapshot before long runs.",
            "用于生产时：记录实例规格和镜像，代码和数据不要只放在实例上，长任务前先打快照。",
        )),
    }
    notes
}

fn global_notes(prices: &[PriceEntry], request: &EstimateRequest) -> Vec<Note> {
    let mut notes = vec![Note::new(
        "recommend.cheapest_first",
        "Try the whole flow (boot, environment, a tiny model) on the cheapest instance first, then move to the big card.",
        "先在最便宜的实例上把完整流程（开机、装环境、跑一个小模型）走通，再换大卡。",
    )];
    if prices.is_empty() {
        notes.push(Note::new(
            "recommend.no_prices",
            "No prices entered: ranked by fit and speed only. Enter the hourly price from your provider's console to rank by cost.",
            "没有录入价格：只按能否放下和算力排序。录入平台控制台上的小时单价后可按费用排序。",
        ));
    } else {
        notes.push(Note::new(
            "recommend.prices_are_yours",
            "Prices are the ones you entered or paid for earlier rentals; GPUs without a price are listed after the priced ones.",
            "价格来自你录入的数据或以前租用时的单价；没有价格的显卡排在有价格的之后。",
        ));
    }
    if request.task == Task::Full {
        notes.push(Note::new(
            "recommend.consider_lora",
            "A full fine-tune needs weights + gradients + optimizer states; LoRA usually needs a third to a fifth of the memory.",
            "全参数微调要放下权重、梯度和优化器状态；LoRA 通常只需其 1/3 到 1/5 的显存。",
        ));
    }
    notes
}

#[cfg(test)]
#[path = "recommend_tests.rs"]
mod tests;

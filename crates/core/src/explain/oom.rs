//! CUDA out of memory: the numbers in PyTorch's message (both formats it has printed), what
//! they say about the cause, and — when the instance's planned task is known — what the
//! estimator says the job and each remedy need.
//!
//! Half of all OOMs are waste, not a card too small: memory held by another process or a
//! zombie, or memory PyTorch reserved but cannot hand out in one piece (fragmentation). Only
//! when neither explains the failure is the job itself too big.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::remedy::{self, RemedyPlan};
use super::scan::{clean, Scan, Signal};
use super::ExplainContext;
use crate::catalog::recommend::MIN_HEADROOM_PCT;
use crate::catalog::{
    estimate, find_gpu, find_gpu_with_memory, gpus, EstimateRequest, Precision, Task,
};
use crate::diagnose::text::{draft, Draft};
use crate::diagnose::{Finding, Severity};

/// Which PyTorch message the numbers came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum OomFormat {
    /// "(GPU 0; X total capacity; Y already allocated; Z free; W reserved in total by PyTorch)"
    Old,
    /// "GPU 0 has a total capacity of X of which Z is free. Process N has … Of the allocated
    /// memory Y is allocated by PyTorch, and R is reserved by PyTorch but unallocated."
    New,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum OomCause {
    /// Memory held by other processes (or zombies): free it and the job may fit.
    OtherProcesses,
    /// PyTorch holds enough free memory, but not in one piece.
    Fragmentation,
    /// The job needs more than the card has.
    TooBig,
}

/// The numbers of a CUDA OOM message, in MiB (GiB × 1024).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct OomReport {
    pub format: OomFormat,
    /// What the failing allocation asked for.
    pub tried_mib: f64,
    /// The card's memory as CUDA reports it.
    pub total_mib: f64,
    /// What the driver had free at that moment.
    pub free_mib: f64,
    /// What PyTorch's tensors held.
    pub allocated_mib: Option<f64>,
    /// What PyTorch's allocator held in all (allocated plus cached but unallocated).
    pub reserved_mib: Option<f64>,
    /// Memory in use outside this process's PyTorch allocator: other processes (named in the
    /// new format), or what is left of the card after free and reserved.
    pub other_processes_mib: f64,
    pub cause: OomCause,
}

impl OomReport {
    /// Reserved by PyTorch but not allocated to a tensor (what fragmentation wastes).
    pub fn unallocated_mib(&self) -> f64 {
        match (self.reserved_mib, self.allocated_mib) {
            (Some(r), Some(a)) => (r - a).max(0.0),
            _ => 0.0,
        }
    }
}

/// The estimator's view of an OOM whose job is too big: what the planned setting needs, what
/// each remedy would need, and which cards fit as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PlanFigures {
    pub setting: EstimateRequest,
    pub params_b: f64,
    /// GiB the current setting needs per GPU.
    pub need_gib: f64,
    /// The card's usable memory, GiB, when known.
    pub card_gib: Option<f64>,
    /// The card's name, when known.
    pub card: Option<String>,
    pub remedies: Vec<RemedyFigure>,
    /// The cheapest combination of remedies that fits the card ([`super::remedy::search`]), or
    /// the one that comes closest (`fits: false`); `null` when the card is unknown.
    pub best: Option<RemedyPlan>,
    /// What the run had in use when it failed plus what it asked for, GiB: the least it needs
    /// (it may have needed more later in the step). `None` when the message gives no total.
    pub measured_gib: Option<f64>,
    /// Where the estimate and the measurement part ways, said plainly: the figures below come
    /// from the estimator and are only as good as the plan it was given.
    pub disagreement: Option<Disagreement>,
    /// With [`Disagreement::EstimateAboveMeasurement`]: the cheapest change that fits the
    /// measurement (the estimator's ratios scaled to what the run used), tried before the
    /// estimate's bigger cut in `best`. Its `need_gib` is scaled the same way.
    pub measured_step: Option<RemedyPlan>,
    /// Single cards from the catalog with room for the current setting, smallest first.
    pub cards_that_fit: Vec<String>,
    /// The same cards with what they cost: what this user paid, and the market's cheapest offer.
    pub bigger_cards: Vec<BiggerCard>,
}

/// How the estimate and the failed run disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Disagreement {
    /// The estimate says the setting fits the card, yet it ran out: the run is not what was
    /// planned (a bigger batch, longer sequences) or something else holds memory.
    RanOutThoughEstimateFits,
    /// The estimate needs far more than the run had reached when it failed (over
    /// [`ESTIMATE_ABOVE_RATIO`] times): the plan overstates the job, or the run failed early.
    EstimateAboveMeasurement,
}

/// The estimate is "far above" the measurement from this ratio on: the estimator's own spread
/// over real runs stays inside it.
pub const ESTIMATE_ABOVE_RATIO: f64 = 1.3;

/// A card with room for the setting as it is, and what it costs: what the user paid for it
/// before, and the cheapest on-demand offer the market refresh kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BiggerCard {
    pub name: String,
    #[ts(type = "string | null")]
    pub price_per_hour: Option<rust_decimal::Decimal>,
    pub currency: Option<String>,
    #[ts(type = "string | null")]
    pub market_price_per_gpu_hour: Option<rust_decimal::Decimal>,
    pub market_currency: Option<String>,
    pub market_provider: Option<crate::account::Provider>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RemedyFigure {
    /// Stable code: `halve_batch`, `grad_checkpointing`, `lower_precision`, `shorter_context`,
    /// `lora_instead_of_full`, `qlora_instead_of_lora`.
    pub remedy: String,
    /// What changes, in the context's language ("batch 8 → 4").
    pub label: String,
    pub need_gib: f64,
    /// Whether it fits the card (with the estimator's headroom); `None` when the card is unknown.
    pub fits: Option<bool>,
}

// "Other processes" must be more than a CUDA context and library workspaces (0.3–1.5 GiB).
const OTHER_MIN_MIB: f64 = 1536.0;
const OTHER_MIN_SHARE: f64 = 0.15;
// Cached-but-unallocated memory is "large" from this share of the card on.
const FRAGMENT_MIN_SHARE: f64 = 0.05;
const FRAGMENT_MIN_MIB: f64 = 512.0;

const SIZE: &str = r"(\d+(?:\.\d+)?)\s*(bytes|B|KiB|MiB|GiB|TiB)";

fn re(pattern: &str) -> Regex {
    Regex::new(&pattern.replace("SIZE", SIZE)).expect("valid regex")
}

static TRIED: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)Tried to allocate SIZE"));
static OLD_TOTAL: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)SIZE total capacity"));
static OLD_ALLOCATED: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)SIZE already allocated"));
static OLD_FREE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)SIZE free\b"));
static OLD_RESERVED: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)SIZE reserved in total by PyTorch"));
static OLD_CACHED: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)SIZE cached"));
static NEW_TOTAL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)has a total capac?i?ty of SIZE of which SIZE is free"));
static NEW_PROCESS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)Process (\d+) has SIZE memory in use"));
static NEW_THIS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)this process has SIZE memory in use"));
static NEW_ALLOCATED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)Of the allocated memory SIZE is allocated by PyTorch,.{0,120}?SIZE is reserved by PyTorch but unallocated",
    )
});

fn mib(value: &str, unit: &str) -> Option<f64> {
    let number: f64 = value.parse().ok()?;
    let factor = match unit {
        "bytes" | "B" => 1.0 / (1024.0 * 1024.0),
        "KiB" => 1.0 / 1024.0,
        "MiB" => 1.0,
        "GiB" => 1024.0,
        "TiB" => 1024.0 * 1024.0,
        _ => return None,
    };
    Some(round2(number * factor))
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

fn size_at(regex: &Regex, text: &str, group: usize) -> Option<f64> {
    let caps = regex.captures(text)?;
    mib(caps.get(group)?.as_str(), caps.get(group + 1)?.as_str())
}

/// Other processes named in the new format: (pid, MiB).
fn other_processes(text: &str) -> Vec<(u32, f64)> {
    NEW_PROCESS
        .captures_iter(text)
        .filter_map(|c| {
            let pid = c.get(1)?.as_str().parse().ok()?;
            Some((pid, mib(c.get(2)?.as_str(), c.get(3)?.as_str())?))
        })
        .collect()
}

/// The numbers of one OOM message (the message may be wrapped over a few lines).
pub(super) fn parse(message: &str) -> Option<OomReport> {
    let tried = size_at(&TRIED, message, 1)?;
    if let Some(caps) = NEW_TOTAL.captures(message) {
        let total = mib(caps.get(1)?.as_str(), caps.get(2)?.as_str())?;
        let free = mib(caps.get(3)?.as_str(), caps.get(4)?.as_str())?;
        let (allocated, reserved) = match NEW_ALLOCATED.captures(message) {
            Some(c) => {
                let allocated = mib(c.get(1)?.as_str(), c.get(2)?.as_str())?;
                let unallocated = mib(c.get(3)?.as_str(), c.get(4)?.as_str())?;
                (Some(allocated), Some(round2(allocated + unallocated)))
            }
            None => (None, None),
        };
        let named: f64 = other_processes(message).iter().map(|(_, m)| m).sum();
        let this = size_at(&NEW_THIS, message, 1);
        let other = if named > 0.0 {
            named
        } else if let Some(this) = this {
            (total - free - this).max(0.0)
        } else {
            (total - free - reserved.unwrap_or(0.0)).max(0.0)
        };
        return Some(with_cause(OomReport {
            format: OomFormat::New,
            tried_mib: tried,
            total_mib: total,
            free_mib: free,
            allocated_mib: allocated,
            reserved_mib: reserved,
            other_processes_mib: round2(other),
            cause: OomCause::TooBig,
        }));
    }
    let total = size_at(&OLD_TOTAL, message, 1)?;
    let free = size_at(&OLD_FREE, message, 1)?;
    let allocated = size_at(&OLD_ALLOCATED, message, 1);
    // Before PyTorch 1.4 the last figure was "cached": the allocator's unallocated part only.
    let reserved = size_at(&OLD_RESERVED, message, 1).or_else(|| {
        size_at(&OLD_CACHED, message, 1).map(|cached| round2(cached + allocated.unwrap_or(0.0)))
    });
    let other = (total - free - reserved.or(allocated).unwrap_or(0.0)).max(0.0);
    Some(with_cause(OomReport {
        format: OomFormat::Old,
        tried_mib: tried,
        total_mib: total,
        free_mib: free,
        allocated_mib: allocated,
        reserved_mib: reserved,
        other_processes_mib: round2(other),
        cause: OomCause::TooBig,
    }))
}

fn with_cause(mut report: OomReport) -> OomReport {
    let unallocated = report.unallocated_mib();
    report.cause = if report.tried_mib > report.total_mib {
        OomCause::TooBig
    } else if report.other_processes_mib >= OTHER_MIN_MIB.max(report.total_mib * OTHER_MIN_SHARE) {
        OomCause::OtherProcesses
    } else if unallocated >= report.tried_mib
        && unallocated >= FRAGMENT_MIN_MIB.max(report.total_mib * FRAGMENT_MIN_SHARE)
    {
        OomCause::Fragmentation
    } else {
        OomCause::TooBig
    };
    report
}

fn gib(mib: f64) -> String {
    if mib >= 1024.0 {
        format!("{:.2} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

/// The OOM finding (if the text shows one), its numbers and, for a job too big, the plan's
/// figures.
pub(super) fn explain_oom(
    scan: &Scan<'_>,
    context: &ExplainContext,
) -> (Option<OomReport>, Option<PlanFigures>, Vec<Finding>) {
    if !scan.has(Signal::CudaOom) {
        return (None, None, Vec::new());
    }
    // The last OOM is the one that ended the run; earlier ones may have been retried.
    let spans = scan.spans(Signal::CudaOom);
    let parsed = spans.iter().rev().find_map(|&span| {
        let message = scan.with_following(span, 4);
        parse(&message).map(|report| (report, message))
    });
    let evidence: Vec<String> = match &parsed {
        Some((_, message)) => vec![clean(message)],
        None => spans
            .iter()
            .rev()
            .take(2)
            .map(|&s| clean(scan.raw(s)))
            .collect(),
    };
    let (report, message) = match parsed {
        Some((report, message)) => (Some(report), message),
        None => (None, String::new()),
    };
    let plan = report
        .as_ref()
        .filter(|r| r.cause == OomCause::TooBig)
        .and_then(|r| plan_figures(r, context));
    let finding = finding(
        report.as_ref(),
        plan.as_ref(),
        &message,
        evidence,
        scan,
        context,
    );
    (report, plan, vec![finding])
}

/// What the card offers, GiB: the OOM's own total, else the facts, else the catalog.
fn card(report: &OomReport, context: &ExplainContext) -> (Option<f64>, Option<String>) {
    let facts_gpu = context
        .facts
        .as_ref()
        .and_then(|f| f.gpu.as_ref())
        .and_then(|g| g.nvidia_smi.gpus.first());
    let name = facts_gpu
        .and_then(|g| g.name.clone())
        .or_else(|| context.gpu_model.clone());
    let total = if report.total_mib > 0.0 {
        Some(report.total_mib / 1024.0)
    } else {
        facts_gpu
            .and_then(|g| g.memory_total_mib)
            .map(|m| f64::from(m) / 1024.0)
            .or_else(|| {
                name.as_deref()
                    .and_then(|n| find_gpu_with_memory(n, None))
                    .and_then(|spec| spec.usable_gib())
            })
    };
    (total, name)
}

fn fits(need_gib: f64, card_gib: Option<f64>) -> Option<bool> {
    card_gib.map(|card| need_gib <= card * (1.0 - MIN_HEADROOM_PCT / 100.0))
}

fn plan_figures(report: &OomReport, context: &ExplainContext) -> Option<PlanFigures> {
    let plan = context.plan.as_ref()?;
    let current = estimate(plan).ok()?;
    let (card_gib, card) = card(report, context);
    let lang = context.lang;
    let mut remedies = Vec::new();
    let mut add = |code: &str, label: String, request: EstimateRequest| {
        if let Ok(e) = estimate(&request) {
            remedies.push(RemedyFigure {
                remedy: code.to_owned(),
                label,
                need_gib: round2(e.total_gib),
                fits: fits(e.total_gib, card_gib),
            });
        }
    };
    let training = plan.task.is_training();
    if plan.batch > 1 {
        let half = plan.batch / 2;
        let label = if training {
            lang.pick(
                format!("batch {} → {half}，梯度累积 ×2", plan.batch),
                format!("batch {} → {half}, gradient accumulation ×2", plan.batch),
            )
        } else {
            format!("batch {} → {half}", plan.batch)
        };
        add(
            "halve_batch",
            label,
            EstimateRequest {
                batch: half,
                ..plan.clone()
            },
        );
    }
    if training && !plan.grad_checkpointing {
        add(
            "grad_checkpointing",
            lang.pick("开启梯度检查点", "gradient checkpointing on"),
            EstimateRequest {
                grad_checkpointing: true,
                ..plan.clone()
            },
        );
    }
    let lower = match (plan.task, plan.precision) {
        (_, Precision::Fp32) => Some(Precision::Bf16),
        (Task::Inference, Precision::Fp16 | Precision::Bf16) => Some(Precision::Int8),
        (Task::Inference, Precision::Int8) => Some(Precision::Int4),
        _ => None,
    };
    if let Some(lower) = lower {
        add(
            "lower_precision",
            format!("{} → {lower}", plan.precision),
            EstimateRequest {
                precision: lower,
                ..plan.clone()
            },
        );
    }
    if plan.context >= 1024 {
        let half = plan.context / 2;
        add(
            "shorter_context",
            lang.pick(
                format!("序列长度 {} → {half}", plan.context),
                format!("sequence length {} → {half}", plan.context),
            ),
            EstimateRequest {
                context: half,
                ..plan.clone()
            },
        );
    }
    match plan.task {
        Task::Full => add(
            "lora_instead_of_full",
            lang.pick("全参微调 → LoRA", "full fine-tune → LoRA"),
            EstimateRequest {
                task: Task::Lora,
                ..plan.clone()
            },
        ),
        Task::Lora => add(
            "qlora_instead_of_lora",
            lang.pick("LoRA → QLoRA（4-bit 底座）", "LoRA → QLoRA (4-bit base)"),
            EstimateRequest {
                task: Task::Qlora,
                precision: Precision::Bf16,
                ..plan.clone()
            },
        ),
        _ => {}
    }
    let need = current.total_gib;
    let mut fitting: Vec<(f64, String)> = gpus()
        .iter()
        .filter_map(|g| g.usable_gib().map(|m| (m, g.name.clone())))
        .filter(|(memory, _)| fits(need, Some(*memory)) == Some(true))
        .collect();
    fitting.sort_by(|a, b| a.0.total_cmp(&b.0));
    fitting.dedup_by(|a, b| a.1 == b.1);
    let cards_that_fit: Vec<String> = fitting.into_iter().take(3).map(|(_, n)| n).collect();
    let bigger_cards = cards_that_fit
        .iter()
        .map(|name| {
            let paid = find_gpu(name).and_then(|gpu| {
                context
                    .prices
                    .iter()
                    .rev()
                    .find(|p| find_gpu(&p.gpu).is_some_and(|g| g.id == gpu.id))
            });
            let offer = cheapest_offer(name, &context.offers);
            BiggerCard {
                name: name.clone(),
                price_per_hour: paid.map(|p| p.price_per_hour),
                currency: paid.map(|p| p.currency.clone()),
                market_price_per_gpu_hour: offer.map(|o| o.price_per_gpu_hour),
                market_currency: offer.map(|o| o.currency.clone()),
                market_provider: offer.map(|o| o.provider),
            }
        })
        .collect();
    let usable = card_gib.map(|card| card * (1.0 - MIN_HEADROOM_PCT / 100.0));
    let measured_gib = measured_gib(report);
    let disagreement = if fits(need, card_gib) == Some(true) {
        Some(Disagreement::RanOutThoughEstimateFits)
    } else {
        measured_gib
            .filter(|&measured| need > measured * ESTIMATE_ABOVE_RATIO)
            .map(|_| Disagreement::EstimateAboveMeasurement)
    };
    let measured_step = match (disagreement, measured_gib, usable) {
        (Some(Disagreement::EstimateAboveMeasurement), Some(measured), Some(usable)) => {
            step_for_measurement(plan, need, measured, usable, lang)
        }
        _ => None,
    };
    Some(PlanFigures {
        setting: plan.clone(),
        params_b: current.params_b,
        need_gib: round2(need),
        card_gib: card_gib.map(round2),
        card,
        remedies,
        best: usable.and_then(|usable| remedy::search(plan, usable, lang)),
        measured_gib: measured_gib.map(round2),
        disagreement,
        measured_step,
        cards_that_fit,
        bigger_cards,
    })
}

/// In use when the run failed plus the request that failed, GiB.
fn measured_gib(report: &OomReport) -> Option<f64> {
    (report.total_mib > 0.0 && report.free_mib >= 0.0)
        .then(|| (report.total_mib - report.free_mib + report.tried_mib) / 1024.0)
}

/// The cheapest change that fits what the run measured. The estimator is trusted for ratios
/// (halving the batch saves the same share of memory) but not for the level, so the search
/// aims at the card's room as the estimator sees it: `usable × estimate / measured`.
fn step_for_measurement(
    plan: &EstimateRequest,
    estimate_gib: f64,
    measured_gib: f64,
    usable_gib: f64,
    lang: crate::diagnose::Lang,
) -> Option<RemedyPlan> {
    let scale = measured_gib / estimate_gib;
    let mut step = remedy::search(plan, usable_gib / scale, lang)?;
    step.need_gib = round2(step.need_gib * scale);
    step.fits = step.need_gib <= usable_gib;
    Some(step)
}

/// The cheapest on-demand, in-stock offer for `card` among the market's kept offers.
fn cheapest_offer<'a>(
    card: &str,
    offers: &'a [crate::market::Offer],
) -> Option<&'a crate::market::Offer> {
    offers
        .iter()
        .filter(|o| !o.interruptible && o.stock.in_stock())
        .filter(|o| o.source == crate::market::PriceSource::Catalog)
        .filter(|o| crate::market::filter::same_gpu(card, o))
        .min_by(|a, b| crate::market::filter::cheapest_in_any_currency(a, b))
}

fn title(report: Option<&OomReport>) -> (&'static str, &'static str) {
    match report.map(|r| r.cause) {
        Some(OomCause::OtherProcesses) => (
            "显存不足：大部分显存被别的进程占着",
            "CUDA out of memory: most of the card is held by other processes",
        ),
        Some(OomCause::Fragmentation) => (
            "显存不足：PyTorch 手里有空闲显存，但碎成了小块",
            "CUDA out of memory: PyTorch holds free memory, but in pieces too small",
        ),
        Some(OomCause::TooBig) => (
            "显存不足：这个任务本身需要的显存超过了这张卡",
            "CUDA out of memory: the job itself needs more than this card has",
        ),
        None => ("CUDA 显存不足（out of memory）", "CUDA out of memory"),
    }
}

fn finding(
    report: Option<&OomReport>,
    plan: Option<&PlanFigures>,
    message: &str,
    evidence: Vec<String>,
    scan: &Scan<'_>,
    context: &ExplainContext,
) -> Finding {
    let lang = context.lang;
    let (zh, en) = title(report);
    let mut d = draft(lang, "oom.cuda", Severity::Error).title(zh, en);
    d = match report {
        Some(r) => {
            let numbers_zh = format!(
                "这张卡共 {}，出错时空闲 {}，PyTorch 已分配 {}、共占用 {}，其他进程占用约 {}；这次想再申请 {}。",
                gib(r.total_mib),
                gib(r.free_mib),
                r.allocated_mib.map_or("?".into(), gib),
                r.reserved_mib.map_or("?".into(), gib),
                gib(r.other_processes_mib),
                gib(r.tried_mib)
            );
            let numbers_en = format!(
                "The card has {} in all; {} was free. PyTorch had {} allocated and {} reserved; other processes held about {}. The failing request was for {}.",
                gib(r.total_mib),
                gib(r.free_mib),
                r.allocated_mib.map_or("?".into(), gib),
                r.reserved_mib.map_or("?".into(), gib),
                gib(r.other_processes_mib),
                gib(r.tried_mib)
            );
            let (why_zh, why_en) = match r.cause {
                OomCause::OtherProcesses => (
                    "别的进程（你之前没结束的任务、僵尸进程或别的容器）占了这张卡的一大块。先把它们清掉再跑，很可能就够了，不必换卡。".to_owned(),
                    "Other processes (a job you did not stop, a zombie, or another container) hold a large part of the card. Free that memory first; the job may well fit without a bigger card.".to_owned(),
                ),
                OomCause::Fragmentation => (
                    format!("PyTorch 缓存里有 {} 没有分给任何张量，比这次申请的还多，但不是连续的一块。这是显存碎片，换分配策略即可，不必减小任务。", gib(r.unallocated_mib())),
                    format!("PyTorch's cache holds {} not given to any tensor, more than this request, but not in one piece. That is fragmentation: change the allocator's strategy rather than the job.", gib(r.unallocated_mib())),
                ),
                OomCause::TooBig => (
                    format!("显存几乎都被这个任务自己用掉了，它至少需要 {}。按下面的顺序减小显存占用，或换显存更大的卡。", gib(r.reserved_mib.unwrap_or(0.0) + r.tried_mib)),
                    format!("The job itself uses nearly all of the card and needs at least {}. Cut its memory in the order below, or use a card with more memory.", gib(r.reserved_mib.unwrap_or(0.0) + r.tried_mib)),
                ),
            };
            d.detail(format!("{numbers_zh}{why_zh}"), format!("{numbers_en} {why_en}"))
        }
        None => d.detail(
            "GPU 显存不够这次分配。报错里没有各部分的数字，先看是不是别的进程占着显存，再按下面的顺序减小任务。",
            "The GPU had no room for an allocation. The message carries no figures, so first check whether other processes hold memory, then shrink the job in the order below.",
        ),
    };
    d = match report.map(|r| r.cause) {
        Some(OomCause::OtherProcesses) => other_steps(d, message, context),
        Some(OomCause::Fragmentation) => fragmentation_steps(d, message, scan),
        Some(OomCause::TooBig) => too_big_steps(d, plan, context),
        None => too_big_steps(other_steps(d, message, context), None, context),
    };
    d.evidence_all(evidence).build()
}

fn other_steps(d: Draft, message: &str, context: &ExplainContext) -> Draft {
    let mut pids: Vec<String> = other_processes(message)
        .iter()
        .map(|(pid, _)| pid.to_string())
        .collect();
    // Verify saw the processes too: name them, and say when they cannot be ended from here.
    let facts_gpu = context.facts.as_ref().and_then(|f| f.gpu.as_ref());
    let invisible = facts_gpu.is_some_and(|g| {
        !g.nvidia_smi.processes.is_empty()
            && g.nvidia_smi.processes.iter().all(|p| {
                g.process_states
                    .iter()
                    .any(|s| s.pid == p.pid && (!s.visible || s.state.as_deref() == Some("Z")))
            })
    });
    if pids.is_empty() {
        if let Some(g) = facts_gpu {
            pids = g
                .nvidia_smi
                .processes
                .iter()
                .map(|p| p.pid.to_string())
                .collect();
        }
    }
    d.run(
        "列出占用显存的进程：",
        "List the processes holding GPU memory:",
        "nvidia-smi --query-compute-apps=pid,used_memory,process_name --format=csv",
    )
    .when(!pids.is_empty() && !invisible, |d| {
        d.run(
            "确认是自己不再需要的进程后结束它们：",
            "If they are yours and no longer needed, end them:",
            format!("kill -9 {}", pids.join(" ")),
        )
    })
    .when(pids.is_empty(), |d| {
        d.run("确认后结束不需要的进程：", "End the ones you no longer need:", "kill -9 PID")
    })
    .step(
        "容器里看不到的进程（僵尸或别的容器）无法从内部结束：在控制台重启实例；仍被占用就联系平台。",
        "Processes you cannot see from inside the container (zombies, other containers) cannot be ended here: restart the instance from the console, and contact the provider if the memory stays taken.",
    )
}

fn fragmentation_steps(d: Draft, message: &str, scan: &Scan<'_>) -> Draft {
    // PyTorch names the setting its release understands; expandable segments came in 2.1.
    let old_release = message.contains("max_split_size_mb")
        || (!message.contains("expandable_segments") && scan.text.contains("max_split_size_mb"));
    let d = if old_release {
        d.run(
            "这个 PyTorch 版本较旧：限制缓存块的切分大小后重跑：",
            "This PyTorch release is older: cap the size of split cache blocks and run again:",
            "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128",
        )
    } else {
        d.run(
            "让分配器使用可扩展的显存段（PyTorch 2.1 及以上），再重跑：",
            "Let the allocator use expandable segments (PyTorch 2.1 and later), then run again:",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        )
    };
    d.step(
        "训练循环里不要长期保留不再需要的张量（例如累加 loss 时用 loss.item()），减少碎片。",
        "Do not keep tensors you no longer need across steps (accumulate loss.item(), not the loss tensor); that leaves fewer holes.",
    )
}

fn labels(plan: &RemedyPlan, separator: &str) -> String {
    plan.changes
        .iter()
        .map(|c| c.label.as_str())
        .collect::<Vec<_>>()
        .join(separator)
}

fn too_big_steps(d: Draft, plan: Option<&PlanFigures>, context: &ExplainContext) -> Draft {
    let lang = context.lang;
    let figure = |code: &str| -> (String, String) {
        let Some(r) = plan.and_then(|p| p.remedies.iter().find(|r| r.remedy == code)) else {
            return (String::new(), String::new());
        };
        let verdict_zh = match r.fits {
            Some(true) => "，放得下",
            Some(false) => "，仍放不下",
            None => "",
        };
        let verdict_en = match r.fits {
            Some(true) => ", fits",
            Some(false) => ", still too big",
            None => "",
        };
        (
            format!(
                "（估算：{}，约 {:.1} GiB{verdict_zh}）",
                r.label, r.need_gib
            ),
            format!(
                " (estimate: {}, about {:.1} GiB{verdict_en})",
                r.label, r.need_gib
            ),
        )
    };
    let mut d = d;
    if let Some(p) = plan {
        let card = p.card_gib.map_or(String::new(), |c| format!("{c:.1} GiB"));
        d = d.step(
            format!(
                "按你计划的任务（{:.1}B，{}，{}，上下文 {}，batch {}），估算需要约 {:.1} GiB{}。",
                p.params_b,
                task_name(p.setting.task, lang),
                p.setting.precision,
                p.setting.context,
                p.setting.batch,
                p.need_gib,
                if card.is_empty() { String::new() } else { format!("，这张卡可用 {card}") }
            ),
            format!(
                "For your planned task ({:.1}B, {}, {}, context {}, batch {}) the estimator puts the need at about {:.1} GiB{}.",
                p.params_b,
                task_name(p.setting.task, lang),
                p.setting.precision,
                p.setting.context,
                p.setting.batch,
                p.need_gib,
                if card.is_empty() { String::new() } else { format!("; this card offers {card}") }
            ),
        );
    }
    if let Some(p) = plan.filter(|p| p.disagreement == Some(Disagreement::EstimateAboveMeasurement))
    {
        let measured = p.measured_gib.unwrap_or_default();
        d = d.step(
            format!(
                "注意：估算（约 {:.1} GiB）远高于这次运行出错时实际用到的（至少 {measured:.1} GiB）。计划里的设置可能比实际运行的大，也可能运行在更早的一步就出错了；所以先试能放下实测用量的最小改动，仍不够再按估算改。",
                p.need_gib
            ),
            format!(
                "Note: the estimate (about {:.1} GiB) is far above what the run had reached when it failed (at least {measured:.1} GiB). The plan may overstate the run, or the run failed early in its step; so try the smallest change that fits the measurement first, and the estimate's change only if that still runs out.",
                p.need_gib
            ),
        );
        if let Some(step) = &p.measured_step {
            let zh_list = labels(step, "；");
            let en_list = labels(step, "; ");
            d = d.step(
                format!(
                    "按实测先试：{zh_list}（按实测折算约 {:.1} GiB{}）。",
                    step.need_gib,
                    if step.fits { "，放得下" } else { "，仍放不下" }
                ),
                format!(
                    "By the measurement, try first: {en_list} (scaled to the measurement: about {:.1} GiB{}).",
                    step.need_gib,
                    if step.fits { ", fits" } else { ", still too big" }
                ),
            );
        }
    }
    if let Some(p) = plan.filter(|p| p.disagreement == Some(Disagreement::RanOutThoughEstimateFits))
    {
        let card = p.card_gib.unwrap_or_default();
        d = d.step(
            format!(
                "注意：估算认为这个设置（约 {:.1} GiB）放得下这张卡（{card:.1} GiB），实际却显存不足。实际运行的 batch 或序列长度可能比计划的大，或者还有别的东西占着显存；先核对计划里的任务设置，下面的估算才可信。",
                p.need_gib
            ),
            format!(
                "Note: the estimate says this setting (about {:.1} GiB) fits this card ({card:.1} GiB), yet it ran out of memory. The run probably uses a bigger batch or longer sequences than planned, or something else holds memory; check the planned task first, or the figures below will mislead.",
                p.need_gib
            ),
        );
    }
    if let Some(best) = plan.and_then(|p| p.best.as_ref()) {
        let zh_list = labels(best, "；");
        let en_list = labels(best, "; ");
        d = if best.fits {
            d.step(
                format!(
                    "最省事的改法：{zh_list}（估算约 {:.1} GiB，放得下）。",
                    best.need_gib
                ),
                format!(
                    "The cheapest change that fits: {en_list} (estimate: about {:.1} GiB, fits).",
                    best.need_gib
                ),
            )
        } else {
            d.step(
                format!("就算改成 {zh_list}，估算仍要约 {:.1} GiB，这张卡放不下。", best.need_gib),
                format!("Even with {en_list} the estimate is about {:.1} GiB: this card is too small for the job.", best.need_gib),
            )
        };
    }
    // The single remedies, each only where the plan leaves room for it (unknown plan: all).
    let setting = plan.map(|p| &p.setting);
    let training = setting.is_none_or(|s| s.task.is_training());
    if setting.is_none_or(|s| s.batch > 1) {
        let (zh, en) = figure("halve_batch");
        d = d.step(
            format!("把 batch size 减半，用梯度累积保持等效 batch 不变{zh}。"),
            format!(
                "Halve the batch size and keep the effective batch with gradient accumulation{en}."
            ),
        );
    }
    if training && setting.is_none_or(|s| !s.grad_checkpointing) {
        let (zh, en) = figure("grad_checkpointing");
        d = d.step(
            format!("训练时开启梯度检查点（gradient checkpointing），用时间换显存{zh}。"),
            format!(
                "When training, turn on gradient checkpointing: it trades time for memory{en}."
            ),
        );
    }
    if setting.is_none_or(|s| {
        s.precision == Precision::Fp32 || (s.task == Task::Inference && !s.precision.is_quantized())
    }) {
        let (zh, en) = figure("lower_precision");
        d = d.step(
            format!("降低精度：FP32 改 BF16/FP16，推理可用 INT8/INT4 量化{zh}。"),
            format!("Lower the precision: BF16/FP16 instead of FP32, INT8/INT4 quantisation for inference{en}."),
        );
    }
    if setting.is_none_or(|s| s.context >= 1024) {
        let (zh, en) = figure("shorter_context");
        d = d.step(
            format!("缩短序列长度（max_length / 上下文），很多任务用不到那么长{zh}。"),
            format!("Shorten the sequences (max_length / context); many tasks do not need them that long{en}."),
        );
    }
    if setting.is_none_or(|s| matches!(s.task, Task::Full | Task::Lora)) {
        let (zh, en) = figure("lora_instead_of_full");
        let (qzh, qen) = figure("qlora_instead_of_lora");
        d = d.step(
            format!("微调改用 LoRA 而不是全参数微调，显存还不够就用 QLoRA{zh}{qzh}。"),
            format!("Fine-tune with LoRA instead of all parameters, and QLoRA if that is still too much{en}{qen}."),
        );
    }
    if setting.is_none_or(|s| !s.task.is_training()) {
        d = d.run(
            "纯推理时关掉梯度：model.eval() 并把推理包在 torch.no_grad() 里，例如：",
            "For inference, turn gradients off: model.eval() and wrap the forward pass in torch.no_grad(), e.g.:",
            "model.eval()\nwith torch.no_grad():\n    output = model(inputs)",
        );
    }
    // A bigger card is the last resort, with what it cost this user before.
    if let Some(p) = plan.filter(|p| !p.bigger_cards.is_empty()) {
        let priced =
            |sep: &str, paid: &str, market: &str, both_sep: &str, open: &str, close: &str| {
                p.bigger_cards
                    .iter()
                    .map(|c| {
                        let mut notes = Vec::new();
                        if let (Some(price), Some(currency)) = (&c.price_per_hour, &c.currency) {
                            notes.push(paid.replace("{price}", &format!("{price} {currency}")));
                        }
                        if let (Some(price), Some(currency)) =
                            (&c.market_price_per_gpu_hour, &c.market_currency)
                        {
                            notes.push(
                                market.replace(
                                    "{price}",
                                    &format!("{} {currency}", price.round_dp(2)),
                                ),
                            );
                        }
                        if notes.is_empty() {
                            c.name.clone()
                        } else {
                            format!("{}{open}{}{close}", c.name, notes.join(both_sep))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(sep)
            };
        d = d.step(
            format!(
                "实在改不了设置，才换更大的卡；按现在的设置放得下的单卡有：{}。",
                priced("、", "你上次付 {price}/卡·时", "市场最低 {price}/卡·时", "，", "（", "）")
            ),
            format!(
                "Only if the setting cannot change, a bigger card; single cards with room for the current setting: {}.",
                priced(", ", "you paid {price} per GPU-hour last time", "{price} per GPU-hour on the market now", "; ", " (", ")")
            ),
        );
    }
    d
}

fn task_name(task: Task, lang: crate::diagnose::Lang) -> String {
    match task {
        Task::Inference => lang.pick("推理", "inference"),
        Task::Lora => "LoRA".to_owned(),
        Task::Qlora => "QLoRA".to_owned(),
        Task::Full => lang.pick("全参微调", "full fine-tune"),
    }
}

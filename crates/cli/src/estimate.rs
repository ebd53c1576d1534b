//! `leasehold estimate` and `leasehold recommend`: GPU memory for a task, and the GPUs that fit.

use std::path::Path;
use std::process::ExitCode;

use leasehold_core::store::Store;
use leasehold_core::Clock;

use clap::Args;
use leasehold_core::catalog::estimate::{Estimate, MemoryParts, Note};
use leasehold_core::catalog::recommend::Candidate;
use leasehold_core::catalog::{
    earlier_prices, estimate, merge_prices, recommend, EstimateRequest, Optimizer, Precision,
    PriceEntry, PriceOrigin, RecommendRequest, Task,
};
use rust_decimal::Decimal;
use serde::Serialize;

use crate::output::{bad_input, fail, print_json};

/// The model and how it is run; shared by estimate, recommend and local-gpu.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model size in billions of parameters (e.g. 7, 13, 70).
    #[arg(long)]
    pub params: Option<f64>,
    /// A model preset: qwen2.5-7b/14b/32b/72b, llama3.1-8b/70b, deepseek-r1-distill-qwen-7b/14b/32b.
    #[arg(long)]
    pub model: Option<String>,
    /// Weight precision: fp32, fp16, bf16, int8, int4, q4_k_m.
    #[arg(long, default_value = "fp16")]
    pub precision: Precision,
    /// Tokens per sequence.
    #[arg(long, default_value_t = 4096)]
    pub context: u32,
    #[arg(long, default_value_t = 1)]
    pub batch: u32,
    /// Optimizer for training: adamw or adamw8bit.
    #[arg(long, default_value = "adamw")]
    pub optimizer: Optimizer,
    /// Recompute activations in the backward pass (training; the default).
    #[arg(long, overrides_with = "no_grad_checkpointing")]
    pub grad_checkpointing: bool,
    /// Keep all activations instead (faster, much more memory).
    #[arg(long)]
    pub no_grad_checkpointing: bool,
    #[arg(long, default_value_t = 16)]
    pub lora_rank: u32,
}

impl ModelArgs {
    pub fn request(&self, task: Task) -> EstimateRequest {
        EstimateRequest {
            params_b: self.params,
            model: self.model.clone(),
            task,
            precision: self.precision,
            context: self.context,
            batch: self.batch,
            optimizer: self.optimizer,
            grad_checkpointing: self.grad_checkpointing || !self.no_grad_checkpointing,
            lora_rank: self.lora_rank,
        }
    }
}

#[derive(Args, Debug)]
pub struct EstimateArgs {
    /// inference, lora, qlora or full.
    #[arg(long)]
    pub task: Task,
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RecommendArgs {
    /// inference, lora, qlora or full.
    #[arg(long)]
    pub task: Task,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Planned hours, for the plan cost.
    #[arg(long)]
    pub hours: Option<Decimal>,
    /// A price you pay per card per hour, as "GPU=PRICE" (e.g. "RTX 4090=2.50"); repeatable.
    /// Prices paid for rentals recorded in the database (--db) are used for GPUs not given here.
    #[arg(long = "price", value_name = "GPU=PRICE")]
    pub prices: Vec<String>,
    /// Currency of the prices.
    #[arg(long, default_value = "CNY")]
    pub currency: String,
    /// Add the cheapest fitting market offers (kept by `leasehold market refresh`) to each plan,
    /// with what the task costs on each when --hours is given.
    #[arg(long)]
    pub market: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct EstimateJson<'a> {
    total_gib: f64,
    parts: &'a MemoryParts,
    formulas: Formulas<'a>,
    notes: Vec<&'a str>,
    params_b: f64,
    model: &'a str,
    gpu_count: u32,
}

#[derive(Serialize)]
struct Formulas<'a> {
    weights: &'a str,
    kv_cache: &'a str,
    activations: &'a str,
    gradients: &'a str,
    optimizer: &'a str,
    overhead: &'a str,
}

fn english(notes: &[Note]) -> Vec<&str> {
    notes.iter().map(|n| n.text.en.as_str()).collect()
}

fn estimate_json(e: &Estimate) -> EstimateJson<'_> {
    EstimateJson {
        total_gib: e.total_gib,
        parts: &e.parts,
        formulas: Formulas {
            weights: &e.formulas.weights.en,
            kv_cache: &e.formulas.kv_cache.en,
            activations: &e.formulas.activations.en,
            gradients: &e.formulas.gradients.en,
            optimizer: &e.formulas.optimizer.en,
            overhead: &e.formulas.overhead.en,
        },
        notes: english(&e.notes),
        params_b: e.params_b,
        model: &e.model.name,
        gpu_count: e.gpu_count,
    }
}

pub fn run_estimate(args: &EstimateArgs) -> ExitCode {
    let result = match estimate(&args.model.request(args.task)) {
        Ok(result) => result,
        Err(err) => return fail(&err),
    };
    if args.json {
        return print_json(&estimate_json(&result));
    }
    let p = &result.parts;
    let f = &result.formulas;
    say!(
        "{} — {:.1} GiB in total",
        result.model.name,
        result.total_gib
    );
    for (label, gib, formula) in [
        ("weights", p.weights_gib, &f.weights.en),
        ("KV cache", p.kv_cache_gib, &f.kv_cache.en),
        ("activations", p.activations_gib, &f.activations.en),
        ("gradients", p.gradients_gib, &f.gradients.en),
        ("optimizer", p.optimizer_gib, &f.optimizer.en),
        ("overhead", p.overhead_gib, &f.overhead.en),
    ] {
        say!("  {label:<12} {gib:>7.2} GiB  {formula}");
    }
    for note in &result.notes {
        say!("note: {}", note.text.en);
    }
    ExitCode::SUCCESS
}

#[derive(Serialize)]
struct CandidateJson<'a> {
    gpu: &'a str,
    gpu_id: &'a str,
    count: u32,
    vram_gib: f64,
    need_gib: f64,
    fits: bool,
    headroom_pct: i32,
    price_per_hour: Option<Decimal>,
    plan_cost: Option<Decimal>,
    currency: Option<&'a str>,
    price_origin: Option<PriceOrigin>,
    notes: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offers: Option<Vec<crate::market::OfferJson<'a>>>,
}

#[derive(Serialize)]
struct RecommendJson<'a> {
    candidates: Vec<CandidateJson<'a>>,
    notes: Vec<&'a str>,
    estimate: EstimateJson<'a>,
}

fn candidate_json(c: &Candidate) -> CandidateJson<'_> {
    CandidateJson {
        gpu: &c.gpu,
        gpu_id: &c.gpu_id,
        count: c.count,
        vram_gib: c.vram_gib,
        need_gib: c.need_gib,
        fits: c.fits,
        headroom_pct: c.headroom_pct,
        price_per_hour: c.price_per_hour,
        plan_cost: c.plan_cost,
        currency: c.currency.as_deref(),
        price_origin: c.price_origin,
        notes: english(&c.notes),
        offers: None,
    }
}

/// "RTX 4090=2.50" → a price entry; the GPU name may itself contain spaces.
fn parse_price(text: &str, currency: &str) -> Result<PriceEntry, String> {
    let (gpu, price) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("--price {text:?} must look like \"RTX 4090=2.50\""))?;
    let price_per_hour = price
        .trim()
        .parse::<Decimal>()
        .map_err(|_| format!("--price {text:?}: {price:?} is not a decimal price"))?;
    if gpu.trim().is_empty() {
        return Err(format!("--price {text:?} names no GPU"));
    }
    Ok(PriceEntry {
        gpu: gpu.trim().to_owned(),
        price_per_hour,
        currency: currency.to_owned(),
        origin: PriceOrigin::Entered,
    })
}

/// Prices paid for the rentals recorded in the database, if there is one. Reading history is
/// a bonus: when it fails the recommendation goes on without it and says why on stderr.
fn rental_prices(db: &Path) -> Vec<PriceEntry> {
    if !db.exists() {
        return Vec::new();
    }
    let read = async {
        let store = Store::open(db).await?;
        earlier_prices(&store, crate::ledger::CLOCK.now()).await
    };
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| err.to_string())
        .and_then(|runtime| runtime.block_on(read).map_err(|err| err.to_string()));
    match result {
        Ok(prices) => prices,
        Err(err) => {
            esay!(
                "warning: could not read earlier rentals' prices from {}: {err}",
                db.display()
            );
            Vec::new()
        }
    }
}

pub fn run_recommend(args: &RecommendArgs, db: &Path) -> ExitCode {
    let entered = match args
        .prices
        .iter()
        .map(|p| parse_price(p, &args.currency))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(prices) => prices,
        Err(message) => return bad_input(message),
    };
    let request = RecommendRequest {
        estimate: args.model.request(args.task),
        hours: args.hours,
        prices: merge_prices(entered, rental_prices(db)),
    };
    let result = match recommend(&request) {
        Ok(result) => result,
        Err(err) => return fail(&err),
    };
    let per_plan = if args.market {
        let offers = crate::market::kept_offers(db);
        Some(leasehold_core::market::rank::per_plan(
            &result,
            args.hours,
            &offers,
            leasehold_core::market::rank::DEFAULT_DISK_GB,
        ))
    } else {
        None
    };
    if args.json {
        return print_json(&RecommendJson {
            candidates: result
                .candidates
                .iter()
                .enumerate()
                .map(|(i, c)| CandidateJson {
                    offers: per_plan
                        .as_ref()
                        .map(|p| p[i].iter().map(crate::market::ranked_json).collect()),
                    ..candidate_json(c)
                })
                .collect(),
            notes: english(&result.notes),
            estimate: estimate_json(&result.estimate),
        });
    }
    say!(
        "{} needs ≈ {:.1} GiB on one GPU.",
        result.estimate.model.name,
        result.estimate.total_gib
    );
    for c in result.candidates.iter().filter(|c| c.fits) {
        let cost = match (&c.plan_cost, &c.price_per_hour, &c.currency) {
            (Some(plan), _, Some(cur)) => format!("  plan {plan} {cur}"),
            (None, Some(price), Some(cur)) => format!("  {price} {cur}/h per card"),
            _ => String::new(),
        };
        say!(
            "  {}× {:<45} {:>6.1} GiB each, {:>3}% free{cost}",
            c.count,
            c.gpu,
            c.vram_gib,
            c.headroom_pct
        );
        let index = result.candidates.iter().position(|x| std::ptr::eq(x, c));
        if let Some(offers) = index.and_then(|i| per_plan.as_ref().map(|p| &p[i])) {
            let now = crate::ledger::CLOCK.now();
            for r in offers {
                let task = r
                    .task_cost
                    .map(|t| format!("  task ≈ {t} {}", r.offer.currency))
                    .unwrap_or_default();
                say!("      {}{task}", crate::market::offer_line(&r.offer, now));
            }
        }
    }
    if args.market
        && per_plan
            .as_ref()
            .is_some_and(|p| p.iter().all(Vec::is_empty))
    {
        say!("note: no market offers kept for these plans; `leasehold market refresh` fetches them (Vast.ai needs no account; RunPod and Lambda add theirs once linked with `leasehold account add`).");
    }
    for note in &result.notes {
        say!("note: {}", note.text.en);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::parse_price;

    #[test]
    fn prices_parse_with_spaces_in_the_gpu_name() {
        let entry = parse_price("NVIDIA GeForce RTX 4090 = 2.50", "CNY").expect("valid");
        assert_eq!(entry.gpu, "NVIDIA GeForce RTX 4090");
        assert_eq!(entry.price_per_hour.to_string(), "2.50");
        assert!(parse_price("RTX 4090", "CNY").is_err(), "no price");
        assert!(
            parse_price("RTX 4090=cheap", "CNY").is_err(),
            "not a number"
        );
        assert!(parse_price("=2.5", "CNY").is_err(), "no GPU");
    }
}

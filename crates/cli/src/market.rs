//! `leasehold market refresh|list|alert` and `leasehold rent`: live offers from the providers'
//! catalogs, kept with their age, watched by alerts, and rented through the provider's API.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use clap::{ArgGroup, Args};
use leasehold_core::account::Provider;
use leasehold_core::market::alerts::{self, AlertRule};
use leasehold_core::market::rank::RankedOffer;
use leasehold_core::market::rent::{self, RentRequest};
use leasehold_core::market::{self, Offer, OfferFilter};
use leasehold_core::store::Store;
use leasehold_core::usecase::{self, Handles};
use leasehold_core::Clock;
use rust_decimal::Decimal;
use serde::Serialize;

use crate::ledger::CLOCK;
use crate::output;
use crate::ssh::runtime;

#[derive(clap::Subcommand)]
pub enum MarketCommand {
    /// Fetch the providers' catalogs now (a failed fetch keeps the last good offers).
    Refresh {
        /// runpod, vast, lambda or autodl; every provider when absent.
        provider: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The kept offers, cheapest first.
    List(ListArgs),
    /// Alerts on prices and stock, told through the webhooks at most once an hour each.
    #[command(subcommand)]
    Alert(AlertCommand),
}

#[derive(Args)]
pub struct ListArgs {
    /// A GPU, any spelling the catalog knows ("4090", "H100").
    #[arg(long)]
    gpu: Option<String>,
    #[arg(long)]
    count: Option<u32>,
    #[arg(long, value_name = "N")]
    min_vram_gb: Option<u32>,
    #[arg(long, value_name = "X")]
    max_price_per_gpu_hour: Option<Decimal>,
    /// runpod, vast, lambda or autodl.
    #[arg(long)]
    provider: Option<String>,
    /// Part of the region's name.
    #[arg(long)]
    region: Option<String>,
    /// Interruptible (bid) offers only.
    #[arg(long, conflicts_with = "on_demand")]
    interruptible: bool,
    /// On-demand offers only.
    #[arg(long)]
    on_demand: bool,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Subcommand)]
pub enum AlertCommand {
    /// Add an alert: a price below X, the GPU in stock, or an offer cheaper than a rental of it.
    #[command(group(ArgGroup::new("rule").required(true).args(["below", "in_stock", "cheaper_than_mine"])))]
    Add {
        #[arg(long)]
        gpu: String,
        /// Tell me when an offer costs less than this per GPU-hour.
        #[arg(long, value_name = "X")]
        below: Option<Decimal>,
        #[arg(long, default_value = "USD", requires = "below")]
        currency: String,
        /// Tell me when an offer is in stock.
        #[arg(long)]
        in_stock: bool,
        /// Only in a region whose name contains this.
        #[arg(long, requires = "in_stock")]
        region: Option<String>,
        /// Tell me when an offer is at least 10 % cheaper per GPU-hour than a rental of this GPU
        /// billing now.
        #[arg(long)]
        cheaper_than_mine: bool,
        #[arg(long)]
        json: bool,
    },
    List {
        #[arg(long)]
        json: bool,
    },
    Remove {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct RentArgs {
    /// runpod, vast, lambda or autodl.
    provider: String,
    /// The offer's id as `market list` shows it; on AutoDL (no offers) the compute spec
    /// `SPEC[:COUNT[:DATA CENTRES]]`, e.g. v-48g or 5090-p:2:westDC2 — its price is read after the
    /// create, and above the cap the instance is released at once.
    offer_id: String,
    /// The ledger's name for it, also its name at the provider.
    #[arg(long)]
    name: String,
    /// Never more than this per hour for the whole offer (its live price is checked first).
    #[arg(long, value_name = "X")]
    max_price_per_hour: Decimal,
    /// Disk in GB (on AutoDL: what the system disk grows by, 0–500).
    #[arg(long, value_name = "N")]
    disk_gb: Option<u32>,
    /// The image (on AutoDL its image id, base-image-… or a private image-…).
    #[arg(long)]
    image: Option<String>,
    /// The public key to install (a private key's `.pub` beside it is used); default: the
    /// first of ~/.ssh/id_ed25519.pub, id_ecdsa.pub, id_rsa.pub.
    #[arg(long, value_name = "PATH")]
    ssh_key: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

/// An offer as scripts read it (the exact keys, plus `task_cost` under recommend).
#[derive(Serialize)]
pub struct OfferJson<'a> {
    provider: &'static str,
    offer_id: &'a str,
    gpu: &'a str,
    count: u32,
    vram_gb: u32,
    price_per_hour: Decimal,
    price_per_gpu_hour: Decimal,
    currency: &'a str,
    region: Option<&'a str>,
    stock: &'static str,
    interruptible: bool,
    fetched_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_cost: Option<Decimal>,
}

pub fn offer_json(o: &Offer) -> OfferJson<'_> {
    OfferJson {
        provider: o.provider.as_str(),
        offer_id: &o.offer_id,
        gpu: &o.gpu,
        count: o.count,
        vram_gb: o.vram_gb,
        price_per_hour: o.price_per_hour,
        price_per_gpu_hour: o.price_per_gpu_hour,
        currency: &o.currency,
        region: o.region.as_deref(),
        stock: o.stock.as_str(),
        interruptible: o.interruptible,
        fetched_at: o.fetched_at,
        task_cost: None,
    }
}

pub fn ranked_json(r: &RankedOffer) -> OfferJson<'_> {
    OfferJson {
        task_cost: r.task_cost,
        ..offer_json(&r.offer)
    }
}

/// "12 min ago", for a text line.
pub fn age(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let minutes = (now - at).num_minutes().max(0);
    match minutes {
        0 => "just now".into(),
        1..=89 => format!("{minutes} min ago"),
        90..=2879 => format!("{} h ago", minutes / 60),
        _ => format!("{} days ago", minutes / 1440),
    }
}

/// One offer as a text line.
pub fn offer_line(o: &Offer, now: DateTime<Utc>) -> String {
    let source = match o.source {
        market::PriceSource::Catalog => format!("{}'s catalog", o.provider.display()),
        market::PriceSource::YourLastPrice => "your last price".into(),
    };
    format!(
        "{:<8} {:<40} {}× {} ({} GB)  {} {}/h ({} per GPU-hour){}  stock {}{}  [{source}, {}]",
        o.provider.as_str(),
        o.offer_id,
        o.count,
        o.gpu,
        o.vram_gb,
        o.price_per_hour,
        o.currency,
        o.price_per_gpu_hour,
        o.region
            .as_deref()
            .map(|r| format!("  {r}"))
            .unwrap_or_default(),
        o.stock.as_str(),
        if o.interruptible {
            "  interruptible"
        } else {
            ""
        },
        age(o.fetched_at, now)
    )
}

fn provider_of(text: Option<&str>) -> Result<Option<Provider>, ExitCode> {
    text.map(Provider::parse)
        .transpose()
        .map_err(|err| output::fail(&err))
}

fn with_store<F, Fut>(db: &Path, body: F) -> ExitCode
where
    F: FnOnce(Store) -> Fut,
    Fut: std::future::Future<Output = ExitCode>,
{
    runtime().block_on(async {
        let store = match Store::open(db).await {
            Ok(store) => store,
            Err(err) => return output::fail(&err),
        };
        let keep = store.clone();
        let code = body(store).await;
        keep.close().await;
        code
    })
}

pub fn run(db: &Path, command: &MarketCommand) -> ExitCode {
    match command {
        MarketCommand::Refresh { provider, json } => {
            let only = match provider_of(provider.as_deref()) {
                Ok(p) => p,
                Err(code) => return code,
            };
            with_store(db, |store| async move {
                let now = CLOCK.now();
                let handles = Handles::default();
                let context = handles.context(&store, &CLOCK);
                let report = match usecase::market::refresh(&context, only).await {
                    Ok(round) => round.report,
                    Err(err) => return output::fail(&err),
                };
                if *json {
                    let providers: Vec<serde_json::Value> = report
                        .providers
                        .iter()
                        .map(|p| {
                            let mut v = serde_json::json!({
                                "provider": p.provider.as_str(),
                                "fetched_at": p.fetched_at,
                                "offers": p.offers,
                            });
                            if let Some(error) = &p.error {
                                v["error"] = error.clone().into();
                            }
                            v
                        })
                        .collect();
                    return output::print_json(&serde_json::json!({ "providers": providers }));
                }
                for p in &report.providers {
                    let when = p.fetched_at.map_or_else(
                        || "never fetched".into(),
                        |t| format!("fetched {}", age(t, now)),
                    );
                    say!(
                        "{:<8} {} offers, {when}{}",
                        p.provider.as_str(),
                        p.offers,
                        p.error
                            .as_deref()
                            .map(|e| format!(" — kept; this refresh failed: {e}"))
                            .unwrap_or_default()
                    );
                    for warning in &p.warnings {
                        say!("  skipped: {warning}");
                    }
                }
                ExitCode::SUCCESS
            })
        }
        MarketCommand::List(args) => list(db, args),
        MarketCommand::Alert(command) => alert(db, command),
    }
}

fn list(db: &Path, args: &ListArgs) -> ExitCode {
    let provider = match provider_of(args.provider.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let filter = OfferFilter {
        gpu: args.gpu.clone(),
        count: args.count,
        min_vram_gb: args.min_vram_gb,
        max_price_per_gpu_hour: args.max_price_per_gpu_hour,
        provider,
        region: args.region.clone(),
        interruptible: if args.interruptible {
            Some(true)
        } else if args.on_demand {
            Some(false)
        } else {
            None
        },
    };
    if let Err(err) = filter.validate() {
        return output::fail(&err);
    }
    with_store(db, |store| async move {
        let offers = match market::list(&store, &filter).await {
            Ok(offers) => offers,
            Err(err) => return output::fail(&err),
        };
        if args.json {
            let offers: Vec<OfferJson> = offers.iter().map(offer_json).collect();
            return output::print_json(&serde_json::json!({ "offers": offers }));
        }
        let now = CLOCK.now();
        if offers.is_empty() {
            say!("No offers kept that match; `leasehold market refresh` fetches the catalogs.");
        }
        for o in &offers {
            say!("{}", offer_line(o, now));
        }
        ExitCode::SUCCESS
    })
}

fn alert(db: &Path, command: &AlertCommand) -> ExitCode {
    match command {
        AlertCommand::Add {
            gpu,
            below,
            currency,
            in_stock: _,
            region,
            cheaper_than_mine,
            json,
        } => {
            let rule = match below {
                Some(below) => AlertRule::Below {
                    below: *below,
                    currency: currency.clone(),
                },
                None if *cheaper_than_mine => AlertRule::CheaperThanMine,
                None => AlertRule::InStock {
                    region: region.clone(),
                },
            };
            with_store(db, |store| async move {
                match alerts::add(&store, gpu, rule, CLOCK.now()).await {
                    Ok(alert) if *json => output::print_json(&alert),
                    Ok(alert) => {
                        say!("Alert {} added for {}.", alert.id, alert.gpu);
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
        AlertCommand::List { json } => with_store(db, |store| async move {
            match alerts::list(&store).await {
                Ok(list) if *json => output::print_json(&serde_json::json!({ "alerts": list })),
                Ok(list) => {
                    for a in &list {
                        let what = match &a.rule {
                            AlertRule::Below { below, currency } => {
                                format!("below {below} {currency} per GPU-hour")
                            }
                            AlertRule::InStock { region: Some(r) } => format!("in stock in {r}"),
                            AlertRule::InStock { region: None } => "in stock".into(),
                            AlertRule::CheaperThanMine => {
                                "cheaper than a rental of it billing now".into()
                            }
                        };
                        say!("{:>4}  {}  {what}", a.id, a.gpu);
                    }
                    ExitCode::SUCCESS
                }
                Err(err) => output::fail(&err),
            }
        }),
        AlertCommand::Remove { id, json } => with_store(db, |store| async move {
            match alerts::remove(&store, *id).await {
                Ok(()) if *json => output::print_json(&serde_json::json!({ "removed": id })),
                Ok(()) => {
                    say!("Alert {id} removed.");
                    ExitCode::SUCCESS
                }
                Err(err) => output::fail(&err),
            }
        }),
    }
}

pub fn run_rent(db: &Path, args: &RentArgs) -> ExitCode {
    let provider = match Provider::parse(&args.provider) {
        Ok(p) => p,
        Err(err) => return output::fail(&err),
    };
    let home = leasehold_core::paths::home_dir();
    let ssh_public_key = match rent::public_key(args.ssh_key.as_deref(), home.as_deref()) {
        Ok(key) => key,
        Err(err) => return output::fail(&err),
    };
    let request = RentRequest {
        provider,
        offer_id: args.offer_id.trim().to_owned(),
        name: args.name.clone(),
        max_price_per_hour: args.max_price_per_hour,
        disk_gb: args.disk_gb,
        image: args.image.clone(),
        ssh_public_key,
    };
    if let Err(err) = rent::validate(&request) {
        return output::fail(&err);
    }
    with_store(db, |store| async move {
        let handles = Handles::default();
        let context = handles.context(&store, &CLOCK);
        match usecase::market::rent(&context, &request).await {
            Ok(rented) if args.json => output::print_json(&rented),
            Ok(rented) => {
                say!(
                    "Rented {} on {} (instance {}) at {} {}/h; recorded as created.",
                    rented.instance,
                    rented.provider.display(),
                    rented.remote_id,
                    rented.price_per_hour,
                    rented.currency
                );
                match &rented.ssh {
                    Some(ssh) => say!("Connect: {ssh}"),
                    None => say!(
                        "The provider gives its SSH address once it runs: `leasehold account sync` fills it in."
                    ),
                }
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}

/// Offers kept in the database for `recommend --market`, or why not (on stderr).
pub fn kept_offers(db: &Path) -> Vec<Offer> {
    if !db.exists() {
        return Vec::new();
    }
    let result = runtime().block_on(async {
        let store = Store::open(db).await.map_err(|e| e.to_string())?;
        let offers = market::snapshot::all_offers(&store)
            .await
            .map_err(|e| e.to_string());
        store.close().await;
        offers
    });
    match result {
        Ok(offers) => offers,
        Err(err) => {
            esay!(
                "warning: could not read the market from {}: {err}",
                db.display()
            );
            Vec::new()
        }
    }
}

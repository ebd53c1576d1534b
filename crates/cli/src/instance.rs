//! `leasehold instance …`: record rentals and their power changes.
//!
//! `add` records the `created` event only. Providers create instances powered on, so when billing
//! starts at creation (`--billing-starts created`, the default) the instance bills like a running
//! one from that moment, and a later `start` just marks when work began; with
//! `--billing-starts running` nothing is billed until the first `start` (or `no-gpu`).

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use leasehold_core::billing::{
    ledger, BillingError, BillingRules, InstanceDetail, InstanceSummary, NewInstance, PowerAction,
    ProviderKey,
};
use leasehold_core::status::{self, InstanceStatus};
use leasehold_core::team;
use leasehold_core::usecase::{self, ActionError, Handles};
use rust_decimal::Decimal;

use crate::ledger::{
    block_on, block_on_coded, decimal, open_existing, open_for_write, optional_decimal,
    time_or_now, CLOCK,
};
use crate::output;
use crate::rule_flags::RuleFlags;

#[derive(Subcommand)]
pub enum InstanceCommand {
    /// Record a new rental (the `created` event) with its billing rules.
    Add(Box<AddArgs>),
    /// Record a power-on with GPUs.
    Start(EventArgs),
    /// Record a power-off (the instance and its disks are kept).
    Stop(EventArgs),
    /// Record a power-on without GPU (AutoDL's 无卡模式), billed at the no-GPU rate.
    NoGpu(EventArgs),
    /// Record the release: billing ends, nothing can be recorded after it.
    Release(EventArgs),
    /// Change billing rules from a moment on (every flag left out keeps its current value).
    Rules(Box<RulesArgs>),
    /// Record traffic read off the provider's console, charged at the traffic price.
    Traffic(TrafficArgs),
    /// Set or clear the instance's budget (warnings at 50, 80 and 100 %).
    Budget(BudgetArgs),
    /// Show, set or clear the project an instance is rented for (team mode sums the month's
    /// spend by project; shared on the next sync).
    Project(ProjectArgs),
    /// Every recorded instance with its state and cost so far.
    List(ListArgs),
    /// One instance: rules, timeline and bill.
    Show(ShowArgs),
    /// The one status of an instance, all sources weighed: state, since when, what it costs and
    /// may cost per hour, what makes sense now, warnings, and each fact with its source.
    Status(ShowArgs),
}

#[derive(Args)]
pub struct AddArgs {
    name: String,
    /// GPU model as the provider names it, e.g. "RTX 4090".
    #[arg(long)]
    gpu: String,
    /// ISO 4217 currency of every amount (CNY, USD, EUR, …).
    #[arg(long)]
    currency: String,
    /// Provider preset pre-filling billing start, granularity, wipe days (never prices):
    /// bingxing, autodl, hengyuan, kuhu, runpod, vast, lambda, aliyun, tencent, huawei, aws,
    /// gcp, custom.
    #[arg(long, default_value = "custom")]
    provider: String,
    #[arg(long)]
    region: Option<String>,
    #[arg(long)]
    notes: Option<String>,
    /// Hours you plan to use it (for reminders and forecasts).
    #[arg(long, allow_hyphen_values = true)]
    planned_hours: Option<String>,
    /// Budget for this rental, in its currency.
    #[arg(long, allow_hyphen_values = true)]
    budget: Option<String>,
    /// The project it is rented for (team mode sums the month's spend by project).
    #[arg(long)]
    project: Option<String>,
    #[command(flatten)]
    rules: RuleFlags,
    /// When it was created (RFC 3339); default now.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct EventArgs {
    name: String,
    /// When it happened (RFC 3339); default now.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct RulesArgs {
    name: String,
    #[command(flatten)]
    rules: RuleFlags,
    /// From when the new rules apply (RFC 3339); default now.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct TrafficArgs {
    name: String,
    /// Gigabytes of billable traffic.
    #[arg(long, allow_hyphen_values = true)]
    gb: String,
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct BudgetArgs {
    name: String,
    /// Budget amount in the instance's currency.
    #[arg(allow_hyphen_values = true, required_unless_present = "clear")]
    amount: Option<String>,
    /// Remove the budget.
    #[arg(long, conflicts_with = "amount")]
    clear: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ProjectArgs {
    name: String,
    /// The project's name; left out (and no --clear), the current one is shown.
    project: Option<String>,
    /// Say the instance belongs to no project.
    #[arg(long, conflicts_with = "project")]
    clear: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ListArgs {
    /// Report as of this time (RFC 3339); default now.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ShowArgs {
    name: String,
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(db: &Path, command: &InstanceCommand) -> ExitCode {
    let result = match command {
        InstanceCommand::Add(args) => add(db, args),
        InstanceCommand::Start(args) => event(db, args, PowerAction::Start),
        InstanceCommand::Stop(args) => event(db, args, PowerAction::Stop),
        InstanceCommand::NoGpu(args) => event(db, args, PowerAction::NoGpu),
        InstanceCommand::Release(args) => event(db, args, PowerAction::Release),
        InstanceCommand::Rules(args) => change_rules(db, args),
        InstanceCommand::Traffic(args) => traffic(db, args),
        InstanceCommand::Budget(args) => budget(db, args),
        InstanceCommand::Project(args) => project(db, args),
        InstanceCommand::List(args) => list(db, args),
        InstanceCommand::Show(args) => show(db, args),
        InstanceCommand::Status(args) => status(db, args),
    };
    result.unwrap_or_else(|code| code)
}

fn add(db: &Path, args: &AddArgs) -> Result<ExitCode, ExitCode> {
    let preset = ProviderKey::parse(&args.provider)
        .map_err(|e| output::fail(&e))?
        .preset();
    let Some(price) = &args.rules.price else {
        return Err(output::bad_input(
            "--price is required: the price of one GPU for one hour, as the provider shows it",
        ));
    };
    let mut base = BillingRules::simple(decimal("price_per_gpu_hour", price)?, 1);
    base.billing_starts = preset.billing_starts;
    base.granularity = preset.granularity;
    base.wipe_after_stopped_days = preset.wipe_after_stopped_days;
    let rules = args.rules.apply(base)?;
    let new = NewInstance {
        name: args.name.clone(),
        provider: preset.key.as_str().to_owned(),
        region: args.region.clone(),
        gpu_model: args.gpu.clone(),
        currency: args.currency.clone(),
        notes: args.notes.clone(),
        planned_hours: optional_decimal("planned_hours", args.planned_hours.as_deref())?,
        budget: optional_decimal("budget", args.budget.as_deref())?,
        rules,
    };
    // Every check that needs no database runs before the file is even opened.
    new.validate().map_err(|e| output::fail(&e))?;
    let project = args
        .project
        .as_deref()
        .map(|p| team::address::check_name("project", p))
        .transpose()
        .map_err(|e| output::fail(&e))?;
    let at = time_or_now("--at", args.at.as_deref())?;
    let summary = block_on(async {
        let store = open_for_write(db).await?;
        let mut result = ledger::add_instance(&store, &new, at).await;
        if let (Ok(_), Some(project)) = (&result, &project) {
            if let Err(err) = team::set_project(&store, &new.name, Some(project)).await {
                result = Err(match err {
                    team::TeamError::Billing(err) => err,
                    team::TeamError::Store(err) => BillingError::Store(err),
                    other => BillingError::InvalidInput {
                        field: "project",
                        reason: other.to_string(),
                    },
                });
            }
        }
        store.close().await;
        result
    })?;
    Ok(print_summary(&summary, args.json, "recorded"))
}

fn event(db: &Path, args: &EventArgs, action: PowerAction) -> Result<ExitCode, ExitCode> {
    let at = time_or_now("--at", args.at.as_deref())?;
    let summary = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = ledger::record(&store, &args.name, action, at).await;
        store.close().await;
        result
    })?;
    let verb = match action {
        PowerAction::Start => "started",
        PowerAction::Stop => "stopped",
        PowerAction::NoGpu => "in no-GPU mode",
        PowerAction::Release => "released",
    };
    Ok(print_summary(&summary, args.json, verb))
}

fn change_rules(db: &Path, args: &RulesArgs) -> Result<ExitCode, ExitCode> {
    let at = time_or_now("--at", args.at.as_deref())?;
    let current = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = ledger::show(&store, &args.name, at).await;
        store.close().await;
        result
    })?;
    let rules = args.rules.apply(current.rules)?;
    let summary = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = ledger::change_rules(&store, &args.name, &rules, at).await;
        store.close().await;
        result
    })?;
    Ok(print_summary(&summary, args.json, "rules changed"))
}

fn traffic(db: &Path, args: &TrafficArgs) -> Result<ExitCode, ExitCode> {
    let gb = decimal("traffic_gb", &args.gb)?;
    let at = time_or_now("--at", args.at.as_deref())?;
    let summary = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = ledger::record_traffic(&store, &args.name, gb, at).await;
        store.close().await;
        result
    })?;
    Ok(print_summary(&summary, args.json, "traffic recorded"))
}

fn budget(db: &Path, args: &BudgetArgs) -> Result<ExitCode, ExitCode> {
    let amount: Option<Decimal> = if args.clear {
        None
    } else {
        optional_decimal("budget", args.amount.as_deref())?
    };
    let now = time_or_now("--at", None)?;
    let summary = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = ledger::set_budget(&store, &args.name, amount, now).await;
        store.close().await;
        result
    })?;
    Ok(print_summary(&summary, args.json, "budget set"))
}

fn project(db: &Path, args: &ProjectArgs) -> Result<ExitCode, ExitCode> {
    let wanted: Option<Option<&str>> = if args.clear {
        Some(None)
    } else {
        args.project.as_deref().map(Some)
    };
    if let Some(Some(project)) = wanted {
        team::address::check_name("project", project).map_err(|e| output::fail(&e))?;
    }
    let outcome = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = match wanted {
            Some(project) => {
                let handles = Handles::default();
                let context = handles.context(&store, &CLOCK);
                usecase::team::set_project(&context, &args.name, project).await
            }
            None => team::project_of(&store, &args.name)
                .await
                .map_err(ActionError::from),
        };
        store.close().await;
        Ok(result)
    })?;
    let project = outcome.map_err(|e| output::fail(&e))?;
    if args.json {
        return Ok(output::print_json(&serde_json::json!({
            "instance": args.name,
            "project": project,
        })));
    }
    match project {
        Some(project) => say!("{}: project {project}", args.name),
        None => say!("{}: no project", args.name),
    }
    Ok(ExitCode::SUCCESS)
}

fn list(db: &Path, args: &ListArgs) -> Result<ExitCode, ExitCode> {
    let now = time_or_now("--at", args.at.as_deref())?;
    let listing = if db.exists() {
        block_on_coded(async {
            let store = open_for_write(db).await?;
            let result = status::listing(&store, now).await;
            store.close().await;
            result
        })?
    } else {
        status::Listing::default()
    };
    // An instance that cannot be billed never hides the others; it is named on stderr, so the
    // `--json` list keeps its shape.
    for broken in &listing.broken {
        eprintln!("warning: {} [{}]", broken.message, broken.code);
    }
    if args.json {
        let rows: Vec<serde_json::Value> = listing
            .instances
            .iter()
            .map(status::ListedInstance::list_json)
            .collect();
        return Ok(output::print_json(&rows));
    }
    if listing.instances.is_empty() {
        say!("no instances recorded yet (leasehold instance add NAME --gpu … --price … --currency …)");
    }
    for listed in &listing.instances {
        say!("{}", listed_line(&listed.summary, &listed.status));
    }
    Ok(ExitCode::SUCCESS)
}

fn status(db: &Path, args: &ShowArgs) -> Result<ExitCode, ExitCode> {
    let now = time_or_now("--at", args.at.as_deref())?;
    let status = block_on_coded(async {
        let store = open_existing(db, &args.name).await?;
        let result = status::for_instance(&store, &args.name, now).await;
        store.close().await;
        result
    })?;
    if args.json {
        return Ok(output::print_json(&status));
    }
    print_status(&status);
    Ok(ExitCode::SUCCESS)
}

fn print_status(status: &InstanceStatus) {
    let currency = status.currency.code();
    say!(
        "{}: {} since {} · {} {currency}/h",
        status.instance,
        status.state.as_str(),
        status.since.to_rfc3339(),
        status.cost_per_hour
    );
    if status.may_cost_per_hour > status.cost_per_hour {
        say!(
            "may cost {} {currency}/h if the provider still bills it",
            status.may_cost_per_hour
        );
    }
    let actions: Vec<&str> = status
        .actions
        .iter()
        .map(|a| match a {
            status::StatusAction::PowerOn => "power_on",
            status::StatusAction::Stop => "stop",
            status::StatusAction::RecordStart => "record_start",
            status::StatusAction::RecordNoGpu => "record_no_gpu",
            status::StatusAction::RecordStop => "record_stop",
            status::StatusAction::CheckAgain => "check_again",
            status::StatusAction::RaiseBid => "raise_bid",
            status::StatusAction::Release => "release",
        })
        .collect();
    if !actions.is_empty() {
        say!("now: {}", actions.join(", "));
    }
    for warning in &status.warnings {
        say!("warning: {} [{}]", warning.message, warning.code);
    }
    for fact in &status.facts {
        say!(
            "  {} {:?}: {}",
            fact.at.to_rfc3339(),
            fact.source,
            fact.says
        );
    }
}

fn show(db: &Path, args: &ShowArgs) -> Result<ExitCode, ExitCode> {
    let now = time_or_now("--at", args.at.as_deref())?;
    let detail = block_on(async {
        let store = open_existing(db, &args.name).await?;
        let result = ledger::show(&store, &args.name, now).await;
        store.close().await;
        result
    })?;
    if args.json {
        return Ok(output::print_json(&detail));
    }
    print_detail(&detail);
    Ok(ExitCode::SUCCESS)
}

fn state_name(summary: &InstanceSummary) -> &'static str {
    summary.state.map_or("not yet created", |s| s.as_str())
}

/// A row of `instance list`: the status's state, the ledger's figures.
fn listed_line(s: &InstanceSummary, status: &InstanceStatus) -> String {
    format!(
        "{:<20} {:<10} {} × {:<14} {:>10} {}  burn {} {}/h",
        s.name,
        status.state.as_str(),
        s.gpu_count,
        s.gpu_model,
        s.total,
        s.currency,
        status.cost_per_hour,
        s.currency
    )
}

fn summary_line(s: &InstanceSummary) -> String {
    format!(
        "{:<20} {:<10} {} × {:<14} {:>10} {}  burn {} {}/h",
        s.name,
        state_name(s),
        s.gpu_count,
        s.gpu_model,
        s.total,
        s.currency,
        s.burn_rate_per_hour,
        s.currency
    )
}

fn print_summary(summary: &InstanceSummary, json: bool, verb: &str) -> ExitCode {
    if json {
        return output::print_json(summary);
    }
    say!("{}: {verb} at {}", summary.name, summary.as_of.to_rfc3339());
    say!("{}", summary_line(summary));
    ExitCode::SUCCESS
}

fn print_detail(detail: &InstanceDetail) {
    let s = &detail.summary;
    say!("{}", summary_line(s));
    say!(
        "provider {}, {} {} per GPU-hour, billing from {}, stopped: {}, per {}",
        s.provider,
        detail.rules.price_per_gpu_hour,
        s.currency,
        detail.rules.billing_starts.as_str(),
        detail.rules.stopped_billing,
        detail.rules.granularity.as_str()
    );
    if let Some(wipe_at) = s.wipe_at {
        say!(
            "wiped by the provider at {} if it stays stopped",
            wipe_at.to_rfc3339()
        );
    }
    if let Some(budget) = &s.budget {
        say!(
            "budget {} {}: {} % used",
            budget.amount,
            s.currency,
            budget.percent_used
        );
    }
    for interval in &detail.report.intervals {
        say!(
            "  {} → {}  {:<8} {:>10} {}",
            interval.start.to_rfc3339(),
            if interval.ongoing {
                "now".to_owned()
            } else {
                interval.end.to_rfc3339()
            },
            interval.state.as_str(),
            interval.cost,
            s.currency
        );
    }
}

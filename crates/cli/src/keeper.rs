//! `leasehold keeper list|policy|stop|keep-alive|look-vast` and the hunt behind `account power NAME on
//! --until-gpu`: each one call into `leasehold_core::keeper`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use leasehold_core::account::{Backoff, Endpoints};
use leasehold_core::keeper::{
    self, rules, HuntDeps, HuntLimits, PolicyChange, Stage, TokioSleeper,
};
use leasehold_core::stop::StopWait;
use leasehold_core::store::Store;
use leasehold_core::usecase::{self, Handles};
use leasehold_core::Clock;
use rust_decimal::Decimal;

use crate::ledger::CLOCK;
use crate::output;
use crate::ssh::runtime;

/// Exit code of a hunt that ended without the instance on (time, spend, refused, stopped).
const EXIT_NOT_ON: u8 = 1;

#[derive(clap::Subcommand)]
pub enum KeeperCommand {
    /// Every hunt, clean-up deadline and two-stage policy, with what the keeper does next.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set an instance's two-stage policy (or the default one with --default).
    Policy {
        #[arg(required_unless_present = "default", conflicts_with = "default")]
        name: Option<String>,
        /// Change the default policy, used by every instance without its own.
        #[arg(long)]
        default: bool,
        /// Stop after the GPUs were idle this long (e.g. 30m); `off` clears this stage.
        #[arg(long, value_name = "DURATION")]
        stop_after_idle: Option<String>,
        /// Remind to release (or release, with --auto-release) after stopped this long (e.g.
        /// 3d); `off` clears this stage and the auto-release with it.
        #[arg(long, value_name = "DURATION")]
        release_after_stopped: Option<String>,
        /// Release by itself when the last backup covers every at-risk path.
        #[arg(long)]
        auto_release: bool,
        /// Turn the policy off for this instance.
        #[arg(long)]
        off: bool,
        /// The highest bid `account bid` may place (Vast.ai, per GPU-hour).
        #[arg(long, value_name = "AMOUNT")]
        bid_cap: Option<Decimal>,
        #[arg(long)]
        json: bool,
    },
    /// Stop an instance's power-on hunt.
    Stop { name: String },
    /// Ask Vast.ai now about every rental there: outbid, or a host's pending price increase
    /// (the app asks every 5 minutes; reminders tell what it finds).
    LookVast {
        #[arg(long)]
        json: bool,
    },
    /// Power a stopped instance on and off again so the provider's clean-up starts over;
    /// without --accept-cost it only shows what that costs.
    KeepAlive {
        name: String,
        /// The cost shown before, accepted: nothing is done if it costs more now.
        #[arg(long, value_name = "AMOUNT")]
        accept_cost: Option<Decimal>,
        #[arg(long)]
        json: bool,
    },
}

/// The hunt's flags of `account power NAME on --until-gpu`.
pub struct HuntArgs<'a> {
    pub for_at_most: Option<&'a str>,
    pub every: Option<&'a str>,
    pub max_spend: Option<Decimal>,
    pub wait: u64,
    pub json: bool,
}

fn limits(args: &HuntArgs<'_>) -> Result<HuntLimits, keeper::KeeperError> {
    let mut limits = HuntLimits::default();
    if let Some(text) = args.for_at_most {
        limits.for_at_most = rules::parse_duration(text)?;
    }
    if let Some(text) = args.every {
        (limits.every_min, limits.every_max) = rules::parse_every(text)?;
    }
    limits.max_spend = args.max_spend;
    Ok(limits)
}

fn endpoints() -> Result<Endpoints, ExitCode> {
    Endpoints::checked_from_env().map_err(|err| output::fail(&err))
}

fn wait(seconds: u64) -> StopWait {
    StopWait {
        limit: Duration::from_secs(seconds.max(1)),
        every: Duration::from_secs(2),
        ..StopWait::default()
    }
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

/// `account power NAME on --until-gpu`: exit 0 once on, 1 when it ended otherwise, 2 on bad
/// input.
pub fn hunt(db: &Path, name: &str, args: &HuntArgs<'_>) -> ExitCode {
    let limits = match limits(args) {
        Ok(limits) => limits,
        Err(err) => return output::fail(&err),
    };
    let endpoints = match endpoints() {
        Ok(endpoints) => endpoints,
        Err(code) => return code,
    };
    with_store(db, |store| async move {
        if let Err(err) = keeper::start(&store, name, limits, CLOCK.now()).await {
            return output::fail(&err);
        }
        let deps = HuntDeps {
            endpoints: &endpoints,
            backoff: Backoff::default(),
            wait: wait(args.wait),
            clock: &CLOCK,
            sleeper: &TokioSleeper,
        };
        let report = match keeper::run(&store, name, &deps).await {
            Ok(report) => report,
            Err(err) => return output::fail(&err),
        };
        let on = report.powered_on_at.is_some();
        if args.json {
            output::print_json(&report);
        } else if on {
            let told = keeper::notices::take(&store, CLOCK.now())
                .await
                .unwrap_or_default();
            match told.iter().find(|n| n.instance == report.instance) {
                Some(notice) => say!(
                    "{}: {} (after {} tries)",
                    report.instance,
                    notice.text,
                    report.tries
                ),
                None => say!("{}: on after {} tries", report.instance, report.tries),
            }
        } else {
            say!(
                "{}: not on after {} tries; gave up ({}): {}",
                report.instance,
                report.tries,
                report.gave_up.map_or("stopped", |g| g.as_str()),
                report.last_answer
            );
        }
        if on {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_NOT_ON)
        }
    })
}

pub fn run(db: &Path, command: &KeeperCommand) -> ExitCode {
    match command {
        KeeperCommand::List { json } => with_store(db, |store| async move {
            match keeper::list(&store, CLOCK.now()).await {
                Ok(kept) if *json => output::print_json(&serde_json::json!({ "instances": kept })),
                Ok(kept) => {
                    for k in kept {
                        let hunt = k.hunt.as_ref().map_or_else(String::new, |h| {
                            format!(
                                "  hunt {} ({} tries, until {})",
                                h.state,
                                h.report.tries,
                                h.deadline.to_rfc3339()
                            )
                        });
                        let wipe = k
                            .wipe_at
                            .map_or_else(String::new, |w| format!("  wiped at {}", w.to_rfc3339()));
                        say!(
                            "{}  {}{hunt}{wipe}  next: {:?}{} — {}",
                            k.instance,
                            k.state.map_or("—", |s| s.as_str()),
                            k.next.action,
                            k.next
                                .at
                                .map_or_else(String::new, |a| format!(" at {}", a.to_rfc3339())),
                            k.next.why
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(err) => output::fail(&err),
            }
        }),
        KeeperCommand::Policy {
            name,
            default: _,
            stop_after_idle,
            release_after_stopped,
            auto_release,
            off,
            bid_cap,
            json,
        } => {
            let change = (|| -> Result<PolicyChange, keeper::KeeperError> {
                let stage =
                    |text: &Option<String>| text.as_deref().map_or(Ok(Stage::Keep), Stage::parse);
                Ok(PolicyChange {
                    stop_after_idle: stage(stop_after_idle)?,
                    release_after_stopped: stage(release_after_stopped)?,
                    auto_release: auto_release.then_some(true),
                    // Any change turns the keeper on again unless --off says otherwise.
                    off: Some(*off),
                    bid_cap: *bid_cap,
                })
            })();
            let change = match change {
                Ok(change) => change,
                Err(err) => return output::fail(&err),
            };
            with_store(db, |store| async move {
                match keeper::set_policy(&store, name.as_deref(), change, CLOCK.now()).await {
                    Ok(policy) if *json => output::print_json(&policy),
                    Ok(policy) => {
                        say!(
                            "{}: stop after idle {}, release after stopped {}, auto-release {}{}",
                            name.as_deref().unwrap_or("default policy"),
                            policy
                                .stop_after_idle_s
                                .map_or("never".into(), |s| format!("{} min", s / 60)),
                            policy
                                .release_after_stopped_s
                                .map_or("never".into(), |s| format!("{} h", s / 3600)),
                            if policy.auto_release { "on" } else { "off" },
                            if policy.off { " (turned off)" } else { "" }
                        );
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
        KeeperCommand::LookVast { json } => {
            let endpoints = match endpoints() {
                Ok(endpoints) => endpoints,
                Err(code) => return code,
            };
            with_store(db, |store| async move {
                match keeper::vast::watch(&store, &endpoints, Backoff::default(), CLOCK.now()).await
                {
                    Ok(round) if *json => output::print_json(&round),
                    Ok(round) => {
                        for name in &round.looked {
                            let outbid = round.outbid.contains(name);
                            let rise = round.price_increases.contains(name);
                            say!(
                                "{name}: {}{}",
                                if outbid {
                                    "outbid — stopped, its storage still billing"
                                } else {
                                    "not outbid"
                                },
                                if rise {
                                    "; the host asks a higher price (account price-increase NAME accept|reject)"
                                } else {
                                    ""
                                }
                            );
                        }
                        for failed in &round.failed {
                            say!(
                                "{}: Vast.ai could not be asked: {}",
                                failed.instance,
                                failed.message
                            );
                        }
                        if round.looked.is_empty() && round.failed.is_empty() {
                            say!("no rental is linked to a Vast.ai account");
                        }
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
        KeeperCommand::Stop { name } => with_store(db, |store| async move {
            match keeper::stop(&store, name, CLOCK.now()).await {
                Ok(()) => {
                    say!("{name}: the hunt is stopped");
                    ExitCode::SUCCESS
                }
                Err(err) => output::fail(&err),
            }
        }),
        KeeperCommand::KeepAlive {
            name,
            accept_cost,
            json,
        } => {
            if let Err(code) = endpoints() {
                return code;
            }
            with_store(db, |store| async move {
                let Some(accepted) = accept_cost else {
                    return match keeper::quote(&store, name, CLOCK.now()).await {
                        Ok(quote) if *json => output::print_json(&quote),
                        Ok(quote) => {
                            say!(
                                "{}: wiped at {} unless kept; powering it on and off again costs {} {} ({} s billed). Run again with --accept-cost {} to do it.",
                                quote.instance,
                                quote.wipe_at.to_rfc3339(),
                                quote.cost,
                                quote.currency,
                                quote.billed_seconds,
                                quote.cost
                            );
                            ExitCode::SUCCESS
                        }
                        Err(err) => output::fail(&err),
                    };
                };
                let handles = Handles::default();
                let context = handles.context(&store, &CLOCK);
                match usecase::keeper::keep_alive(&context, name, *accepted).await {
                    Ok(report) if *json => output::print_json(&report),
                    Ok(report) => {
                        say!(
                            "{}: powered on and off again for {} {}; now wiped at {}",
                            report.instance,
                            report.cost,
                            report.currency,
                            report
                                .wipe_at
                                .map_or_else(|| "—".to_owned(), |w| w.to_rfc3339())
                        );
                        ExitCode::SUCCESS
                    }
                    Err(err) => output::fail(&err),
                }
            })
        }
    }
}

/// `account bid NAME PRICE_PER_HOUR`.
pub fn bid(db: &Path, name: &str, price: Decimal, json: bool) -> ExitCode {
    if let Err(code) = endpoints() {
        return code;
    }
    with_store(db, |store| async move {
        let handles = Handles::default();
        let context = handles.context(&store, &CLOCK);
        match usecase::keeper::bid(&context, name, price).await {
            Ok(report) if json => output::print_json(&report),
            Ok(report) => {
                say!(
                    "{}: bid changed to {} per GPU-hour{}",
                    report.instance,
                    report.price,
                    if report.was_outbid {
                        " (it was outbid)"
                    } else {
                        ""
                    }
                );
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}

/// `account price-increase NAME accept|reject`.
pub fn price_increase(db: &Path, name: &str, accept: bool, json: bool) -> ExitCode {
    if let Err(code) = endpoints() {
        return code;
    }
    with_store(db, |store| async move {
        let handles = Handles::default();
        let context = handles.context(&store, &CLOCK);
        match usecase::keeper::answer_increase(&context, name, accept).await {
            Ok(report) if json => output::print_json(&report),
            Ok(report) => {
                say!(
                    "{}: price increase {} ({} → {} per hour)",
                    report.instance,
                    if report.accepted {
                        "accepted"
                    } else {
                        "rejected"
                    },
                    report.increase.old_per_hour,
                    report.increase.new_per_hour
                );
                ExitCode::SUCCESS
            }
            Err(err) => output::fail(&err),
        }
    })
}

//! The status as a table: every state, each warning, the actions allowed in each.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::*;
use crate::billing::ledger::InstanceHistory;
use crate::billing::{
    BillingRules, BillingStart, EventKind, LedgerEvent, ProviderKey, StoppedBilling,
};
use crate::price_check::PriceWarning;
use crate::store::accounts::LinkRow;
use crate::store::stop_checks::StopCheckRow;
use crate::store::vast_looks::VastLookRow;
use crate::store::watchdog_looks::WatchdogLookRow;

fn t(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap() + Duration::minutes(minutes)
}

/// What a case starts from; each case changes what it is about.
#[derive(Clone)]
struct Case {
    what: &'static str,
    provider: ProviderKey,
    currency: &'static str,
    rules: BillingRules,
    /// Power events after creation at t(0): (minute, event).
    events: Vec<(i64, EventKind)>,
    link: Option<LinkRow>,
    stop_check: Option<StopCheckRow>,
    monitor: Option<GpuLook>,
    watchdog: Option<WatchdogLookRow>,
    price_flag: Option<PriceWarning>,
    vast: Option<VastLookRow>,
    /// Leasehold brought it up (`hunt` or `rent`, minute); when Verify last ran (minute), and
    /// whether a way in is saved.
    follow_up: Option<(&'static str, i64)>,
    last_verified: Option<i64>,
    has_target: bool,
    /// Asked at t(now).
    now: i64,
}

fn rules(price: Decimal, gpus: u32) -> BillingRules {
    BillingRules::simple(price, gpus)
}

fn case(what: &'static str) -> Case {
    Case {
        what,
        provider: ProviderKey::Custom,
        currency: "CNY",
        rules: rules(dec!(2.50), 1),
        events: Vec::new(),
        link: None,
        stop_check: None,
        monitor: None,
        watchdog: None,
        price_flag: None,
        vast: None,
        follow_up: None,
        last_verified: None,
        has_target: false,
        now: 120,
    }
}

fn link(state: &str, seen: i64) -> LinkRow {
    LinkRow {
        instance_id: 1,
        account_id: 1,
        remote_id: "pod7x".into(),
        remote_state: state.into(),
        seen_at: t(seen),
        imported: false,
        acknowledged: true,
        note: None,
        missing_since: None,
        held_price_per_hour: None,
        held_gpu_count: None,
        held_currency: None,
        held_since: None,
        provider_price_per_hour: None,
        provider_currency: None,
        import_warning: None,
        name: "box".into(),
    }
}

fn check(answered: bool, at: i64) -> StopCheckRow {
    StopCheckRow {
        instance_id: 1,
        checked_at: t(at),
        answered,
        via: "ssh".into(),
    }
}

fn watchdog(running: bool, unreadable: &str, at: i64) -> WatchdogLookRow {
    WatchdogLookRow {
        instance_id: 1,
        looked_at: t(at),
        installed: true,
        running,
        phase: Some("watching".into()),
        unreadable: unreadable.into(),
    }
}

/// Vast.ai's look at t(`at`): outbid or not, storage $0.12/h, a winning bid from $0.31.
fn vast_look(outbid: bool, at: i64) -> VastLookRow {
    VastLookRow {
        instance_id: 1,
        looked_at: t(at),
        interruptible: true,
        outbid,
        outbid_since: outbid.then(|| t(at)),
        per_hour: Some("0.12".into()),
        min_bid: Some("0.31".into()),
        increase_id: None,
        increase_old: None,
        increase_new: None,
        increase_seen: None,
    }
}

fn run(case: &Case) -> InstanceStatus {
    let mut events = vec![LedgerEvent::new(
        t(0),
        EventKind::Created(Box::new(case.rules.clone())),
    )];
    events.extend(
        case.events
            .iter()
            .map(|(minute, kind)| LedgerEvent::new(t(*minute), kind.clone())),
    );
    let history = InstanceHistory {
        id: 1,
        name: "box".into(),
        currency: crate::billing::Currency::parse(case.currency).unwrap(),
        events,
        budget: None,
        planned_hours: None,
    };
    let known = Known {
        history: &history,
        provider: Some(case.provider),
        link: case.link.as_ref(),
        stop_check: case.stop_check.as_ref(),
        monitor: case.monitor,
        watchdog: case.watchdog.as_ref(),
        last_backup: None,
        price_flag: case.price_flag.as_ref(),
        vast: case.vast.as_ref(),
        follow_up: case.follow_up.map(|(reason, at)| (reason, t(at))),
        last_verified: case.last_verified.map(t),
        has_target: case.has_target,
    };
    decide(&known, t(case.now)).unwrap_or_else(|err| panic!("{}: {err}", case.what))
}

use EventKind::{NoGpuStarted, Released, Started, Stopped};
use StatusAction::{
    CheckAgain, PowerOn, RaiseBid, RecordNoGpu, RecordStart, RecordStop, Release, Stop,
};
use StatusState as S;

struct Expect {
    state: StatusState,
    since: i64,
    cost: &'static str,
    may: &'static str,
    actions: &'static [StatusAction],
    warnings: &'static [&'static str],
}

// One row per line reads as the table it is.
#[rustfmt::skip]
fn table() -> Vec<(Case, Expect)> {
    let from_power_on = {
        let mut r = rules(dec!(2.50), 1);
        r.billing_starts = BillingStart::Running;
        r
    };
    let with_no_gpu = {
        let mut r = rules(dec!(2.50), 1);
        r.no_gpu_rate = Some(dec!(0.10));
        r
    };
    let with_storage = {
        let mut r = rules(dec!(2.50), 1);
        r.stopped_billing = StoppedBilling::Storage { rate: dec!(0.10) };
        r
    };
    let runpod = |what| Case {
        provider: ProviderKey::Runpod,
        currency: "USD",
        rules: rules(dec!(0.69), 1),
        ..case(what)
    };
    let held = {
        let mut l = link("running", 110);
        l.held_price_per_hour = Some("500.00".into());
        l.held_currency = Some("USD".into());
        l.held_gpu_count = Some(1);
        l.held_since = Some(t(100));
        l
    };
    let other_currency = {
        let mut l = link("running", 110);
        l.provider_price_per_hour = Some("0.50".into());
        l.provider_currency = Some("USD".into());
        l
    };
    let missing = {
        let mut l = link("missing", 110);
        l.missing_since = Some(t(100));
        l
    };
    let imported = {
        let mut l = link("running", 110);
        l.import_warning = Some("it started 3000 days before the account was added".into());
        l
    };
    let eight = |at| GpuLook {
        at: t(at),
        gpus: 8,
        busiest_percent: 97,
    };
    let stop_at_60 = vec![(10, Started), (60, Stopped)];
    let running = vec![(10, Started)];
    let vast = |what| Case {
        provider: ProviderKey::Vast,
        currency: "USD",
        rules: rules(dec!(0.44), 1),
        ..case(what)
    };
    let raised = {
        let mut v = vast_look(false, 100);
        v.increase_id = Some(77);
        v.increase_old = Some("0.44".into());
        v.increase_new = Some("0.61".into());
        v.increase_seen = Some(t(100));
        v
    };
    vec![
        (
            Case { events: running.clone(), follow_up: Some(("hunt", 10)), ..case("a hunt powered it on, never connected") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::NOT_VERIFIED] },
        ),
        (
            Case { events: running.clone(), follow_up: Some(("rent", 0)), last_verified: Some(5), has_target: true, ..case("rented in the app, verified before it was on") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::NOT_VERIFIED] },
        ),
        (
            Case { events: running.clone(), follow_up: Some(("hunt", 10)), last_verified: Some(11), has_target: true, ..case("a hunt's power-on, verified since") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: running.clone(), vast: Some(vast_look(true, 100)), ..vast("outbid, the ledger still says running") },
            Expect { state: S::Outbid, since: 10, cost: "0.44", may: "0.44", actions: &[RaiseBid, Release], warnings: &[codes::OUTBID] },
        ),
        (
            Case { events: stop_at_60.clone(), vast: Some(vast_look(true, 90)), ..vast("outbid after the sync saw it stop: the storage bills") },
            Expect { state: S::Outbid, since: 60, cost: "0.00", may: "0.12", actions: &[RaiseBid, Release], warnings: &[codes::OUTBID] },
        ),
        (
            Case { events: running.clone(), vast: Some(vast_look(true, 5)), ..vast("an outbid seen before this power-on says nothing now") },
            Expect { state: S::Running, since: 10, cost: "0.44", may: "0.44", actions: &[Stop, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: running.clone(), vast: Some(raised), ..vast("a host's pending price increase") },
            Expect { state: S::Running, since: 10, cost: "0.44", may: "0.44", actions: &[Stop, RecordStop, Release], warnings: &[codes::PRICE_INCREASE_PENDING] },
        ),
        (
            Case { rules: from_power_on, ..case("created, billed from power-on: is it on?") },
            Expect { state: S::Created, since: 0, cost: "0.00", may: "2.50", actions: &[RecordStart, PowerOn, Release], warnings: &[] },
        ),
        (
            case("created, billed from creation"),
            Expect { state: S::Created, since: 0, cost: "2.50", may: "2.50", actions: &[RecordStart, PowerOn, Release], warnings: &[] },
        ),
        (
            Case { events: running.clone(), ..case("running") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: running.clone(), rules: with_no_gpu.clone(), ..case("running where a no-GPU mode exists") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, RecordNoGpu, Release], warnings: &[] },
        ),
        (
            Case { events: vec![(10, NoGpuStarted)], rules: with_no_gpu, ..case("running without GPU") },
            Expect { state: S::RunningNoGpu, since: 10, cost: "0.10", may: "0.10", actions: &[Stop, RecordStart, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: stop_at_60.clone(), ..case("stopped, nothing billed while stopped") },
            Expect { state: S::Stopped, since: 60, cost: "0.00", may: "0.00", actions: &[PowerOn, RecordStart, Release], warnings: &[] },
        ),
        (
            Case { events: stop_at_60.clone(), rules: with_storage, ..case("stopped, its storage billed") },
            Expect { state: S::Stopped, since: 60, cost: "0.10", may: "0.10", actions: &[PowerOn, RecordStart, Release], warnings: &[] },
        ),
        (
            Case { events: stop_at_60.clone(), ..runpod("a stopped pod whose rules forget the volume") },
            Expect { state: S::Stopped, since: 60, cost: "0.00", may: "0.00", actions: &[PowerOn, RecordStart, Release], warnings: &[codes::STORAGE_RATE_UNKNOWN] },
        ),
        (
            Case { events: stop_at_60.clone(), stop_check: Some(check(true, 61)), ..case("a stop a later look contradicts") },
            Expect { state: S::StopUnconfirmed, since: 60, cost: "0.00", may: "2.50", actions: &[CheckAgain, RecordStart, Release], warnings: &[codes::STOP_UNCONFIRMED] },
        ),
        (
            Case { events: stop_at_60.clone(), stop_check: Some(check(true, 59)), ..case("a look from before the stop proves nothing") },
            Expect { state: S::Stopped, since: 60, cost: "0.00", may: "0.00", actions: &[PowerOn, RecordStart, Release], warnings: &[] },
        ),
        (
            Case { events: stop_at_60.clone(), stop_check: Some(check(false, 61)), ..case("a stop confirmed by silence") },
            Expect { state: S::Stopped, since: 60, cost: "0.00", may: "0.00", actions: &[PowerOn, RecordStart, Release], warnings: &[] },
        ),
        (
            Case { events: stop_at_60.clone(), link: Some(link("running", 90)), ..runpod("a stop the provider's listing contradicts") },
            Expect { state: S::StopUnconfirmed, since: 60, cost: "0.00", may: "0.69", actions: &[CheckAgain, RecordStart, Release], warnings: &[codes::STOP_UNCONFIRMED] },
        ),
        (
            Case { events: running.clone(), link: Some(missing.clone()), ..runpod("running, missing from the listing") },
            Expect { state: S::MissingAtProvider, since: 100, cost: "0.69", may: "0.69", actions: &[Release, RecordStop], warnings: &[codes::MISSING_AT_PROVIDER] },
        ),
        (
            Case { events: stop_at_60, link: Some(missing), ..runpod("stopped, missing from the listing") },
            Expect { state: S::MissingAtProvider, since: 100, cost: "0.00", may: "0.00", actions: &[Release], warnings: &[codes::MISSING_AT_PROVIDER] },
        ),
        (
            Case { events: vec![(10, Started), (60, Released)], ..case("released") },
            Expect { state: S::Released, since: 60, cost: "0.00", may: "0.00", actions: &[], warnings: &[] },
        ),
        (
            Case { events: vec![(10, Started), (60, Released)], link: Some(link("gone", 70)), ..runpod("released, and the provider says so") },
            Expect { state: S::Released, since: 60, cost: "0.00", may: "0.00", actions: &[], warnings: &[] },
        ),
        (
            Case { events: vec![(10, Started), (60, Released)], link: Some(link("running", 50)), ..runpod("released after the provider's last listing") },
            Expect { state: S::Released, since: 60, cost: "0.00", may: "0.00", actions: &[], warnings: &[] },
        ),
        (
            Case { events: vec![(10, Started), (60, Released)], link: Some(link("running", 90)), ..runpod("released, still listed as running") },
            Expect { state: S::ReleasedButListed, since: 60, cost: "0.00", may: "0.69", actions: &[], warnings: &[codes::RELEASED_BUT_LISTED] },
        ),
        (
            Case { events: running.clone(), link: Some(held), ..runpod("a price change held back") },
            Expect { state: S::Running, since: 10, cost: "0.69", may: "0.69", actions: &[Stop, RecordStop, Release], warnings: &[codes::PRICE_HELD] },
        ),
        (
            Case { events: running.clone(), link: Some(other_currency), ..case("the provider bills in another currency") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::CURRENCY_DIFFERS] },
        ),
        (
            Case { events: running.clone(), monitor: Some(eight(118)), ..case("the machine has 8 GPUs, the rental says 1") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::GPU_COUNT_DIFFERS] },
        ),
        (
            Case { events: running.clone(), monitor: Some(eight(90)), ..case("an old look at 8 GPUs says nothing now") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: running.clone(), watchdog: Some(watchdog(true, "gpu", 100)), ..case("a watchdog that cannot read the GPU") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::WATCHDOG_NOT_PROTECTING] },
        ),
        (
            Case { events: running.clone(), watchdog: Some(watchdog(true, "", 100)), ..case("a watchdog that reads everything") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: running.clone(), watchdog: Some(watchdog(false, "", 100)), ..case("a watchdog installed, not running") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::WATCHDOG_NOT_RUNNING] },
        ),
        (
            Case { events: running.clone(), watchdog: Some(watchdog(true, "gpu", 5)), ..case("a watchdog look from before this power-on") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[] },
        ),
        (
            Case { events: running, link: Some(imported), ..case("an import that needs a look") },
            Expect { state: S::Running, since: 10, cost: "2.50", may: "2.50", actions: &[Stop, RecordStop, Release], warnings: &[codes::IMPORT_NEEDS_LOOK] },
        ),
    ]
}

#[test]
fn every_case_of_the_table_decides_its_state_cost_actions_and_warnings() {
    let mut states = std::collections::HashSet::new();
    let mut warnings = std::collections::HashSet::new();
    for (case, expect) in table() {
        let status = run(&case);
        let what = case.what;
        assert_eq!(status.state, expect.state, "{what}: state");
        assert_eq!(status.since, t(expect.since), "{what}: since");
        assert_eq!(
            status.cost_per_hour.to_string(),
            expect.cost,
            "{what}: cost per hour"
        );
        assert_eq!(
            status.may_cost_per_hour.to_string(),
            expect.may,
            "{what}: may cost per hour"
        );
        assert_eq!(status.actions, expect.actions, "{what}: actions");
        let codes: Vec<&str> = status.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, expect.warnings, "{what}: warnings");
        states.insert(status.state);
        warnings.extend(codes.iter().map(|c| (*c).to_owned()));
    }
    for state in StatusState::ALL {
        assert!(
            states.contains(&state),
            "the table has no case for {state:?}"
        );
    }
    for code in codes::ALL {
        assert!(warnings.contains(code), "the table has no case for {code}");
    }
}

#[test]
fn stop_is_never_offered_on_created_and_never_follows_record_stop() {
    for (case, _) in table() {
        let status = run(&case);
        if status.state == S::Created {
            assert!(
                !status.actions.contains(&Stop),
                "{}: Stop on created",
                case.what
            );
        }
        if let Some(record) = status.actions.iter().position(|a| *a == RecordStop) {
            assert_ne!(
                record, 0,
                "{}: recording a stop is never the first choice",
                case.what
            );
            if let Some(stop) = status.actions.iter().position(|a| *a == Stop) {
                assert!(
                    stop < record,
                    "{}: Stop comes before recording one",
                    case.what
                );
            }
        }
    }
}

#[test]
fn the_gpu_card_names_the_count_and_the_new_hourly_price() {
    let status = run(&Case {
        events: vec![(10, Started)],
        monitor: Some(GpuLook {
            at: t(118),
            gpus: 8,
            busiest_percent: 40,
        }),
        ..case("8 GPUs")
    });
    let warning = &status.warnings[0];
    assert_eq!(warning.params["seen"], "8");
    assert_eq!(warning.params["recorded"], "1");
    assert_eq!(warning.params["price"], "20.00", "8 × 2.50 an hour");
    assert_eq!(warning.params["currency"], "CNY");
    assert!(
        warning.message.contains("update to 8 (20.00 CNY/h)"),
        "{}",
        warning.message
    );
}

#[test]
fn a_held_price_says_who_bills_what_from_when() {
    let mut held = link("running", 110);
    held.held_price_per_hour = Some("500.00".into());
    held.held_currency = Some("USD".into());
    held.held_since = Some(t(100));
    let status = run(&Case {
        provider: ProviderKey::Runpod,
        currency: "USD",
        rules: rules(dec!(0.50), 1),
        events: vec![(10, Started)],
        link: Some(held),
        ..case("held")
    });
    let warning = &status.warnings[0];
    assert_eq!(warning.params["provider"], "runpod");
    assert_eq!(warning.params["from"], "0.50");
    assert_eq!(warning.params["to"], "500.00");
    assert_eq!(warning.params["since"], t(100).to_rfc3339());
    assert!(
        warning.message.starts_with("RunPod now bills 500.00 USD/h"),
        "{}",
        warning.message
    );
}

#[test]
fn a_price_that_looks_wrong_is_flagged_until_released_and_never_for_the_currency() {
    let mut typo = case("360 yuan an hour for a 4090");
    typo.events = vec![(1, Started)];
    typo.price_flag = Some(PriceWarning::PaysForTheCard {
        card_price: dec!(11352.90),
        hours: dec!(31.5),
        converted_at: None,
    });
    let status = run(&typo);
    let warning = status
        .warnings
        .iter()
        .find(|w| w.code == "status.price_unusual")
        .expect("the flag");
    assert_eq!(warning.params["kind"], "pays_for_the_card");
    assert_eq!(warning.params["hours"], "31.5");
    assert!(warning.message.contains("typo"), "{}", warning.message);

    let mut released = typo.clone();
    released.events.push((60, Released));
    assert!(!run(&released).has_warning("status.price_unusual"));

    let mut currency = typo;
    currency.price_flag = Some(PriceWarning::CurrencyDiffers {
        expected: "USD".into(),
    });
    assert!(!run(&currency).has_warning("status.price_unusual"));
}

#[test]
fn facts_name_their_source_and_come_oldest_first() {
    let status = run(&Case {
        events: vec![(10, Started), (60, Stopped)],
        stop_check: Some(check(true, 61)),
        link: Some(link("running", 90)),
        ..case("facts")
    });
    let sources: Vec<FactSource> = status.facts.iter().map(|f| f.source).collect();
    assert_eq!(
        sources,
        [FactSource::Ledger, FactSource::Ssh, FactSource::Provider]
    );
    assert!(status.facts.windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(status.facts[1].says, "it still answered after the stop");
}

#[test]
fn the_json_has_exactly_the_contracts_keys() {
    let status = run(&Case {
        events: vec![(10, Started)],
        ..case("json")
    });
    let value = serde_json::to_value(&status).unwrap();
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "actions",
            "cost_per_hour",
            "currency",
            "facts",
            "instance",
            "may_cost_per_hour",
            "since",
            "state",
            "warnings"
        ]
    );
    assert_eq!(value["state"], "running");
    assert_eq!(
        value["cost_per_hour"], "2.50",
        "amounts are decimal strings"
    );
    assert_eq!(value["actions"][0], "stop");
}

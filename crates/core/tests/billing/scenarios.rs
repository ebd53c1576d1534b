//! Table tests: the seeds' billing scenarios and every rule field, each with the expected bill
//! worked out by hand.

use leasehold_core::billing::engine::compute;
use leasehold_core::billing::report::BudgetUse;
use leasehold_core::billing::EventKind::{
    NoGpuStarted, Released, RuleChanged, Started, Stopped, TrafficRecorded,
};
use leasehold_core::billing::{
    BillingError, BillingStart, Granularity, InstanceState, StoppedBilling,
};
use leasehold_core::Coded;

use crate::common::*;

#[test]
fn ten_hours_on_a_4090_costs_price_times_ten() {
    let r = rules("2.50");
    let events = [created(h(0), &r), ev(h(0), Started), ev(h(10), Stopped)];
    assert_eq!(
        total_at(&events, h(30)),
        d("25"),
        "10 h × 2.50, nothing while stopped"
    );
}

#[test]
fn split_job_with_a_long_stop_is_priced_by_the_stopped_rule() {
    // The seeds' example: a 10-hour job as two 5-hour runs with a 20-hour stop between.
    let cases = [
        (
            StoppedBilling::None,
            "25",
            "free while stopped: same as one run",
        ),
        (
            StoppedBilling::Storage { rate: d("0.10") },
            "27",
            "storage 0.10 × 20 h on top",
        ),
        (
            StoppedBilling::Rate { rate: d("1.00") },
            "45",
            "a 1.00/h stopped rate × 20 h on top",
        ),
        (
            StoppedBilling::Rate { rate: d("2.50") },
            "75",
            "billed as if running: triple",
        ),
    ];
    for (stopped_billing, expected, why) in cases {
        let mut r = rules("2.50");
        r.stopped_billing = stopped_billing;
        let events = [
            created(h(0), &r),
            ev(h(0), Started),
            ev(h(5), Stopped),
            ev(h(25), Started),
            ev(h(30), Stopped),
            ev(h(30), Released),
        ];
        assert_eq!(total_at(&events, h(40)), d(expected), "{why}");
    }
}

#[test]
fn billing_from_creation_charges_the_wait_before_power_on() {
    for (starts, expected, why) in [
        (BillingStart::Created, "27.5", "11 h from creation"),
        (BillingStart::Running, "25", "10 h from the first power-on"),
    ] {
        let mut r = rules("2.50");
        r.billing_starts = starts;
        let events = [created(h(0), &r), ev(h(1), Started), ev(h(11), Stopped)];
        let costing = cost_at(&events, h(12));
        assert_eq!(
            costing.total().expect("the total fits"),
            d(expected),
            "{why}"
        );
        let billing_from = if starts == BillingStart::Created {
            h(0)
        } else {
            h(1)
        };
        assert_eq!(costing.billing_started_at, Some(billing_from));
    }
}

#[test]
fn created_but_never_started_under_power_on_billing_costs_nothing() {
    let mut r = rules("2.50");
    r.billing_starts = BillingStart::Running;
    r.public_ip_per_hour = d("0.5");
    let events = [created(h(0), &r)];
    let costing = cost_at(&events, h(48));
    assert_eq!(
        costing.total().expect("the total fits"),
        d("0"),
        "the meter has not started: not even fees"
    );
    assert_eq!(costing.burn_rate_per_hour, d("0"));
}

#[test]
fn price_is_per_gpu_and_multiplied_by_the_count() {
    let mut r = rules("2.50");
    r.gpu_count = 4;
    let events = [created(h(0), &r), ev(h(0), Started)];
    assert_eq!(total_at(&events, h(2)), d("20"), "4 GPUs × 2.50 × 2 h");
}

#[test]
fn each_stopped_billing_rule_lands_in_its_own_category() {
    let cases = [
        (StoppedBilling::None, "0", "0"),
        (StoppedBilling::Storage { rate: d("0.2") }, "0", "2"),
        (StoppedBilling::Rate { rate: d("0.3") }, "3", "0"),
    ];
    for (stopped_billing, stopped, storage) in cases {
        let mut r = rules("1");
        r.stopped_billing = stopped_billing;
        let events = [created(h(0), &r), ev(h(0), Started), ev(h(1), Stopped)];
        let money = cost_at(&events, h(11)).charges.in_money();
        assert_eq!(money.compute, d("1"), "{stopped_billing}: one running hour");
        assert_eq!(
            money.stopped,
            d(stopped),
            "{stopped_billing}: 10 stopped hours"
        );
        assert_eq!(
            money.storage,
            d(storage),
            "{stopped_billing}: 10 stopped hours"
        );
    }
}

#[test]
fn no_gpu_mode_bills_its_own_rate_and_needs_one() {
    let mut r = rules("2");
    r.no_gpu_rate = Some(d("0.1"));
    let events = [
        created(h(0), &r),
        ev(h(0), Started),
        ev(h(1), Stopped),
        ev(h(2), NoGpuStarted),
        ev(h(12), Stopped),
    ];
    let costing = cost_at(&events, h(20));
    let money = costing.charges.in_money();
    assert_eq!(money.compute, d("2"));
    assert_eq!(money.no_gpu, d("1"), "10 h × 0.1 in no-GPU mode");
    assert_eq!(costing.total().expect("the total fits"), d("3"));

    let without_rate = [created(h(0), &rules("2")), ev(h(1), NoGpuStarted)];
    let err = compute(&without_rate, h(2)).expect_err("no rate, no no-GPU mode");
    assert_eq!(err.code(), "billing.no_gpu_unavailable");
}

#[test]
fn disk_snapshot_and_ip_fees_run_in_every_billed_state() {
    let mut r = rules("2");
    r.data_disk_per_hour = d("0.05");
    r.snapshot_per_hour = d("0.01");
    r.public_ip_per_hour = d("0.02");
    let events = [
        created(h(0), &r),
        ev(h(0), Started),
        ev(h(10), Stopped),
        ev(h(100), Released),
    ];
    let money = cost_at(&events, h(200)).charges.in_money();
    assert_eq!(money.compute, d("20"));
    assert_eq!(
        money.storage,
        d("6"),
        "(0.05 + 0.01) × 100 h, stopped hours included"
    );
    assert_eq!(money.ip, d("2"), "0.02 × 100 h");
}

#[test]
fn traffic_is_charged_per_gb_at_the_rules_price() {
    let mut r = rules("1");
    r.traffic_per_gb = d("0.8");
    let events = [
        created(h(0), &r),
        ev(h(0), Started),
        ev(h(1), TrafficRecorded(d("12.5"))),
        ev(h(2), TrafficRecorded(d("2.5"))),
    ];
    let costing = cost_at(&events, h(3));
    assert_eq!(costing.charges.in_money().traffic, d("12"), "15 GB × 0.8");
    assert_eq!(costing.total().expect("the total fits"), d("15"));
    assert_eq!(
        costing.burn_rate_per_hour,
        d("1"),
        "traffic is not part of the burn rate"
    );
}

#[test]
fn granularity_rounds_each_session_up_to_whole_units() {
    // (granularity, session seconds, billed seconds)
    let cases = [
        (Granularity::Second, 3660, 3660),
        (Granularity::Minute, 3660, 3660),
        (Granularity::Hour, 3660, 7200),
        (Granularity::Minute, 30, 60),
        (Granularity::Minute, 61, 120),
        (Granularity::Hour, 3600, 3600),
        (Granularity::Second, 0, 0),
    ];
    for (granularity, session, billed) in cases {
        let mut r = rules("3.6");
        r.granularity = granularity;
        let events = [
            created(s(0), &r),
            ev(s(0), Started),
            ev(s(session), Stopped),
        ];
        let expected = d("3.6") * rust_decimal::Decimal::from(billed) / d("3600");
        assert_eq!(
            total_at(&events, s(session + 100_000)),
            expected,
            "{granularity:?}: {session} s billed as {billed} s"
        );
    }
}

#[test]
fn a_new_session_opens_a_new_unit() {
    let mut r = rules("1");
    r.granularity = Granularity::Hour;
    // Two 10-minute sessions inside the same clock hour: two hourly units.
    let events = [
        created(s(0), &r),
        ev(s(0), Started),
        ev(s(600), Stopped),
        ev(s(1200), Started),
        ev(s(1800), Stopped),
    ];
    assert_eq!(total_at(&events, s(7200)), d("2"));
}

#[test]
fn a_price_change_applies_from_the_next_unit() {
    let mut old = rules("2");
    old.granularity = Granularity::Hour;
    let mut new = old.clone();
    new.price_per_gpu_hour = d("3");
    // Change at 1.5 h: unit 2 (1–2 h) began at the old price; units 3 and 4 at the new one.
    let events = [
        created(s(0), &old),
        ev(s(0), Started),
        ev(s(5400), RuleChanged(Box::new(new))),
        ev(s(4 * 3600), Stopped),
    ];
    assert_eq!(total_at(&events, s(5 * 3600)), d("10"), "2 + 2 + 3 + 3");
}

#[test]
fn a_stopped_instance_shows_its_wipe_date_until_restarted() {
    let mut r = rules("1");
    r.wipe_after_stopped_days = Some(15);
    let events = [created(h(0), &r), ev(h(0), Started), ev(h(5), Stopped)];
    assert_eq!(
        cost_at(&events, h(6)).wipe_at,
        Some(h(5 + 15 * 24)),
        "AutoDL: 15 days stopped"
    );
    let restarted = [
        created(h(0), &r),
        ev(h(0), Started),
        ev(h(5), Stopped),
        ev(h(7), Started),
    ];
    assert_eq!(
        cost_at(&restarted, h(8)).wipe_at,
        None,
        "running instances are not wiped"
    );
}

#[test]
fn burn_rate_follows_the_current_state() {
    let mut r = rules("2");
    r.gpu_count = 2;
    r.public_ip_per_hour = d("0.1");
    r.stopped_billing = StoppedBilling::Storage { rate: d("0.3") };
    let events = [
        created(h(0), &r),
        ev(h(0), Started),
        ev(h(2), Stopped),
        ev(h(4), Released),
    ];
    assert_eq!(
        cost_at(&events, h(1)).burn_rate_per_hour,
        d("4.1"),
        "running: 2 × 2 + IP"
    );
    assert_eq!(
        cost_at(&events, h(3)).burn_rate_per_hour,
        d("0.4"),
        "stopped: storage + IP"
    );
    assert_eq!(
        cost_at(&events, h(5)).burn_rate_per_hour,
        d("0"),
        "released"
    );
}

#[test]
fn events_after_now_have_not_happened_yet() {
    let r = rules("1");
    let events = [created(h(0), &r), ev(h(0), Started), ev(h(10), Stopped)];
    let costing = cost_at(&events, h(4));
    assert_eq!(costing.total().expect("the total fits"), d("4"));
    assert_eq!(costing.state, Some(InstanceState::Running));
    let before_creation = cost_at(&events, h(-1));
    assert_eq!(before_creation.state, None, "not created yet at that time");
    assert_eq!(before_creation.total().expect("the total fits"), d("0"));
}

#[test]
fn intervals_add_up_to_the_total() {
    let mut r = rules("2");
    r.stopped_billing = StoppedBilling::Rate { rate: d("0.5") };
    r.data_disk_per_hour = d("0.01");
    let events = [
        created(h(0), &r),
        ev(h(0), Started),
        ev(h(3), Stopped),
        ev(h(5), Started),
    ];
    let costing = cost_at(&events, h(6));
    let states: Vec<_> = costing.intervals.iter().map(|i| i.state).collect();
    assert_eq!(
        states,
        [
            InstanceState::Running,
            InstanceState::Stopped,
            InstanceState::Running
        ]
    );
    let sum: rust_decimal::Decimal = costing
        .intervals
        .iter()
        .map(|i| i.charges.total().expect("the total fits"))
        .sum();
    assert_eq!(
        sum,
        costing.total().expect("the total fits"),
        "the timeline explains the whole bill"
    );
    assert!(costing.intervals.last().is_some_and(|i| i.ongoing));
}

#[test]
fn budget_warnings_at_50_80_and_100_percent() {
    let cases = [
        ("49.99", None),
        ("50", Some(50)),
        ("79.9", Some(50)),
        ("80", Some(80)),
        ("100", Some(100)),
        ("150", Some(100)),
    ];
    for (used, threshold) in cases {
        let budget = BudgetUse::new(d("100"), d(used), d("1"), h(0)).expect("the budget fits");
        assert_eq!(budget.threshold_reached, threshold, "{used} of 100 spent");
    }
    let budget = BudgetUse::new(d("100"), d("90"), d("2.5"), h(0)).expect("the budget fits");
    assert_eq!(budget.exhausted_at, Some(h(4)), "10 left at 2.5/h: 4 hours");
    assert_eq!(budget.percent_used, d("90.0"));
}

#[test]
fn refused_ledgers_say_why_with_stable_codes() {
    let r = rules("1");
    let cases: Vec<(Vec<leasehold_core::billing::LedgerEvent>, &str)> = vec![
        (vec![ev(h(0), Started)], "billing.not_created"),
        (vec![ev(h(0), Released)], "billing.not_created"),
        (
            vec![created(h(5), &r), ev(h(4), Started)],
            "billing.before_creation",
        ),
        (
            vec![created(h(0), &r), ev(h(5), Started), ev(h(4), Stopped)],
            "billing.out_of_order",
        ),
        (
            vec![created(h(0), &r), ev(h(1), Released), ev(h(2), Started)],
            "billing.after_release",
        ),
        (
            vec![created(h(0), &r), ev(h(1), Started), ev(h(2), Started)],
            "billing.invalid_transition",
        ),
        (vec![created(h(0), &rules("0"))], "billing.invalid_price"),
        (vec![created(h(0), &rules("-2.5"))], "billing.invalid_price"),
        (
            vec![created(h(0), &r), ev(h(1), TrafficRecorded(d("-1")))],
            "billing.negative_amount",
        ),
    ];
    for (events, code) in cases {
        let err: BillingError = compute(&events, h(10)).expect_err(code);
        assert_eq!(err.code(), code, "{err}");
        assert!(err.is_bad_input(), "{code} is the caller's mistake");
    }
}

#[test]
fn every_rule_field_is_validated() {
    let mut negative_fee = rules("1");
    negative_fee.public_ip_per_hour = d("-0.1");
    let mut no_gpus = rules("1");
    no_gpus.gpu_count = 0;
    let mut zero_wipe = rules("1");
    zero_wipe.wipe_after_stopped_days = Some(0);
    let mut negative_stopped = rules("1");
    negative_stopped.stopped_billing = StoppedBilling::Storage { rate: d("-1") };
    for (r, code) in [
        (negative_fee, "billing.negative_amount"),
        (no_gpus, "billing.invalid_input"),
        (zero_wipe, "billing.invalid_input"),
        (negative_stopped, "billing.negative_amount"),
    ] {
        let err = r.validate().expect_err(code);
        assert_eq!(err.code(), code, "{err}");
    }
}

#[test]
fn rule_fields_parse_from_the_cli_syntax() {
    assert_eq!(
        "none".parse::<StoppedBilling>().ok(),
        Some(StoppedBilling::None)
    );
    assert_eq!(
        "storage:0.15".parse::<StoppedBilling>().ok(),
        Some(StoppedBilling::Storage { rate: d("0.15") })
    );
    assert_eq!(
        "rate:1.2".parse::<StoppedBilling>().ok(),
        Some(StoppedBilling::Rate { rate: d("1.2") })
    );
    for bad in ["free", "storage:", "rate:abc", "storage"] {
        assert!(
            bad.parse::<StoppedBilling>().is_err(),
            "{bad:?} must be refused"
        );
    }
    assert_eq!("hour".parse::<Granularity>().ok(), Some(Granularity::Hour));
    assert!("fortnight".parse::<Granularity>().is_err());
    assert_eq!(
        "running".parse::<BillingStart>().ok(),
        Some(BillingStart::Running)
    );
    assert!("later".parse::<BillingStart>().is_err());
}

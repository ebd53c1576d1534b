//! Properties of the cost engine over random ledgers.

use leasehold_core::billing::engine::compute;
use leasehold_core::billing::money::display_amount;
use leasehold_core::billing::{
    BillingRules, BillingStart, EventKind, Granularity, InstanceState, LedgerEvent, StoppedBilling,
};
use proptest::prelude::*;
use rust_decimal::Decimal;

use crate::common::*;

/// One step of a random ledger: what to try, and how many seconds after the previous event.
#[derive(Debug, Clone)]
enum Step {
    Start,
    Stop,
    NoGpu,
    Traffic(u32),
    NewPrice(u32),
}

fn granularity() -> impl Strategy<Value = Granularity> {
    prop_oneof![
        Just(Granularity::Second),
        Just(Granularity::Minute),
        Just(Granularity::Hour)
    ]
}

fn stopped_billing() -> impl Strategy<Value = StoppedBilling> {
    prop_oneof![
        Just(StoppedBilling::None),
        (1u32..500).prop_map(|c| StoppedBilling::Storage {
            rate: Decimal::new(c.into(), 2)
        }),
        (1u32..500).prop_map(|c| StoppedBilling::Rate {
            rate: Decimal::new(c.into(), 2)
        }),
    ]
}

fn rules_strategy() -> impl Strategy<Value = BillingRules> {
    (
        1u32..2000,
        1u32..9,
        prop::bool::ANY,
        stopped_billing(),
        granularity(),
        0u32..50,
        0u32..50,
    )
        .prop_map(
            |(cents, count, from_creation, stopped, granularity, disk, ip)| BillingRules {
                price_per_gpu_hour: Decimal::new(cents.into(), 2),
                gpu_count: count,
                billing_starts: if from_creation {
                    BillingStart::Created
                } else {
                    BillingStart::Running
                },
                stopped_billing: stopped,
                no_gpu_rate: Some(Decimal::new(10, 2)),
                data_disk_per_hour: Decimal::new(disk.into(), 3),
                snapshot_per_hour: Decimal::ZERO,
                public_ip_per_hour: Decimal::new(ip.into(), 3),
                traffic_per_gb: Decimal::new(5, 1),
                granularity,
                wipe_after_stopped_days: Some(15),
            },
        )
}

fn step() -> impl Strategy<Value = (Step, i64)> {
    let kind = prop_oneof![
        4 => Just(Step::Start),
        4 => Just(Step::Stop),
        1 => Just(Step::NoGpu),
        1 => (0u32..100).prop_map(Step::Traffic),
        1 => (1u32..3000).prop_map(Step::NewPrice),
    ];
    // Gaps from zero (simultaneous events) to two days, in seconds and with sub-second parts.
    (kind, 0i64..172_800_000)
}

/// A valid ledger built from random steps: steps the state machine would refuse are skipped.
fn ledger(rules: &BillingRules, steps: &[(Step, i64)], release: bool) -> Vec<LedgerEvent> {
    let mut events = vec![created(origin(), rules)];
    let mut state = InstanceState::Created;
    let mut current = rules.clone();
    let mut at = origin();
    for (step, gap_ms) in steps {
        at += chrono::Duration::milliseconds(*gap_ms);
        let kind = match step {
            Step::Start if state != InstanceState::Running => {
                state = InstanceState::Running;
                EventKind::Started
            }
            Step::Stop if state != InstanceState::Stopped => {
                state = InstanceState::Stopped;
                EventKind::Stopped
            }
            Step::NoGpu if state != InstanceState::NoGpu => {
                state = InstanceState::NoGpu;
                EventKind::NoGpuStarted
            }
            Step::Traffic(gb) => EventKind::TrafficRecorded(Decimal::from(*gb)),
            Step::NewPrice(cents) => {
                current.price_per_gpu_hour = Decimal::new((*cents).into(), 2);
                EventKind::RuleChanged(Box::new(current.clone()))
            }
            _ => continue,
        };
        events.push(ev(at, kind));
    }
    if release {
        at += chrono::Duration::hours(1);
        events.push(ev(at, EventKind::Released));
    }
    events
}

fn last_at(events: &[LedgerEvent]) -> chrono::DateTime<chrono::Utc> {
    events.last().map_or_else(origin, |e| e.at)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cost_never_decreases_as_time_passes(
        rules in rules_strategy(),
        steps in prop::collection::vec(step(), 0..25),
        release in prop::bool::ANY,
        probes in prop::collection::vec(0i64..2_000_000, 2..12),
    ) {
        let events = ledger(&rules, &steps, release);
        let mut times: Vec<_> = probes.iter().map(|p| origin() + chrono::Duration::seconds(*p * 3)).collect();
        times.sort();
        let totals: Vec<Decimal> = times.iter().map(|t| total_at(&events, *t)).collect();
        for pair in totals.windows(2) {
            prop_assert!(pair[0] <= pair[1], "cost went down over time: {totals:?}");
        }
    }

    #[test]
    fn nothing_accrues_after_release(
        rules in rules_strategy(),
        steps in prop::collection::vec(step(), 0..25),
        later in 0i64..10_000_000,
    ) {
        let events = ledger(&rules, &steps, true);
        let released = last_at(&events);
        let at_release = cost_at(&events, released);
        let afterwards = cost_at(&events, released + chrono::Duration::seconds(later));
        prop_assert_eq!(at_release.total().expect("the total fits"), afterwards.total().expect("the total fits"));
        prop_assert_eq!(afterwards.burn_rate_per_hour, Decimal::ZERO);
        prop_assert_eq!(afterwards.state, Some(InstanceState::Released));
    }

    #[test]
    fn splitting_an_interval_with_an_unchanged_rule_never_changes_the_cost(
        rules in rules_strategy(),
        steps in prop::collection::vec(step(), 1..25),
        split_at in 0.0f64..1.0,
        now_after in 0i64..500_000,
    ) {
        let events = ledger(&rules, &steps, false);
        let end = last_at(&events);
        let span = (end - origin()).num_milliseconds();
        #[allow(clippy::cast_possible_truncation)]
        let cut = origin() + chrono::Duration::milliseconds((span as f64 * split_at) as i64);
        // Insert "the rules changed to what they already were" at `cut`.
        let position = events.iter().rposition(|e| e.at <= cut).map_or(1, |i| i + 1);
        let in_effect = events[..position]
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EventKind::Created(r) | EventKind::RuleChanged(r) => Some(r.clone()),
                _ => None,
            })
            .expect("created comes first");
        let mut split = events.clone();
        split.insert(position, ev(cut, EventKind::RuleChanged(in_effect)));
        let now = end + chrono::Duration::seconds(now_after);
        prop_assert_eq!(total_at(&events, now), total_at(&split, now));
        prop_assert_eq!(total_at(&events, cut), total_at(&split, cut));
    }

    #[test]
    fn per_second_sessions_cut_at_a_whole_second_cost_the_same(
        cents in 1u32..5000,
        session in 2i64..1_000_000,
        cut_fraction in 0.01f64..0.99,
    ) {
        let r = BillingRules::simple(Decimal::new(cents.into(), 2), 1);
        #[allow(clippy::cast_possible_truncation)]
        let cut = ((session as f64) * cut_fraction) as i64;
        let whole = [created(s(0), &r), ev(s(0), EventKind::Started), ev(s(session), EventKind::Stopped)];
        let cut_in_two = [
            created(s(0), &r),
            ev(s(0), EventKind::Started),
            ev(s(cut), EventKind::Stopped),
            ev(s(cut), EventKind::Started),
            ev(s(session), EventKind::Stopped),
        ];
        prop_assert_eq!(total_at(&whole, s(session + 10)), total_at(&cut_in_two, s(session + 10)));
    }

    #[test]
    fn free_when_stopped_adds_nothing_while_stopped(
        cents in 1u32..5000,
        run in 1i64..100_000,
        stopped_for in 0i64..10_000_000,
        granularity in granularity(),
    ) {
        let mut r = BillingRules::simple(Decimal::new(cents.into(), 2), 1);
        r.granularity = granularity;
        let events = [created(s(0), &r), ev(s(0), EventKind::Started), ev(s(run), EventKind::Stopped)];
        prop_assert_eq!(total_at(&events, s(run)), total_at(&events, s(run + stopped_for)));
    }

    #[test]
    fn coarser_granularity_never_bills_less_and_at_most_one_unit_more(
        cents in 1u32..5000,
        session_ms in 1i64..50_000_000,
    ) {
        let price = Decimal::new(cents.into(), 2);
        let cost = |granularity| {
            let mut r = BillingRules::simple(price, 1);
            r.granularity = granularity;
            let end = origin() + chrono::Duration::milliseconds(session_ms);
            let events = [created(origin(), &r), ev(origin(), EventKind::Started), ev(end, EventKind::Stopped)];
            total_at(&events, end)
        };
        let (second, minute, hour) = (cost(Granularity::Second), cost(Granularity::Minute), cost(Granularity::Hour));
        let exact = price * Decimal::from(session_ms) / Decimal::from(3_600_000);
        prop_assert!(exact <= second && second <= minute && minute <= hour, "{exact} {second} {minute} {hour}");
        prop_assert!(hour - exact < price, "rounding adds less than one hourly unit");
        // Whole units: an hourly bill is a whole number of hours.
        prop_assert_eq!((hour / price).fract(), Decimal::ZERO);
    }

    #[test]
    fn the_intervals_explain_the_whole_bill(
        rules in rules_strategy(),
        steps in prop::collection::vec(step(), 0..25),
        release in prop::bool::ANY,
        now_after in 0i64..500_000,
    ) {
        let events = ledger(&rules, &steps, release);
        let costing = cost_at(&events, last_at(&events) + chrono::Duration::seconds(now_after));
        let sum: Decimal = costing.intervals.iter().map(|i| i.charges.total().expect("the total fits")).sum();
        let parts = costing.charges.in_money();
        let by_category = parts.compute + parts.no_gpu + parts.stopped + parts.storage + parts.ip + parts.traffic;
        prop_assert_eq!(sum.round_dp(12), costing.total().expect("the total fits").round_dp(12));
        prop_assert_eq!(by_category.round_dp(12), costing.total().expect("the total fits").round_dp(12));
    }

    #[test]
    fn shown_amounts_are_the_exact_amounts_rounded_half_up(
        rules in rules_strategy(),
        steps in prop::collection::vec(step(), 0..25),
        now_after in 0i64..500_000,
    ) {
        let events = ledger(&rules, &steps, false);
        let costing = cost_at(&events, last_at(&events) + chrono::Duration::seconds(now_after));
        for interval in &costing.intervals {
            prop_assert_eq!(interval.charges.shown_total().expect("the total fits"), display_amount(interval.charges.total().expect("the total fits")));
            let exact = interval.charges.in_money();
            let shown = interval.charges.shown().expect("the parts fit");
            prop_assert_eq!(shown.compute, display_amount(exact.compute));
            prop_assert_eq!(shown.storage, display_amount(exact.storage));
            prop_assert_eq!(shown.traffic, display_amount(exact.traffic));
        }
    }

    #[test]
    fn any_event_list_is_priced_or_refused_never_a_panic(
        rules in rules_strategy(),
        raw in prop::collection::vec((0u8..7, -100_000i64..100_000), 0..30),
        now in -100_000i64..1_000_000,
    ) {
        let events: Vec<LedgerEvent> = raw
            .iter()
            .map(|(k, offset)| {
                let kind = match k {
                    0 => EventKind::Created(Box::new(rules.clone())),
                    1 => EventKind::Started,
                    2 => EventKind::Stopped,
                    3 => EventKind::NoGpuStarted,
                    4 => EventKind::Released,
                    5 => EventKind::RuleChanged(Box::new(rules.clone())),
                    _ => EventKind::TrafficRecorded(Decimal::from(*offset)),
                };
                ev(s(*offset), kind)
            })
            .collect();
        let _ = compute(&events, s(now));
    }
}

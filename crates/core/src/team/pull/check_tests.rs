//! Hand-made rows through the pulled-row checks: kept in a file of their own so `check.rs` reads
//! as the rules alone.

use super::*;

const INSTANCE: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn instance() -> PageInstance {
    PageInstance {
        uid: Some(INSTANCE.into()),
        name: Some("shared-a100".into()),
        provider: Some("autodl".into()),
        region: None,
        gpu_model: Some("A100".into()),
        currency: Some("cny".into()),
        notes: None,
        planned_hours: Some("10.50".into()),
        created_at: Some("2026-03-01T09:00:00+01:00".into()),
        recorded_by: Some("bob".into()),
    }
}

fn rules(effective_from: &str) -> serde_json::Value {
    serde_json::json!({
        "uid": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a99", "effective_from": effective_from,
        "price_per_gpu_hour": "10", "gpu_count": 1, "billing_starts": "running",
        "stopped_billing": "none", "stopped_rate": null, "no_gpu_rate": null,
        "data_disk_per_hour": "0", "snapshot_per_hour": "0", "public_ip_per_hour": "0",
        "traffic_per_gb": "0", "granularity": "second", "wipe_after_stopped_days": null
    })
}

fn event(seq: i64, kind: &str, at: &str) -> PageEvent {
    PageEvent {
        seq: Some(seq),
        uid: Some(format!("0190a1b2-c3d4-7e5f-8a9b-{seq:012}")),
        instance_uid: Some(INSTANCE.into()),
        kind: Some(kind.into()),
        at: Some(at.into()),
        recorded_by: Some("bob".into()),
        origin_seq: Some(seq),
        traffic_gb: None,
        rules: None,
    }
}

fn reason_for(row: &PageInstance) -> String {
    check_instance(row).err().unwrap_or_default()
}

/// Makes one field of a valid instance bad.
type Spoil = fn(&mut PageInstance);

#[test]
fn an_instance_is_taken_in_the_local_ledgers_forms() {
    let row = instance();
    let checked = check_instance(&row).expect("a valid instance");
    assert_eq!(checked.created_at, "2026-03-01T08:00:00+00:00");
    assert_eq!(checked.currency, "CNY");
    assert_eq!(checked.planned_hours.as_deref(), Some("10.5"));
    assert_eq!(checked.provider, "autodl");
}

#[test]
fn an_instance_failing_new_instances_checks_is_refused_with_the_reason() {
    let cases: [(Spoil, &str); 7] = [
        (|i| i.currency = Some("ZZZ".into()), "ZZZ"),
        (|i| i.planned_hours = Some("lots".into()), "lots"),
        (|i| i.planned_hours = Some("-1".into()), "greater than zero"),
        (|i| i.name = Some(" padded ".into()), "spaces"),
        (|i| i.name = Some("x".repeat(101)), "longer"),
        (|i| i.provider = Some("nowhere".into()), "nowhere"),
        (|i| i.created_at = Some("yesterday".into()), "not a time"),
    ];
    for (spoil, expected) in cases {
        let mut row = instance();
        spoil(&mut row);
        let reason = reason_for(&row);
        assert!(reason.contains(expected), "{expected:?} not in {reason:?}");
    }
    let mut row = instance();
    row.recorded_by = Some("mal\u{7}lory".into());
    assert!(reason_for(&row).contains("control"));
}

#[test]
fn events_are_checked_against_the_instance_they_claim() {
    let created = "2026-03-01T09:00:00+01:00";
    let mut good = event(1, "created", created);
    good.rules = Some(rules(created));
    let mut early = event(2, "created", "2026-03-01T07:00:00Z");
    early.rules = Some(rules("2026-03-01T07:00:00Z"));
    let mut mismatched = event(3, "rule_changed", "2026-03-01T10:00:00Z");
    mismatched.rules = Some(rules("2026-03-01T11:00:00Z"));
    let mut stranger = event(4, "started", "2026-03-01T10:00:00Z");
    stranger.instance_uid = Some("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c".into());
    let mut much_traffic = event(5, "traffic_recorded", "2026-03-01T10:00:00Z");
    much_traffic.traffic_gb = Some("1000000001".into());
    let offset = event(6, "started", "2026-03-01T11:30:00+01:00");
    let checked = check_rows(
        vec![good, early, mismatched, stranger, much_traffic, offset],
        &[instance()],
    );
    let taken: Vec<(&str, &str)> = checked
        .events
        .iter()
        .map(|e| (e.kind.as_str(), e.at.as_str()))
        .collect();
    assert_eq!(
        taken,
        [
            ("created", "2026-03-01T08:00:00+00:00"),
            ("started", "2026-03-01T10:30:00+00:00")
        ]
    );
    assert_eq!(checked.rules.len(), 1);
    assert_eq!(
        checked.rules[0].rules.effective_from,
        "2026-03-01T08:00:00+00:00"
    );
    let reasons: Vec<&str> = checked.unreadable.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(
        reasons[0].contains("not when its instance was created"),
        "{reasons:?}"
    );
    assert!(reasons[1].contains("another time"), "{reasons:?}");
    assert!(reasons[2].contains("missing"), "{reasons:?}");
    assert!(reasons[3].contains("traffic"), "{reasons:?}");
}

#[test]
fn canonical_times_sort_as_the_instants_they_name() {
    let times = [
        "2026-11-03T11:30:00+01:00",
        "2026-11-03T11:00:00+00:00",
        "2026-11-03T10:59:59.5Z",
    ];
    let mut canonical: Vec<String> = times.iter().map(|t| canonical_time(t).unwrap()).collect();
    canonical.sort();
    assert_eq!(
        canonical,
        [
            "2026-11-03T10:30:00+00:00",
            "2026-11-03T10:59:59.500+00:00",
            "2026-11-03T11:00:00+00:00"
        ]
    );
    assert!(canonical_time("2026-11-03 11:30").is_err());
}

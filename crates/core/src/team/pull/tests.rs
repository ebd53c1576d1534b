use super::super::copy_binary::CopyRows;
use super::fetch::next_page;
use super::read::{prepare, COPY_COLUMNS};
use super::*;

/// The page sizes a pull of `total` events asks for, the first page included.
fn page_sizes(total: i64) -> Vec<i64> {
    let mut sizes = vec![FIRST_PAGE];
    let mut at = FIRST_PAGE.min(total);
    while at < total {
        let limit = next_page(sizes[sizes.len() - 1], total - at);
        sizes.push(limit);
        at += limit.min(total - at);
    }
    sizes
}

#[test]
fn pages_grow_to_the_most_and_shrink_again_before_the_end() {
    let sizes = page_sizes(100_000);
    assert_eq!(
        sizes,
        [2_500, 5_000, 10_000, 20_000, 25_000, 18_750, 9_375, 4_687, 2_500, 2_500]
    );
    // A short pull never reaches the largest page; a long one stays there in its middle.
    assert_eq!(page_sizes(12_000), [2_500, 4_750, 2_500, 2_500]);
    let long = page_sizes(1_000_000);
    assert!(long.iter().filter(|&&size| size == PAGE).count() > 30);
    assert_eq!(long.last(), Some(&FIRST_PAGE));
    assert!(long.iter().all(|&size| (FIRST_PAGE..=PAGE).contains(&size)));
}

const INSTANCE: &str = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn text_row(rows: &mut CopyRows, fields: [Option<&str>; COPY_COLUMNS]) {
    rows.row();
    for field in fields {
        rows.text(field);
    }
}

fn head(rows: &mut CopyRows, last_seq: &str) {
    let mut fields = [None; COPY_COLUMNS];
    fields[0] = Some("h");
    fields[1] = Some(last_seq);
    text_row(rows, fields);
}

fn event(rows: &mut CopyRows, seq: &str, uid: &str, kind: &str, rules: Option<&str>) {
    text_row(
        rows,
        [
            Some("e"),
            Some(seq),
            Some(uid),
            Some(INSTANCE),
            Some(kind),
            Some("2026-03-01T08:00:00Z"),
            Some("bob"),
            Some("7"),
            None,
            rules,
            None,
        ],
    );
}

fn instance(rows: &mut CopyRows, name: &str) {
    text_row(
        rows,
        [
            Some("i"),
            Some(INSTANCE),
            Some(name),
            Some("autodl"),
            None,
            Some("A100"),
            Some("CNY"),
            Some("tab\there\nnewline \\N \"quoted\""),
            None,
            Some("2026-03-01T08:00:00Z"),
            Some("bob"),
        ],
    );
}

fn record(rows: &mut CopyRows, seq: &str, body: Option<&str>) {
    text_row(
        rows,
        [
            Some("r"),
            Some(seq),
            Some("budget"),
            Some(INSTANCE),
            Some(INSTANCE),
            body,
            Some("3"),
            Some("0190a1b2-c3d4-7e5f-8a9b-00000000aaaa"),
            Some("bob"),
            None,
            None,
        ],
    );
}

fn budget(rows: &mut CopyRows, currency: &str, amount: &str) {
    let mut fields = [None; COPY_COLUMNS];
    fields[0] = Some("b");
    fields[1] = Some(currency);
    fields[2] = Some(amount);
    fields[3] = Some("alice");
    text_row(rows, fields);
}

#[test]
fn a_page_reads_every_kind_of_row_in_any_order_and_checks_them() {
    let mut rows = CopyRows::new(COPY_COLUMNS as i16);
    event(
        &mut rows,
        "41",
        "0190a1b2-c3d4-7e5f-8a9b-000000000001",
        "started",
        None,
    );
    instance(&mut rows, "shared-a100");
    // Rules that are not JSON at all: the event is refused, not the page.
    event(
        &mut rows,
        "42",
        "0190a1b2-c3d4-7e5f-8a9b-000000000002",
        "rule_changed",
        Some("{not json"),
    );
    record(&mut rows, "44", Some(r#"{"amount": "300"}"#));
    record(&mut rows, "47", None);
    budget(&mut rows, "CNY", "2000");
    head(&mut rows, "50");
    let prepared = prepare(&rows.finish(), 5_000).expect("readable page");
    let page = &prepared.page;
    assert_eq!((page.head, page.events, page.last_event), (50, 2, Some(42)));
    assert_eq!((page.records, page.last_record), (2, Some(47)));
    assert!(page.caught_up());
    let instance = prepared.instances[INSTANCE].as_ref().expect("readable");
    assert_eq!(
        instance.notes.as_deref(),
        Some("tab\there\nnewline \\N \"quoted\"")
    );
    assert_eq!(instance.currency, "CNY");
    assert_eq!(prepared.events.len(), 1);
    assert_eq!(prepared.unreadable.len(), 1);
    assert!(
        prepared.unreadable[0].1.contains("rules"),
        "{:?}",
        prepared.unreadable
    );
    assert_eq!(
        prepared.records[0].body,
        Some(serde_json::json!({"amount": "300"}))
    );
    // A removed record (a cleared budget) has no body.
    assert_eq!(prepared.records[1].body, None);
    assert_eq!(prepared.records[1].version, Some(3));
    assert_eq!(prepared.budgets[0].amount.as_deref(), Some("2000"));
}

#[test]
fn a_page_without_the_counter_with_an_unknown_row_or_cut_short_is_refused() {
    let mut rows = CopyRows::new(COPY_COLUMNS as i16);
    instance(&mut rows, "shared-a100");
    let err = prepare(&rows.finish(), 5_000).err().expect("refused");
    assert!(err.to_string().contains("counter"), "{err}");

    let mut rows = CopyRows::new(COPY_COLUMNS as i16);
    head(&mut rows, "50");
    let mut odd = [None; COPY_COLUMNS];
    odd[0] = Some("x");
    text_row(&mut rows, odd);
    assert!(prepare(&rows.finish(), 5_000).is_err());

    let mut cut = CopyRows::new(COPY_COLUMNS as i16);
    head(&mut cut, "50");
    let bytes = cut.finish();
    assert!(prepare(&bytes[..bytes.len() - 1], 5_000).is_err());
}

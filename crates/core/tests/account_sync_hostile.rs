//! A sync that trusts no single answer too much (issue 35), against the hostile cases of the
//! provider stand-in: duplicate ids, tiny and huge prices, a refused AutoDL snapshot, an empty
//! listing while the direct look still says RUNNING, an AutoDL answer without `max_page`, a
//! released instance listed again at a new price, a key echoed in a 401, a 1000× price jump, a
//! price in another currency, a 2015 `createdAt`, invisible characters and a refused base URL.
//! Each time the healthy instances' changes are recorded, nothing is half-written, nothing
//! secret is stored and nothing panics.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::account::{
    self, held, sync, AccountError, AccountRef, Backoff, Endpoints, Provider,
};
use leasehold_core::billing::{ledger, InstanceState};
use leasehold_core::ssh::Secret;
use leasehold_core::store::accounts::LinkRow;
use leasehold_core::store::Store;
use leasehold_testkit::provider_standin::ProviderStandin;
use rust_decimal_macros::dec;
use serde_json::json;

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap()
}

fn unix(t: DateTime<Utc>) -> i64 {
    t.timestamp()
}

fn quick() -> Backoff {
    Backoff {
        first: Duration::from_millis(10),
        attempts: 2,
    }
}

async fn add(store: &Store, provider: Provider, var: &str, key: &str, base: &str) -> AccountRef {
    std::env::set_var(var, key);
    let account = AccountRef {
        provider,
        label: "default".to_owned(),
    };
    account::add(
        store,
        &account,
        &Secret::new(key),
        Some(var),
        &Endpoints::all_at(base),
        at(6, 0),
    )
    .await
    .expect("the key is accepted");
    account
}

async fn sync_at(
    store: &Store,
    account: &AccountRef,
    base: &str,
    now: DateTime<Utc>,
) -> Result<sync::AccountSyncReport, AccountError> {
    sync::sync_account(store, account, &Endpoints::all_at(base), quick(), now).await
}

async fn link(store: &Store, name: &str) -> LinkRow {
    let mut conn = store.pool().acquire().await.unwrap();
    let links = leasehold_core::store::accounts::all_links(&mut conn)
        .await
        .unwrap();
    links
        .into_iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("{name} is linked"))
}

async fn state(store: &Store, name: &str, now: DateTime<Utc>) -> Option<InstanceState> {
    ledger::show(store, name, now).await.unwrap().summary.state
}

fn warned(report: &sync::AccountSyncReport, words: &str) -> bool {
    report.warnings.iter().any(|w| w.contains(words))
}

#[tokio::test]
async fn duplicate_ids_and_unbillable_prices_skip_only_their_own_instances() {
    let standin = ProviderStandin::start("runpod", "k-dup");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "LH_H_RP1", "k-dup", &base).await;
    standin.set_instances(json!([
        {"id": "ok1", "name": "healthy", "state": "running", "price": "0.44", "created": unix(at(7, 0))},
        {"id": "dup", "name": "twice", "state": "running", "price": "0.5", "created": unix(at(7, 0))},
        {"id": "tiny", "name": "tiny", "state": "running", "price": "0.000001", "count": 8},
        {"id": "huge", "name": "huge", "state": "running", "price": "50000"},
    ]));
    standin.script(json!({"duplicate": ["dup"]}));
    let report = sync_at(&store, &account, &base, at(8, 0))
        .await
        .expect("a sync with warnings");
    assert_eq!(report.imported, vec!["healthy"], "{report:?}");
    assert!(
        warned(&report, "instance dup more than once"),
        "{:?}",
        report.warnings
    );
    assert!(warned(&report, "tiny"), "{:?}", report.warnings);
    assert!(
        warned(&report, "50000"),
        "the refused price is named: {:?}",
        report.warnings
    );

    // The healthy pod stops in a listing that still has the duplicate: its stop is recorded.
    standin.patch("ok1", json!({"state": "stopped"}));
    let report = sync_at(&store, &account, &base, at(9, 0)).await.unwrap();
    assert_eq!(report.events.len(), 1, "{report:?}");
    assert_eq!(report.events[0].instance, "healthy");
    assert_eq!(
        state(&store, "healthy", at(9, 0)).await,
        Some(InstanceState::Stopped)
    );

    // The duplicate goes away: the instance is imported once.
    standin.script(json!({"duplicate": []}));
    let report = sync_at(&store, &account, &base, at(9, 5)).await.unwrap();
    assert_eq!(report.imported, vec!["twice"]);
    assert!(
        standin.violations().is_empty(),
        "{:?}",
        standin.violations()
    );
}

#[tokio::test]
async fn an_empty_listing_releases_nothing_while_the_direct_look_says_running() {
    let standin = ProviderStandin::start("runpod", "k-empty");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "LH_H_RP2", "k-empty", &base).await;
    standin.set_instances(json!([
        {"id": "a1", "name": "alpha", "state": "running", "price": "0.44", "created": unix(at(7, 0))},
        {"id": "b2", "name": "beta", "state": "running", "price": "0.44", "created": unix(at(7, 0))},
    ]));
    sync_at(&store, &account, &base, at(8, 0)).await.unwrap();

    standin.script(json!({"hide": ["a1", "b2"]}));
    let report = sync_at(&store, &account, &base, at(9, 0)).await.unwrap();
    assert!(report.events.is_empty(), "nothing released: {report:?}");
    assert_eq!(
        state(&store, "alpha", at(9, 0)).await,
        Some(InstanceState::Running)
    );
    let alpha = link(&store, "alpha").await;
    assert_eq!(alpha.remote_state, "missing");
    assert_eq!(alpha.missing_since, Some(at(9, 0)));
    let looked: Vec<_> = standin
        .requests()
        .into_iter()
        .filter(|r| r["path"] == "/v2/pods/a1" && r["method"] == "GET")
        .collect();
    assert_eq!(looked.len(), 1, "a direct look by id");

    // Listed again: missing no more.
    standin.script(json!({"hide": []}));
    sync_at(&store, &account, &base, at(9, 30)).await.unwrap();
    let alpha = link(&store, "alpha").await;
    assert_eq!(
        (alpha.remote_state.as_str(), alpha.missing_since),
        ("running", None)
    );

    // Both terminated at once: the first sync only marks them missing (more than half of the
    // linked instances dropped at once), the next one releases them, dated when first missed.
    standin.patch("a1", json!({"state": "gone"}));
    standin.patch("b2", json!({"state": "gone"}));
    let first = sync_at(&store, &account, &base, at(10, 0)).await.unwrap();
    assert!(first.events.is_empty(), "{first:?}");
    assert!(warned(&first, "at once"), "{:?}", first.warnings);
    let second = sync_at(&store, &account, &base, at(10, 30)).await.unwrap();
    let released: Vec<_> = second
        .events
        .iter()
        .map(|e| (e.kind.as_str(), e.at))
        .collect();
    assert_eq!(
        released,
        vec![("released", at(10, 0)), ("released", at(10, 0))]
    );
    assert_eq!(link(&store, "beta").await.remote_state, "gone");
    assert!(
        standin.violations().is_empty(),
        "{:?}",
        standin.violations()
    );
}

#[tokio::test]
async fn a_released_instance_listed_again_warns_and_writes_nothing() {
    let standin = ProviderStandin::start("vast", "k-rel");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Vast, "LH_H_VAST1", "k-rel", &base).await;
    standin.set_instances(json!([
        {"id": 501, "name": "lora", "state": "running", "price": "0.5", "created": unix(at(7, 0))},
        {"id": 502, "name": "other", "state": "running", "price": "0.3", "created": unix(at(7, 0))},
    ]));
    sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    standin.patch("501", json!({"state": "gone"}));
    let gone = sync_at(&store, &account, &base, at(9, 0)).await.unwrap();
    assert_eq!(gone.events[0].kind, "released");
    let rows_after_release = ledger::show(&store, "lora", at(9, 0))
        .await
        .unwrap()
        .events
        .len();

    // Listed again, at a new price, beside a healthy instance that stops.
    standin.set_instances(json!([
        {"id": 501, "name": "lora", "state": "running", "price": "0.9", "created": unix(at(7, 0))},
        {"id": 502, "name": "other", "state": "stopped", "price": "0.3", "created": unix(at(7, 0))},
    ]));
    let report = sync_at(&store, &account, &base, at(10, 0))
        .await
        .expect("never a failed sync");
    assert!(warned(&report, "still lists it"), "{:?}", report.warnings);
    assert!(
        warned(&report, "may still bill 0.9"),
        "{:?}",
        report.warnings
    );
    assert_eq!(report.events.len(), 1, "{report:?}");
    assert_eq!(report.events[0].instance, "other");
    assert_eq!(
        ledger::show(&store, "lora", at(10, 0))
            .await
            .unwrap()
            .events
            .len(),
        rows_after_release,
        "nothing written after the release"
    );
    let lora = link(&store, "lora").await;
    assert_eq!(lora.remote_state, "running", "what the provider says");
    assert!(lora.note.unwrap().contains("still listed"));
}

#[tokio::test]
async fn a_thousandfold_price_jump_is_held_until_accepted_from_when_it_was_seen() {
    let standin = ProviderStandin::start("runpod", "k-jump");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "LH_H_RP3", "k-jump", &base).await;
    standin.set_instances(json!([{"id": "j1", "name": "jump", "state": "running",
        "price": "0.5", "created": unix(at(7, 0))}]));
    sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    let err = held::accept_held_price(&store, "jump", at(8, 1))
        .await
        .unwrap_err();
    assert!(matches!(err, AccountError::NothingHeld { .. }), "{err:?}");

    standin.patch("j1", json!({"price": "500"}));
    let report = sync_at(&store, &account, &base, at(9, 0)).await.unwrap();
    assert!(report.events.is_empty(), "not applied: {report:?}");
    assert_eq!(report.held.len(), 1);
    assert_eq!(report.held[0].to, dec!(500));
    assert_eq!(report.held[0].from, dec!(0.5));
    assert!(warned(&report, "held"), "{:?}", report.warnings);
    // Seen again: still held, first sighting kept.
    sync_at(&store, &account, &base, at(9, 30)).await.unwrap();
    let jump = link(&store, "jump").await;
    assert_eq!(jump.held_price_per_hour.as_deref(), Some("500"));
    assert_eq!(jump.held_since, Some(at(9, 0)));
    let rules = ledger::show(&store, "jump", at(9, 30)).await.unwrap().rules;
    assert_eq!(rules.price_per_gpu_hour, dec!(0.5));

    let accepted = held::accept_held_price(&store, "jump", at(10, 0))
        .await
        .unwrap();
    assert_eq!(accepted.applied_at, at(9, 0));
    assert_eq!(accepted.to, dec!(500));
    let rules = ledger::show(&store, "jump", at(10, 0)).await.unwrap().rules;
    assert_eq!(rules.price_per_gpu_hour, dec!(500));
    assert!(link(&store, "jump").await.held_price_per_hour.is_none());
    let again = sync_at(&store, &account, &base, at(10, 5)).await.unwrap();
    assert!(
        again.held.is_empty() && again.events.is_empty(),
        "{again:?}"
    );

    // A small change goes straight through, as before.
    standin.patch("j1", json!({"price": "550"}));
    let report = sync_at(&store, &account, &base, at(11, 0)).await.unwrap();
    assert_eq!(report.events[0].kind, "rule_changed");
}

#[tokio::test]
async fn a_price_in_another_currency_never_enters_the_rules() {
    let standin = ProviderStandin::start("runpod", "k-cur");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let new = leasehold_core::billing::NewInstance {
        name: "by hand".into(),
        provider: "runpod".into(),
        region: None,
        gpu_model: "RTX 4090".into(),
        currency: "CNY".into(),
        notes: None,
        planned_hours: None,
        budget: None,
        rules: leasehold_core::billing::BillingRules::simple(dec!(3.5), 1),
    };
    ledger::add_instance(&store, &new, at(7, 0)).await.unwrap();
    leasehold_core::stop::save_provider_id(&store, "by hand", Provider::Runpod, "c1", at(7, 0))
        .await
        .unwrap();
    let account = add(&store, Provider::Runpod, "LH_H_RP4", "k-cur", &base).await;
    standin.set_instances(json!([{"id": "c1", "name": "x", "state": "running", "price": "0.5"}]));
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert!(warned(&report, "kept in CNY"), "{:?}", report.warnings);
    assert!(
        report.events.iter().all(|e| e.kind != "rule_changed"),
        "{report:?}"
    );
    let rules = ledger::show(&store, "by hand", at(8, 0))
        .await
        .unwrap()
        .rules;
    assert_eq!(rules.price_per_gpu_hour, dec!(3.5));
    let link = link(&store, "by hand").await;
    assert_eq!(link.provider_price_per_hour.as_deref(), Some("0.5"));
    assert_eq!(link.provider_currency.as_deref(), Some("USD"));
}

#[tokio::test]
async fn an_old_creation_time_and_invisible_names_are_said_not_swallowed() {
    let standin = ProviderStandin::start("runpod", "k-old");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Runpod, "LH_H_RP5", "k-old", &base).await;
    let y2015 = Utc.with_ymd_and_hms(2015, 6, 1, 0, 0, 0).unwrap();
    standin.set_instances(json!([
        {"id": "o1", "name": "ancient", "state": "running", "price": "0.6", "created": unix(y2015)},
        {"id": "n1", "name": "mybox", "state": "running", "price": "0.4", "created": unix(at(7, 0))},
        {"id": "n2", "name": "my\u{2060}box", "state": "running", "price": "0.4", "created": unix(at(7, 0))},
        {"id": "n3", "name": "my\u{00AD}b\u{2800}ox\u{E0041}", "state": "running", "price": "0.4", "created": unix(at(7, 0))},
        {"id": "n4", "name": "ＭＹＢＯＸ", "state": "running", "price": "0.4", "created": unix(at(7, 0))},
    ]));
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    assert!(warned(&report, "2015-06-01"), "{:?}", report.warnings);
    assert!(warned(&report, "would bill about"), "{:?}", report.warnings);
    let ancient = link(&store, "ancient").await;
    assert!(ancient.import_warning.unwrap().contains("more than 7 days"));
    let mut names = report.imported.clone();
    names.sort();
    assert_eq!(
        names,
        vec![
            "ancient",
            "mybox",
            "mybox (n2)",
            "mybox (n3)",
            "ＭＹＢＯＸ (n4)"
        ],
        "no invisible character survives, and a name that reads the same gets a suffix"
    );
    assert!(link(&store, "mybox").await.import_warning.is_none());
}

#[tokio::test]
async fn autodl_refused_snapshots_and_pages_without_a_count_release_nothing() {
    let standin = ProviderStandin::start("autodl", "adl-hostile");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(&store, Provider::Autodl, "LH_H_ADL", "adl-hostile", &base).await;
    standin.set_instances(json!([
        {"id": "a-1", "name": "one", "state": "running", "price": "1.98", "ssh_port": 23001},
        {"id": "a-2", "name": "two", "state": "running", "price": "50000", "ssh_port": 23002},
        {"id": "a-3", "name": "three", "state": "running", "price": "2.5", "ssh_port": 23003},
        {"id": "a-4", "name": "four", "state": "running", "price": "3", "ssh_port": 23004},
    ]));
    standin.script(json!({"refuse_snapshot": ["a-3"], "autodl_page_size": 2}));
    let report = sync_at(&store, &account, &base, at(8, 0)).await.unwrap();
    let mut imported = report.imported.clone();
    imported.sort();
    assert_eq!(imported, vec!["four", "one"], "{report:?}");
    assert!(
        warned(&report, "snapshot was refused"),
        "{:?}",
        report.warnings
    );
    assert!(
        warned(&report, "does not believe"),
        "50 000 yuan/h passes no cap: {:?}",
        report.warnings
    );

    standin.script(json!({"refuse_snapshot": []}));
    let report = sync_at(&store, &account, &base, at(8, 10)).await.unwrap();
    assert_eq!(report.imported, vec!["three"]);

    // Page 2 ("four" and "three" sort after "one"?) — whatever is on it: an answer without
    // max_page stops at page 1 and releases nothing it leaves out, even when gone.
    standin.script(json!({"no_max_page": true}));
    standin.patch("a-4", json!({"state": "gone"}));
    let report = sync_at(&store, &account, &base, at(9, 0)).await.unwrap();
    assert!(
        report.events.iter().all(|e| e.kind != "released"),
        "{report:?}"
    );
    assert!(warned(&report, "how many pages"), "{:?}", report.warnings);
    assert_eq!(
        state(&store, "four", at(9, 0)).await,
        Some(InstanceState::Running)
    );
    assert_eq!(link(&store, "four").await.remote_state, "missing");

    // With the count back, the direct look's "not found" releases it, dated when first missed.
    standin.script(json!({"no_max_page": false}));
    let report = sync_at(&store, &account, &base, at(9, 30)).await.unwrap();
    let released: Vec<_> = report
        .events
        .iter()
        .filter(|e| e.kind == "released")
        .map(|e| (e.instance.as_str(), e.at))
        .collect();
    assert_eq!(released, vec![("four", at(9, 0))]);
    assert!(
        standin.violations().is_empty(),
        "{:?}",
        standin.violations()
    );
}

#[tokio::test]
async fn a_key_echoed_in_a_401_is_never_stored_or_shown() {
    let standin = ProviderStandin::start("runpod", "rp_TOPSECRET_123");
    let base = standin.base();
    let store = Store::open_in_memory().await.unwrap();
    let account = add(
        &store,
        Provider::Runpod,
        "LH_H_RP6",
        "rp_TOPSECRET_123",
        &base,
    )
    .await;
    standin.script(json!({"fail": [{"status": 401, "times": 1, "body": {
        "title": "Unauthorized", "status": 401,
        "detail": "key rp_TOPSECRET_123 refused (Authorization: Bearer rp_TOPSECRET_123, api_key=rp_TOPSECRET_123)"}}]}));
    let err = sync_at(&store, &account, &base, at(8, 0))
        .await
        .unwrap_err();
    assert!(matches!(err, AccountError::KeyRefused { .. }), "{err:?}");
    assert!(!err.to_string().contains("TOPSECRET"), "{err}");
    let listed = account::list(&store).await.unwrap();
    let words = listed[0].last_error.clone().expect("the failure is kept");
    assert!(words.contains("refused"), "{words}");
    assert!(!words.contains("TOPSECRET"), "{words}");
    let raw: Option<String> = sqlx::query_scalar("SELECT last_error FROM provider_accounts")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert!(!raw.unwrap_or_default().contains("TOPSECRET"));
}

#[tokio::test]
async fn a_refused_base_url_is_an_error_naming_the_variable() {
    let store = Store::open_in_memory().await.unwrap();
    for (value, why) in [
        ("http://api.example.com", "plain http"),
        ("https://api.runpod.io/v1", "path"),
        ("not a url", "not a URL"),
    ] {
        std::env::set_var("LEASEHOLD_LAMBDA_API_URL", value);
        let err = Endpoints::checked_from_env().unwrap_err();
        assert!(matches!(err, AccountError::BadEndpoint { .. }), "{err:?}");
        assert!(
            err.to_string().contains("LEASEHOLD_LAMBDA_API_URL"),
            "{err}"
        );
        assert!(err.to_string().contains(why), "{err}");
        assert!(leasehold_core::Coded::is_bad_input(&err));
        // The unchecked reading never falls back to the real API either.
        let endpoints = Endpoints::from_env();
        let err = account::add(
            &store,
            &AccountRef {
                provider: Provider::Lambda,
                label: "x".into(),
            },
            &Secret::new("k"),
            None,
            &endpoints,
            at(6, 0),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, AccountError::BadEndpoint { .. }), "{err:?}");
    }
    std::env::remove_var("LEASEHOLD_LAMBDA_API_URL");
    assert!(Endpoints::checked_from_env().is_ok());
}

#[tokio::test]
async fn a_tls_failure_says_tls_and_why() {
    // The stand-in speaks plain HTTP: an https client's handshake with it fails.
    let standin = ProviderStandin::start("runpod", "k-tls");
    let tls_base = standin.base().replace("http://", "https://");
    let store = Store::open_in_memory().await.unwrap();
    let err = account::add(
        &store,
        &AccountRef {
            provider: Provider::Runpod,
            label: "default".into(),
        },
        &Secret::new("k-tls"),
        None,
        &Endpoints::all_at(&tls_base),
        at(6, 0),
    )
    .await
    .unwrap_err();
    match &err {
        AccountError::Unreachable { detail, .. } => {
            assert!(detail.starts_with("TLS failed: "), "{detail}");
            assert!(detail.len() > "TLS failed: ".len() + 3, "and why: {detail}");
        }
        other => panic!("{other:?}"),
    }
}

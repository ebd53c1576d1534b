//! Stop's API keys live under the one naming every provider key uses,
//! `provider-key:PROVIDER:LABEL`: the `api-key:PROVIDER` entries older versions wrote are moved
//! there on first use, once, against a real Secret Service (a private session D-Bus with
//! gnome-keyring), never the developer's own keychain.
//!
//! One test in its own binary: it points this process's `DBUS_SESSION_BUS_ADDRESS` at the test
//! bus before the keychain is first used.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use leasehold_core::account::{Endpoints, Provider};
use leasehold_core::billing::{ledger, BillingRules, InstanceState, NewInstance, PowerAction};
use leasehold_core::clock::FixedClock;
use leasehold_core::ssh::{forget_secret, store_secret, stored_secret, Secret};
use leasehold_core::stop::{self, StopWait};
use leasehold_core::store::Store;
use leasehold_testkit::provider_standin::ProviderStandin;
use leasehold_testkit::secret_service::SecretService;
use rust_decimal_macros::dec;
use serde_json::json;

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap()
}

#[tokio::test]
async fn old_api_key_entries_move_to_the_provider_key_naming_once_on_first_use() {
    let secrets = SecretService::start();
    // Before the first keychain call, which picks the bus up; this binary has no other test.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", secrets.bus_address());

    // A key an older version saved from the Stop dialog.
    store_secret("api-key:runpod", &Secret::new("rp-old-key")).expect("stored");
    assert_eq!(stored_secret("provider-key:runpod:default"), None);

    // The first Stop through the API reads it, from its new name.
    let standin = ProviderStandin::start("runpod", "rp-old-key");
    let store = Store::open_in_memory().await.unwrap();
    ledger::add_instance(
        &store,
        &NewInstance {
            name: "box".into(),
            provider: "runpod".into(),
            region: None,
            gpu_model: "RTX 4090".into(),
            currency: "USD".into(),
            notes: None,
            planned_hours: None,
            budget: None,
            rules: BillingRules::simple(dec!(0.44), 1),
        },
        at(7, 0),
    )
    .await
    .unwrap();
    ledger::record(&store, "box", PowerAction::Start, at(7, 1))
        .await
        .unwrap();
    stop::save_provider_id(&store, "box", Provider::Runpod, "pod-1", at(7, 2))
        .await
        .unwrap();
    standin.set_instances(
        json!([{"id": "pod-1", "name": "box", "state": "running", "price": "0.44"}]),
    );
    let report = stop::over_api(
        &store,
        "box",
        &Endpoints::all_at(&standin.base()),
        None,
        None,
        StopWait {
            limit: Duration::from_secs(10),
            every: Duration::from_millis(30),
            ..StopWait::default()
        },
        &FixedClock::new(at(9, 0)),
    )
    .await
    .expect("stopped with the moved key");
    assert_eq!(report.api, Some(Provider::Runpod));
    assert!(
        standin.requests().iter().all(|r| r["key"] == "ok"),
        "every request carried the moved key"
    );
    let state = ledger::show(&store, "box", at(9, 0))
        .await
        .unwrap()
        .summary
        .state;
    assert_eq!(state, Some(InstanceState::Stopped));
    assert_eq!(
        stored_secret("provider-key:runpod:default"),
        Some(Secret::new("rp-old-key")),
        "moved under the one naming"
    );
    assert_eq!(
        stored_secret("api-key:runpod"),
        None,
        "the old entry is gone"
    );
    // Once: reading again changes nothing.
    assert_eq!(
        stop::stored_api_key(Provider::Runpod),
        Some(Secret::new("rp-old-key"))
    );

    // An account added since keeps its key; the old entry is dropped, not copied over it.
    store_secret(
        "provider-key:vast:default",
        &Secret::new("vast-account-key"),
    )
    .unwrap();
    store_secret("api-key:vast", &Secret::new("vast-old-key")).unwrap();
    assert_eq!(
        stop::stored_api_key(Provider::Vast),
        Some(Secret::new("vast-account-key"))
    );
    assert_eq!(stored_secret("api-key:vast"), None);

    // Saving from the Stop dialog writes the one naming only.
    stop::save_api_key(Provider::Vast, &Secret::new("vast-new")).unwrap();
    assert_eq!(
        stored_secret("provider-key:vast:default"),
        Some(Secret::new("vast-new"))
    );
    assert_eq!(stored_secret("api-key:vast"), None);
    let plan = stop::plan(&store, "box", at(9, 5)).await.unwrap();
    assert!(plan.api_key_saved);

    for entry in ["provider-key:runpod:default", "provider-key:vast:default"] {
        forget_secret(entry).expect("clean up");
    }
}

//! Resolutions as they arrive from the server, tested without one: kept beside
//! `resolutions.rs` so that file reads as the exchange alone.

use super::*;

fn row(uid: &str, at: &str) -> ServerWithdrawal {
    let id = "0b9f6c2e-4d4a-4f59-9c2a-6f7e1d2c3b4a".to_owned();
    ServerWithdrawal {
        uid: uid.to_owned(),
        instance_uid: id.clone(),
        event_uid: id.clone(),
        kept_uid: id,
        recorded_by: "bob".to_owned(),
        at: at.to_owned(),
    }
}

#[test]
fn a_resolution_from_the_server_is_taken_only_when_its_ids_and_time_read_back() {
    let uid = "5d1c1c6e-8a3b-4c0e-9f1d-2b3a4c5d6e7f";
    assert!(checked(row(uid, "2026-03-01T10:00:00+00:00")).is_some());
    assert!(checked(row(
        "x'; DROP TABLE ledger_events; --",
        "2026-03-01T10:00:00+00:00"
    ))
    .is_none());
    assert!(checked(row(uid, "yesterday")).is_none());
}

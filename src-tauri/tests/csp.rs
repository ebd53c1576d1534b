//! The webview can open a shell on a rented machine, so its content security policy is a
//! security boundary: this check fails when the policy in tauri.conf.json is removed or loosened.
//! Loosening it on purpose means changing the allowed lists below, in review, with a reason.

use std::collections::BTreeMap;

/// Every source a directive may list. Anything else (a remote host, `*`, `'unsafe-eval'`, an
/// inline-script allowance) fails the check.
const ALLOWED: &[(&str, &[&str])] = &[
    ("default-src", &["'self'"]),
    // No inline script, no eval, nothing remote: only the app's own bundle.
    ("script-src", &["'self'"]),
    // Inline styles stay allowed: xterm.js writes its theme into <style> elements at run time.
    ("style-src", &["'self'", "'unsafe-inline'"]),
    ("img-src", &["'self'", "data:", "blob:"]),
    ("font-src", &["'self'", "data:"]),
    // Tauri's IPC only: the page never fetches anything itself (a model server's check through
    // a port forward runs in core; forwarded pages open in the system browser), so a script
    // slipped into it cannot reach the services forwarded to this computer.
    ("connect-src", &["'self'", "ipc:", "http://ipc.localhost"]),
    ("object-src", &["'none'"]),
    ("base-uri", &["'none'"]),
    ("form-action", &["'none'"]),
    ("frame-src", &["'none'"]),
    ("worker-src", &["'none'"]),
];

/// Directives that must be present: without them the browser falls back to allowing more.
const REQUIRED: &[&str] = &["default-src", "script-src", "object-src", "base-uri"];

fn security() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tauri.conf.json");
    let text = std::fs::read_to_string(path).expect("tauri.conf.json is readable");
    let config: serde_json::Value = serde_json::from_str(&text).expect("tauri.conf.json is JSON");
    config["app"]["security"].clone()
}

/// The policy as directive → sources, whether written as one string or as an object.
fn directives(csp: &serde_json::Value) -> BTreeMap<String, Vec<String>> {
    let split =
        |sources: &str| -> Vec<String> { sources.split_whitespace().map(str::to_owned).collect() };
    match csp {
        serde_json::Value::String(policy) => policy
            .split(';')
            .filter_map(|directive| {
                let mut words = directive.split_whitespace();
                let name = words.next()?.to_owned();
                Some((name, words.map(str::to_owned).collect()))
            })
            .collect(),
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(name, sources)| {
                let sources = match sources {
                    serde_json::Value::String(s) => split(s),
                    serde_json::Value::Array(items) => items
                        .iter()
                        .filter_map(|i| i.as_str())
                        .flat_map(split)
                        .collect(),
                    other => panic!("{name}: sources must be text, not {other}"),
                };
                (name.clone(), sources)
            })
            .collect(),
        other => panic!("the CSP must be set (a string or an object), found {other}"),
    }
}

#[test]
fn the_webview_has_a_strict_content_security_policy() {
    let security = security();
    let policy = directives(&security["csp"]);
    for name in REQUIRED {
        assert!(
            policy.contains_key(*name),
            "the CSP must set {name}; without it the webview allows more than it should"
        );
    }
    for (name, sources) in &policy {
        let allowed = ALLOWED
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| *a)
            .unwrap_or_else(|| panic!("{name} is not a directive this app sets; review it"));
        for source in sources {
            assert!(
                allowed.contains(&source.as_str()),
                "{name} lists {source}, which loosens the policy (allowed: {allowed:?})"
            );
        }
    }
    assert_eq!(
        policy["script-src"],
        ["'self'"],
        "scripts come from the app's own files only"
    );
    // The dev CSP (when set) is used by `tauri dev`; it must not quietly loosen the policy
    // either, and Tauri must keep adding its nonces and hashes.
    assert!(
        security
            .get("devCsp")
            .is_none_or(serde_json::Value::is_null),
        "a separate devCsp is not reviewed by this check; remove it or check it here"
    );
    assert!(
        security
            .get("dangerousDisableAssetCspModification")
            .is_none_or(|v| v == &serde_json::Value::Bool(false)),
        "Tauri must keep adding nonces and hashes to the policy"
    );
}

//! Numbers that carry their source. The catalog's rule is "every number with its source;
//! unknown is empty, never guessed", so a figure is a `Sourced<T>` inside an `Option`, and every
//! source key resolves to a title and URL the user can open.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A value and where it comes from (a key of the embedded source list).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Sourced<T> {
    pub value: T,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// One citable source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Source {
    pub title: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kind: Option<String>,
}

#[derive(Deserialize)]
struct WithSources {
    #[serde(default)]
    sources: BTreeMap<String, Source>,
}

/// Every source key of every embedded data file.
static SOURCES: LazyLock<BTreeMap<String, Source>> = LazyLock::new(|| {
    let mut all: BTreeMap<String, Source> = toml::from_str(include_str!("data/sources.toml"))
        .expect("embedded sources.toml is valid TOML; see catalog tests");
    for (file, text) in [
        ("cuda.toml", include_str!("data/cuda.toml")),
        ("torch_wheels.toml", include_str!("data/torch_wheels.toml")),
        ("models.toml", include_str!("data/models.toml")),
    ] {
        let parsed: WithSources =
            toml::from_str(text).unwrap_or_else(|err| panic!("embedded {file} is invalid: {err}"));
        all.extend(parsed.sources);
    }
    all
});

/// The source behind a key, if the key is known.
pub fn source(key: &str) -> Option<&'static Source> {
    SOURCES.get(key)
}

/// All sources, for the "where do these numbers come from" view.
pub fn sources() -> &'static BTreeMap<String, Source> {
    &SOURCES
}

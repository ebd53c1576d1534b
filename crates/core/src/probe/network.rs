//! How long the instance takes to reach package indexes and model hubs, measured with `curl`
//! on the instance itself (short timeouts; an unreachable host is a fact, not a failure).
//! Also whether AutoDL's academic accelerator script (`/etc/network_turbo`) is present.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

/// What an endpoint is for, so rules can compare like with like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum EndpointKind {
    Pypi,
    PypiMirror,
    PytorchWheels,
    HuggingFace,
    HuggingFaceMirror,
    Github,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Endpoint {
    /// Short stable id (`pypi`, `tuna`, `hf-mirror`); only `[a-z0-9-]`.
    pub id: String,
    pub kind: EndpointKind,
    pub url: String,
}

impl Endpoint {
    pub fn new(id: &str, kind: EndpointKind, url: &str) -> Self {
        Self {
            id: id.to_owned(),
            kind,
            url: url.to_owned(),
        }
    }
}

/// The hosts that matter to renters in and outside China.
pub fn default_endpoints() -> Vec<Endpoint> {
    use EndpointKind::*;
    vec![
        Endpoint::new("pypi", Pypi, "https://pypi.org/simple/pip/"),
        Endpoint::new(
            "tuna",
            PypiMirror,
            "https://pypi.tuna.tsinghua.edu.cn/simple/pip/",
        ),
        Endpoint::new(
            "aliyun",
            PypiMirror,
            "https://mirrors.aliyun.com/pypi/simple/pip/",
        ),
        Endpoint::new(
            "ustc",
            PypiMirror,
            "https://mirrors.ustc.edu.cn/pypi/simple/pip/",
        ),
        Endpoint::new(
            "tencent",
            PypiMirror,
            "https://mirrors.cloud.tencent.com/pypi/simple/pip/",
        ),
        Endpoint::new(
            "pytorch",
            PytorchWheels,
            "https://download.pytorch.org/whl/",
        ),
        Endpoint::new("huggingface", HuggingFace, "https://huggingface.co"),
        Endpoint::new("hf-mirror", HuggingFaceMirror, "https://hf-mirror.com"),
        Endpoint::new("github", Github, "https://github.com"),
    ]
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EndpointTiming {
    pub id: String,
    pub kind: EndpointKind,
    pub url: String,
    pub reachable: bool,
    pub http_status: Option<u16>,
    /// Total time of one HEAD request, seconds.
    pub seconds: Option<f64>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct NetworkFacts {
    pub endpoints: Vec<EndpointTiming>,
    /// `/etc/network_turbo` exists (AutoDL: `source /etc/network_turbo` speeds up GitHub/HF).
    pub network_turbo: bool,
    pub curl_missing: bool,
}

/// Seconds before one request gives up; the probe's own timeout sits above this.
pub const REQUEST_TIMEOUT_S: u32 = 6;

pub(crate) fn parts(endpoints: &[Endpoint]) -> Vec<Part> {
    let mut requests = String::new();
    for endpoint in endpoints {
        let id: String = endpoint
            .id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        requests.push_str(&format!(
            "( r=$(curl -sS -I -o /dev/null --connect-timeout 3 -m {REQUEST_TIMEOUT_S} -w '%{{http_code}} %{{time_total}}' {url} 2>&1); printf '%s %s %s\\n' {id} \"$?\" \"$r\" ) &\n",
            url = crate::shell::quote(&endpoint.url),
            id = crate::shell::quote(&id),
        ));
    }
    vec![
        Part::new("turbo", "[ -e /etc/network_turbo ] && echo present || echo absent"),
        Part::new(
            "curl",
            format!("if ! command -v curl >/dev/null 2>&1; then echo 'curl: not found'; else\n{requests}wait; fi"),
        ),
    ]
}

pub(crate) fn parse(parts: &HashMap<String, PartOutput>, endpoints: &[Endpoint]) -> NetworkFacts {
    let turbo = parts
        .get("turbo")
        .is_some_and(|p| p.text.trim() == "present");
    let curl = parts.get("curl").map(|p| p.text.as_str()).unwrap_or("");
    if curl.trim() == "curl: not found" {
        return NetworkFacts {
            endpoints: Vec::new(),
            network_turbo: turbo,
            curl_missing: true,
        };
    }
    NetworkFacts {
        endpoints: parse_timings(curl, endpoints),
        network_turbo: turbo,
        curl_missing: false,
    }
}

/// Lines `ID CURL_EXIT HTTP_CODE SECONDS` (or `ID CURL_EXIT curl: (6) Could not resolve …`).
pub fn parse_timings(text: &str, endpoints: &[Endpoint]) -> Vec<EndpointTiming> {
    let lines: HashMap<&str, &str> = text.lines().filter_map(|l| l.split_once(' ')).collect();
    endpoints
        .iter()
        .map(|endpoint| {
            let mut timing = EndpointTiming {
                id: endpoint.id.clone(),
                kind: endpoint.kind,
                url: endpoint.url.clone(),
                reachable: false,
                http_status: None,
                seconds: None,
                error: None,
            };
            let Some(rest) = lines.get(endpoint.id.as_str()) else {
                timing.error = Some("no answer from the measurement".to_owned());
                return timing;
            };
            let (exit, result) = rest.split_once(' ').unwrap_or((rest, ""));
            let exit: Option<i32> = exit.parse().ok();
            // With -sS, curl's error message comes first and -w's output last on the line.
            let words: Vec<&str> = result.split_whitespace().collect();
            let seconds = words.last().and_then(|w| w.parse::<f64>().ok());
            let status = words
                .len()
                .checked_sub(2)
                .and_then(|i| words.get(i))
                .and_then(|w| w.parse::<u16>().ok());
            timing.http_status = status.filter(|s| *s != 0);
            timing.seconds = seconds;
            timing.reachable = exit == Some(0) && timing.http_status.is_some_and(|s| s < 500);
            if !timing.reachable {
                let message = result.find("curl:").map_or_else(
                    || result.trim().to_owned(),
                    |at| {
                        let tail = &result[at..];
                        tail.rsplitn(3, ' ')
                            .last()
                            .unwrap_or(tail)
                            .trim()
                            .to_owned()
                    },
                );
                timing.error = Some(if message.is_empty() {
                    format!("curl exit {rest}")
                } else {
                    message
                });
            }
            timing
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachable_slow_and_unreachable_hosts_are_told_apart() {
        let endpoints = default_endpoints();
        let text = "pypi 28 curl: (28) Connection timed out after 3001 milliseconds 000 3.001234\n\
tuna 0 200 0.084512\n\
huggingface 6 curl: (6) Could not resolve host: huggingface.co 000 0.001\n\
hf-mirror 0 307 0.2\n";
        let timings = parse_timings(text, &endpoints);
        let by_id = |id: &str| timings.iter().find(|t| t.id == id).expect("listed");
        let pypi = by_id("pypi");
        assert!(!pypi.reachable);
        assert_eq!(
            pypi.error.as_deref(),
            Some("curl: (28) Connection timed out after 3001 milliseconds")
        );
        let tuna = by_id("tuna");
        assert!(tuna.reachable);
        assert_eq!(
            (tuna.http_status, tuna.seconds),
            (Some(200), Some(0.084512))
        );
        assert!(!by_id("huggingface").reachable);
        assert!(
            by_id("hf-mirror").reachable,
            "a redirect still proves the host answers"
        );
        assert_eq!(
            by_id("github").error.as_deref(),
            Some("no answer from the measurement")
        );
    }
}

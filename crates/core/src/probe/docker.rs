//! Docker and whether it can hand GPUs to containers (the NVIDIA runtime / Container Toolkit).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct DockerFacts {
    pub path: Option<String>,
    pub client_version: Option<String>,
    pub server_version: Option<String>,
    /// The daemon answered `docker info`.
    pub daemon_reachable: bool,
    /// Why it did not ("Cannot connect to the Docker daemon…", "permission denied…").
    pub daemon_error: Option<String>,
    pub runtimes: Vec<String>,
    pub default_runtime: Option<String>,
    /// NVIDIA Container Toolkit binaries found on PATH.
    pub nvidia_toolkit: Vec<String>,
}

impl DockerFacts {
    pub fn installed(&self) -> bool {
        self.path.is_some()
    }

    pub fn has_gpu_runtime(&self) -> bool {
        self.runtimes.iter().any(|r| r.contains("nvidia")) || !self.nvidia_toolkit.is_empty()
    }
}

pub(crate) fn parts() -> Vec<Part> {
    vec![
        Part::new("docker-path", "command -v docker"),
        Part::new("docker-version", "docker version --format '{{.Client.Version}}'"),
        Part::new(
            "docker-info",
            "docker info --format 'runtimes={{range $k, $v := .Runtimes}}{{$k}} {{end}}\ndefault={{.DefaultRuntime}}\nserver={{.ServerVersion}}'",
        ),
        Part::new(
            "nvidia-toolkit",
            "for b in nvidia-ctk nvidia-container-toolkit nvidia-container-cli nvidia-container-runtime; do command -v \"$b\"; done; true",
        ),
    ]
}

pub(crate) fn parse(parts: &HashMap<String, PartOutput>) -> DockerFacts {
    let text = |name: &str| parts.get(name).map(|p| p.text.as_str()).unwrap_or("");
    let path = parts
        .get("docker-path")
        .filter(|p| p.succeeded())
        .and_then(|p| p.text.lines().next())
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty());
    let mut facts = DockerFacts {
        path: path.clone(),
        client_version: parts
            .get("docker-version")
            .filter(|p| p.succeeded())
            .and_then(|p| p.text.lines().next())
            .map(|l| l.trim().to_owned()),
        nvidia_toolkit: text("nvidia-toolkit")
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('/'))
            .map(str::to_owned)
            .collect(),
        ..DockerFacts::default()
    };
    if path.is_none() {
        return facts;
    }
    let info = parts.get("docker-info");
    if info.is_some_and(PartOutput::succeeded) {
        facts.daemon_reachable = true;
        for line in text("docker-info").lines() {
            match line.split_once('=') {
                Some(("runtimes", list)) => {
                    facts.runtimes = list.split_whitespace().map(str::to_owned).collect();
                }
                Some(("default", value)) if !value.trim().is_empty() => {
                    facts.default_runtime = Some(value.trim().to_owned());
                }
                Some(("server", value)) if !value.trim().is_empty() => {
                    facts.server_version = Some(value.trim().to_owned());
                }
                _ => {}
            }
        }
    } else {
        // A failing `docker info` still prints the empty template before its error.
        facts.daemon_error = text("docker-info")
            .lines()
            .map(str::trim)
            .map(|l| {
                ["runtimes=", "default=", "server="]
                    .iter()
                    .fold(l, |l, p| l.strip_prefix(p).unwrap_or(l))
                    .trim()
            })
            .find(|l| !l.is_empty())
            .map(str::to_owned);
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(pairs: &[(&str, &str, i32)]) -> HashMap<String, PartOutput> {
        pairs
            .iter()
            .map(|(k, v, rc)| {
                (
                    (*k).to_owned(),
                    PartOutput {
                        text: (*v).to_owned(),
                        exit: Some(*rc),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn daemon_with_nvidia_runtime_is_read() {
        let facts = parse(&parts_of(&[
            ("docker-path", "/usr/bin/docker", 0),
            ("docker-version", "27.3.1", 0),
            (
                "docker-info",
                "runtimes=io.containerd.runc.v2 nvidia runc \ndefault=runc\nserver=27.3.1",
                0,
            ),
            ("nvidia-toolkit", "/usr/bin/nvidia-ctk", 0),
        ]));
        assert!(facts.daemon_reachable);
        assert_eq!(
            facts.runtimes,
            vec!["io.containerd.runc.v2", "nvidia", "runc"]
        );
        assert!(facts.has_gpu_runtime());
    }

    #[test]
    fn unreachable_daemon_and_missing_runtime_are_facts() {
        let facts = parse(&parts_of(&[
            ("docker-path", "/usr/bin/docker", 0),
            ("docker-info", "runtimes=\ndefault=\nserver=Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", 1),
            ("nvidia-toolkit", "", 0),
        ]));
        assert!(!facts.daemon_reachable);
        assert!(facts
            .daemon_error
            .as_deref()
            .is_some_and(|e| e.starts_with("Cannot connect")));
        assert!(!facts.has_gpu_runtime());
        let none = parse(&parts_of(&[("docker-path", "", 1)]));
        assert!(!none.installed());
    }
}

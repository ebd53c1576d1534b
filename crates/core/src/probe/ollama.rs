//! Ollama: installed or not, its version, and where each loaded model runs (`ollama ps`'s
//! PROCESSOR column: `100% GPU`, `100% CPU`, `48%/52% CPU/GPU`). A model spilling to the CPU
//! is the usual reason Ollama is "slow on a GPU machine".

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct OllamaFacts {
    pub path: Option<String>,
    pub version: Option<String>,
    /// `ollama ps` answered (the server is running).
    pub server_running: bool,
    pub server_error: Option<String>,
    pub models: Vec<LoadedModel>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LoadedModel {
    pub name: String,
    /// `4.9 GB` as printed.
    pub size: Option<String>,
    /// `100% GPU`, `48%/52% CPU/GPU`.
    pub processor: Option<String>,
    pub cpu_pct: Option<u32>,
    pub gpu_pct: Option<u32>,
    pub context: Option<u32>,
}

pub(crate) fn parts() -> Vec<Part> {
    vec![
        Part::new("ollama-path", "command -v ollama"),
        Part::new("ollama-version", "ollama --version"),
        Part::new("ollama-ps", "ollama ps"),
    ]
}

pub(crate) fn parse(parts: &HashMap<String, PartOutput>) -> OllamaFacts {
    let path = parts
        .get("ollama-path")
        .filter(|p| p.succeeded())
        .and_then(|p| p.text.lines().next())
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty());
    let mut facts = OllamaFacts {
        path: path.clone(),
        ..OllamaFacts::default()
    };
    if path.is_none() {
        return facts;
    }
    facts.version = parts.get("ollama-version").and_then(|p| {
        p.text.lines().find_map(|l| {
            let at = l.find("version is ")?;
            l.get(at + "version is ".len()..)
                .map(|v| v.trim().to_owned())
        })
    });
    match parts.get("ollama-ps") {
        Some(ps) if ps.succeeded() => {
            facts.server_running = true;
            facts.models = parse_ps(&ps.text);
        }
        Some(ps) => {
            facts.server_error = ps
                .text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_owned);
        }
        None => {}
    }
    facts
}

/// `ollama ps`: columns separated by two or more spaces, headed by `NAME … PROCESSOR …`.
pub fn parse_ps(text: &str) -> Vec<LoadedModel> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NAME"));
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let columns: Vec<String> = split_columns(header)
        .into_iter()
        .map(str::to_ascii_uppercase)
        .collect();
    let at = |name: &str| columns.iter().position(|c| c == name);
    lines
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let cells = split_columns(line);
            let cell = |name: &str| at(name).and_then(|i| cells.get(i)).map(|s| (*s).to_owned());
            let processor = cell("PROCESSOR");
            let (cpu_pct, gpu_pct) = processor.as_deref().map_or((None, None), split_processor);
            Some(LoadedModel {
                name: cell("NAME")?,
                size: cell("SIZE"),
                processor,
                cpu_pct,
                gpu_pct,
                context: cell("CONTEXT").and_then(|c| c.parse().ok()),
            })
        })
        .collect()
}

fn split_columns(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// `100% GPU` → (0, 100); `100% CPU` → (100, 0); `48%/52% CPU/GPU` → (48, 52).
pub fn split_processor(text: &str) -> (Option<u32>, Option<u32>) {
    let mut words = text.split_whitespace();
    let (Some(numbers), Some(units)) = (words.next(), words.next()) else {
        return (None, None);
    };
    let numbers: Vec<Option<u32>> = numbers
        .split('/')
        .map(|n| n.trim_end_matches('%').parse().ok())
        .collect();
    let units: Vec<&str> = units.split('/').collect();
    let mut cpu = None;
    let mut gpu = None;
    for (number, unit) in numbers.iter().zip(units.iter()) {
        match *unit {
            "CPU" => cpu = *number,
            "GPU" => gpu = *number,
            _ => {}
        }
    }
    if units.len() == 1 {
        match units[0] {
            "GPU" => cpu = cpu.or(gpu.map(|g| 100u32.saturating_sub(g))),
            "CPU" => gpu = gpu.or(cpu.map(|c| 100u32.saturating_sub(c))),
            _ => {}
        }
    }
    (cpu, gpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ps_columns_and_processor_split_are_read() {
        let text = "NAME                ID              SIZE      PROCESSOR          CONTEXT    UNTIL\nqwen2.5:7b          845dbda0ea48    4.9 GB    100% GPU           4096       4 minutes from now\nllama3.1:70b        711a9e8463af    42 GB     48%/52% CPU/GPU    4096       Forever\n";
        let models = parse_ps(text);
        assert_eq!(models.len(), 2);
        assert_eq!(models[0].name, "qwen2.5:7b");
        assert_eq!((models[0].cpu_pct, models[0].gpu_pct), (Some(0), Some(100)));
        assert_eq!(models[0].size.as_deref(), Some("4.9 GB"));
        assert_eq!(models[0].context, Some(4096));
        assert_eq!((models[1].cpu_pct, models[1].gpu_pct), (Some(48), Some(52)));
        assert_eq!(split_processor("100% CPU"), (Some(100), Some(0)));
    }

    #[test]
    fn server_down_is_a_fact() {
        let parts: HashMap<String, PartOutput> = [
            ("ollama-path", "/usr/local/bin/ollama", 0),
            ("ollama-version", "Warning: could not connect to a running Ollama instance\nWarning: client version is 0.5.7", 0),
            ("ollama-ps", "Error: could not connect to ollama app, is it running?", 1),
        ]
        .into_iter()
        .map(|(k, v, rc)| (k.to_owned(), PartOutput { text: v.to_owned(), exit: Some(rc) }))
        .collect();
        let facts = parse(&parts);
        assert!(!facts.server_running);
        assert_eq!(facts.version.as_deref(), Some("0.5.7"));
        assert!(facts.server_error.is_some());
    }
}

//! Reaching PyPI, PyTorch's wheels, Hugging Face and GitHub from the instance, and which
//! mirror to switch to when the origin is slow.

use crate::diagnose::text::draft;
use crate::diagnose::{DiagnoseContext, Finding, Severity};
use crate::probe::network::{EndpointKind, EndpointTiming};
use crate::probe::Facts;

/// A request slower than this is "slow" for an index page.
const SLOW_S: f64 = 2.0;
/// A mirror must be at least this much faster to be worth switching to.
const WORTH_IT: f64 = 2.0;

pub(super) fn check(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(network) = &facts.network else {
        return Vec::new();
    };
    if network.endpoints.is_empty() {
        return Vec::new();
    }
    let lang = context.lang;
    if network.endpoints.iter().all(|e| !e.reachable) {
        return vec![draft(lang, "network.offline", Severity::Warning)
            .title("实例连不上外网", "The instance cannot reach the internet")
            .detail(
                "PyPI、镜像源、Hugging Face、GitHub 都连不上：pip/conda 安装和模型下载都会失败。检查实例是否开通了公网访问，或是否需要代理。",
                "PyPI, the mirrors, Hugging Face and GitHub are all unreachable: pip/conda installs and model downloads will fail. Check whether the instance has internet access or needs a proxy.",
            )
            .run("手动测一次：", "Try one request yourself:", "curl -sSI -m 5 https://pypi.tuna.tsinghua.edu.cn/simple/ | head -n 1")
            .evidence_all(network.endpoints.iter().map(describe))
            .build()];
    }
    let mut found = Vec::new();
    let is_mirror = |kind: EndpointKind| {
        matches!(
            kind,
            EndpointKind::PypiMirror | EndpointKind::HuggingFaceMirror
        )
    };
    let mirrors: Vec<&EndpointTiming> = network
        .endpoints
        .iter()
        .filter(|e| is_mirror(e.kind))
        .collect();
    // A checklist that says "network ✓" beside a list of dead mirrors contradicts itself: say
    // it, since switching pip or Hugging Face to a mirror (the usual first step) would then fail.
    if !mirrors.is_empty() && mirrors.iter().all(|e| !e.reachable) {
        found.push(
            draft(lang, "network.mirrors_unreachable", Severity::Warning)
                .title("镜像源都连不上", "None of the mirrors answers")
                .detail(
                    "从这台实例连不上任何镜像源，官方源还能用。先别把 pip、conda 或 Hugging Face 切到镜像，否则安装和下载会失败；已经切过的，改回官方源。",
                    "From this instance no mirror answers, while the official sources do. Do not switch pip, conda or Hugging Face to a mirror here, or installs and downloads will fail; if you already did, switch back.",
                )
                .run(
                    "查看 pip 现在用的源：",
                    "See which index pip uses now:",
                    "pip config list",
                )
                .evidence_all(mirrors.iter().copied().map(describe))
                .build(),
        );
    }
    let mut steps: Vec<(String, String, String)> = Vec::new();
    let mut evidence = Vec::new();
    let origin_slow = |kind: EndpointKind| {
        network
            .endpoints
            .iter()
            .filter(|e| e.kind == kind)
            .all(|e| !e.reachable || e.seconds.is_some_and(|s| s > SLOW_S))
    };
    let fastest = |kind: EndpointKind| {
        network
            .endpoints
            .iter()
            .filter(|e| e.kind == kind && e.reachable)
            .min_by(|a, b| {
                a.seconds
                    .unwrap_or(f64::MAX)
                    .total_cmp(&b.seconds.unwrap_or(f64::MAX))
            })
    };
    let pip_uses_mirror = facts
        .python
        .as_ref()
        .and_then(|p| p.pip_index_url.as_deref())
        .is_some_and(|url| !url.contains("pypi.org"));
    if origin_slow(EndpointKind::Pypi) && !pip_uses_mirror {
        if let Some(mirror) = fastest(EndpointKind::PypiMirror).filter(|m| {
            faster(
                m,
                network
                    .endpoints
                    .iter()
                    .find(|e| e.kind == EndpointKind::Pypi),
            )
        }) {
            let index = mirror
                .url
                .trim_end_matches('/')
                .trim_end_matches("/pip")
                .to_owned();
            steps.push((
                format!("pip 改用 {} 镜像：", mirror.id),
                format!("Point pip at the {} mirror:", mirror.id),
                format!("pip config set global.index-url {index}"),
            ));
            evidence.extend(
                network
                    .endpoints
                    .iter()
                    .filter(|e| matches!(e.kind, EndpointKind::Pypi))
                    .map(describe),
            );
            evidence.push(describe(mirror));
        }
    }
    if origin_slow(EndpointKind::HuggingFace) {
        if let Some(mirror) = fastest(EndpointKind::HuggingFaceMirror) {
            steps.push((
                "Hugging Face 下载走 hf-mirror.com（写进 ~/.bashrc 长期生效）：".to_owned(),
                "Download from Hugging Face through hf-mirror.com (add to ~/.bashrc to keep it):"
                    .to_owned(),
                "export HF_ENDPOINT=https://hf-mirror.com".to_owned(),
            ));
            evidence.extend(
                network
                    .endpoints
                    .iter()
                    .filter(|e| e.kind == EndpointKind::HuggingFace)
                    .map(describe),
            );
            evidence.push(describe(mirror));
        }
    }
    if origin_slow(EndpointKind::Github) && network.network_turbo {
        steps.push((
            "这台机器有学术加速脚本，访问 GitHub/Hugging Face 前先启用：".to_owned(),
            "This machine has the provider's academic accelerator; enable it before using GitHub/Hugging Face:".to_owned(),
            "source /etc/network_turbo".to_owned(),
        ));
        evidence.extend(
            network
                .endpoints
                .iter()
                .filter(|e| e.kind == EndpointKind::Github)
                .map(describe),
        );
        evidence.push("/etc/network_turbo: present".to_owned());
    }
    if steps.is_empty() {
        return found;
    }
    let mut d = draft(lang, "network.slow_mirror", Severity::Warning)
        .title("官方源很慢，换用镜像更快", "The official sources are slow; a mirror is faster")
        .detail(
            "从这台实例访问官方源很慢或连不上，而国内镜像很快。安装依赖和下载模型时改用镜像，可以省下大量按小时计费的时间。",
            "From this instance the official sources are slow or unreachable while mirrors are fast. Using the mirrors for installs and model downloads saves a lot of paid hours.",
        );
    for (zh, en, command) in steps {
        d = d.run(zh, en, command);
    }
    found.push(d.evidence_all(evidence).build());
    found
}

fn faster(mirror: &EndpointTiming, origin: Option<&EndpointTiming>) -> bool {
    match origin {
        Some(origin) if origin.reachable => match (mirror.seconds, origin.seconds) {
            (Some(m), Some(o)) => m * WORTH_IT < o,
            _ => false,
        },
        _ => true,
    }
}

fn describe(timing: &EndpointTiming) -> String {
    match (timing.reachable, timing.seconds) {
        (true, Some(s)) => format!("{} ({}): {:.2} s", timing.id, timing.url, s),
        _ => format!(
            "{} ({}): unreachable{}",
            timing.id,
            timing.url,
            timing
                .error
                .as_deref()
                .map_or(String::new(), |e| format!(" — {e}"))
        ),
    }
}

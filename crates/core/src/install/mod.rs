//! Install recipes: the software stack of the seeds (mirrors, Miniconda, PyTorch, Ollama,
//! Docker + NVIDIA Container Toolkit, vLLM, TGI, plain pip packages, one process per GPU) as
//! scripts that run as detached jobs (`crate::job`).
//!
//! Why pure functions: a recipe is (options, verified facts) → bash text, so every script is
//! tested without a network — quoting of every option, the wheel line for each driver/GPU pair,
//! the Docker refusal — and the same text is what `install-script` prints and `export-setup`
//! replays. Each script detects what is already there and skips it, resumes downloads, checks
//! its own preconditions when it runs (so a script exported and run elsewhere refuses the same
//! way), and ends with the checks for its own layer. Option values reach the script only as
//! shell variables assigned through `shell::quote`, once, at the top.
//!
//! Scripts print progress markers (`::leasehold::step 2/5 …`, `skip`, `ok`, `result`,
//! `finding`, `fail CODE …`) that [`progress`] reads back together with pip, conda, curl, wget
//! and `ollama pull` output.
//!
//! Also: the progress parser ends lines at `\r` and `\n`, reads each byte once, keeps a line up to
//! 64 KiB, and caps skipped steps, results and findings at 100, so the progress cloned into every
//! log piece stays small. The UI's `LogBuffer` likewise keeps a bounded tail. [`serve`] checks a
//! model server from this computer through a port forward (the answer, tokens/s, and Ollama's
//! `/api/ps` offload → `ollama.cpu_offload`). [`status`] gives each recipe's state (installed,
//! missing, outdated, impossible or unknown, with versions) as a pure function of the last Verify
//! run's facts.

mod error;
mod options;
pub mod progress;
mod recipes;
mod script;
pub mod serve;
pub mod status;
pub mod watch;

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;

pub use error::InstallError;
pub use options::{OptionSpec, ValueKind};
pub use script::export_setup;

use crate::probe::network::EndpointKind;
use crate::probe::Facts;

/// The recipes, in the order a fresh instance usually needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum Recipe {
    Mirrors,
    Miniconda,
    Pytorch,
    Pip,
    Ollama,
    Docker,
    Vllm,
    Tgi,
    PerGpu,
}

impl Recipe {
    pub const ALL: [Recipe; 9] = [
        Recipe::Mirrors,
        Recipe::Miniconda,
        Recipe::Pytorch,
        Recipe::Pip,
        Recipe::Ollama,
        Recipe::Docker,
        Recipe::Vllm,
        Recipe::Tgi,
        Recipe::PerGpu,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mirrors => "mirrors",
            Self::Miniconda => "miniconda",
            Self::Pytorch => "pytorch",
            Self::Pip => "pip",
            Self::Ollama => "ollama",
            Self::Docker => "docker",
            Self::Vllm => "vllm",
            Self::Tgi => "tgi",
            Self::PerGpu => "per-gpu",
        }
    }

    pub fn parse(name: &str) -> Result<Self, InstallError> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == name)
            .ok_or_else(|| {
                InstallError::UnknownRecipe(
                    name.to_owned(),
                    Self::ALL.map(Recipe::as_str).join(", "),
                )
            })
    }

    /// What the recipe does, one line (en).
    pub fn summary(self) -> &'static str {
        match self {
            Self::Mirrors => "pip and conda mirrors, HF_ENDPOINT for Hugging Face",
            Self::Miniconda => "Miniconda in ~/miniconda3 and a conda environment",
            Self::Pytorch => {
                "the PyTorch CUDA wheel for this driver and GPU, checked with a real kernel"
            }
            Self::Pip => "Python packages into an environment, through the chosen index",
            Self::Ollama => "Ollama, its server and a model, checked for GPU offload and speed",
            Self::Docker => "Docker and the NVIDIA Container Toolkit (virtual machines only)",
            Self::Vllm => "vLLM in its own environment and its OpenAI-compatible server",
            Self::Tgi => "Hugging Face Text Generation Inference in Docker (virtual machines only)",
            Self::PerGpu => "one copy of a command per GPU, each with its own CUDA_VISIBLE_DEVICES",
        }
    }

    pub fn options(self) -> &'static [OptionSpec] {
        options::specs(self)
    }
}

/// What the recipes need to know about the instance. Read by Verify when installing over SSH;
/// for `install-script` the same facts come as options (`driver`, `gpu`, `container`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallFacts {
    /// `Some(kind)` when the instance is a container (`docker`, `kubernetes`, …).
    pub container: Option<String>,
    /// Whether Verify looked at all (so `container: None` means "not a container").
    pub container_checked: bool,
    pub driver: Option<String>,
    pub gpu: Option<String>,
    pub gpu_count: Option<u32>,
    /// A data disk worth putting models on (`/root/autodl-tmp` on AutoDL).
    pub data_disk: Option<String>,
    /// The fastest reachable pip index among the known ones (`official`, `tsinghua`, …).
    pub fastest_pip: Option<String>,
    /// `official` or `hf-mirror`, whichever answered faster.
    pub fastest_hf: Option<String>,
}

impl InstallFacts {
    /// The facts a recipe uses, from a Verify run.
    pub fn from_facts(facts: &Facts) -> Self {
        let gpu = facts.gpu.as_ref().map(|g| &g.nvidia_smi);
        let fastest = |kinds: &[EndpointKind]| {
            facts.network.as_ref().and_then(|n| {
                n.endpoints
                    .iter()
                    .filter(|e| kinds.contains(&e.kind) && e.reachable)
                    .filter_map(|e| Some((e.seconds?, e.id.clone())))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, id)| id)
            })
        };
        let pip_name = |id: String| match id.as_str() {
            "pypi" => Some("official".to_owned()),
            "tuna" => Some("tsinghua".to_owned()),
            "aliyun" | "ustc" => Some(id),
            _ => None,
        };
        Self {
            container: facts.system.as_ref().and_then(|s| s.container.clone()),
            container_checked: facts.system.is_some(),
            driver: gpu.and_then(|g| g.driver_version.clone()),
            gpu: gpu.and_then(|g| g.gpus.first().and_then(|g| g.name.clone())),
            gpu_count: gpu.map(|g| u32::try_from(g.gpus.len()).unwrap_or(u32::MAX)),
            data_disk: facts.disks.as_ref().and_then(|disks| {
                ["/root/autodl-tmp", "/data", "/mnt/data"]
                    .into_iter()
                    .find(|p| disks.iter().any(|d| d.paths.iter().any(|q| q == p)))
                    .map(str::to_owned)
            }),
            fastest_pip: fastest(&[EndpointKind::Pypi, EndpointKind::PypiMirror])
                .and_then(pip_name),
            fastest_hf: fastest(&[EndpointKind::HuggingFace, EndpointKind::HuggingFaceMirror]).map(
                |id| {
                    if id == "hf-mirror" {
                        id
                    } else {
                        "official".to_owned()
                    }
                },
            ),
        }
    }
}

/// Options as the user gave them, checked against the recipe's specs, with defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecipeOptions {
    values: BTreeMap<String, String>,
}

impl RecipeOptions {
    /// Check `KEY=VALUE` pairs: unknown keys, repeated keys and malformed values are refused.
    pub fn parse(recipe: Recipe, pairs: &[String]) -> Result<Self, InstallError> {
        let mut given = BTreeMap::new();
        for pair in pairs {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| InstallError::NotKeyValue(pair.clone()))?;
            if given.insert(key.to_owned(), value.to_owned()).is_some() {
                return Err(InstallError::Repeated(key.to_owned()));
            }
        }
        Self::from_map(recipe, given)
    }

    pub fn from_map(recipe: Recipe, given: BTreeMap<String, String>) -> Result<Self, InstallError> {
        let specs = recipe.options();
        for (key, value) in &given {
            let spec = specs.iter().find(|s| s.name == key).ok_or_else(|| {
                InstallError::UnknownOption {
                    recipe: recipe.as_str(),
                    option: key.clone(),
                    known: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
                }
            })?;
            spec.check(value)?;
        }
        Ok(Self { values: given })
    }

    /// The value given, if any (defaults are applied by the recipe, which may take them from
    /// facts).
    pub fn given(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// The value given or the spec's default.
    pub fn get(&self, recipe: Recipe, key: &str) -> String {
        self.given(key).map(str::to_owned).unwrap_or_else(|| {
            recipe
                .options()
                .iter()
                .find(|s| s.name == key)
                .map(|s| s.default.to_owned())
                .unwrap_or_default()
        })
    }

    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.values
    }
}

/// The script for `recipe` with these options on a machine with these facts. Refuses (before
/// anything runs) what can be known to fail: Docker in a container, no wheel for the GPU.
pub fn script(
    recipe: Recipe,
    options: &RecipeOptions,
    facts: &InstallFacts,
) -> Result<String, InstallError> {
    recipes::build(recipe, options, facts)
}

/// Read what `recipe` needs from the instance (system and GPU facts, plus mirror timings for
/// the recipes that download through a mirror), with the Verify probes.
pub async fn read_facts(
    target: &dyn crate::target::Target,
    recipe: Recipe,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<InstallFacts, InstallError> {
    use crate::probe::ProbeId;
    let mut wanted = vec![ProbeId::System, ProbeId::Gpu];
    if matches!(recipe, Recipe::Mirrors | Recipe::Vllm) {
        wanted.push(ProbeId::Network);
    }
    let mut options = crate::probe::BatteryOptions::default();
    options.skip = ProbeId::ALL
        .into_iter()
        .filter(|p| !wanted.contains(p))
        .collect();
    let facts = crate::probe::run_battery(target, &options, &crate::probe::NoProgress, now)
        .await
        .map_err(|err| InstallError::Facts(err.to_string()))?;
    Ok(InstallFacts::from_facts(&facts))
}

/// Start `recipe` on a recorded instance through the app's live connection, and record the job
/// under the instance (the Install page) with the command and key file the instance was saved
/// with, so `leasehold job attach` can reach the job too.
pub async fn start_on_instance(
    store: &crate::store::Store,
    target: &crate::ssh::SshTarget,
    instance: &str,
    recipe: &str,
    options: BTreeMap<String, String>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<crate::job::JobStatus, InstallError> {
    let recipe = Recipe::parse(recipe)?;
    let options = RecipeOptions::from_map(recipe, options)?;
    crate::job::record::check_instance(store, instance).await?;
    let saved = {
        let mut conn = store.pool().acquire().await.map_err(|err| {
            crate::connect::ConnectError::from(crate::store::StoreError::from(err))
        })?;
        crate::connect::load_target(&mut conn, instance)
            .await?
            .ok_or_else(|| crate::connect::ConnectError::NoTarget(instance.to_owned()))?
    };
    let request = crate::ssh::ConnectRequest {
        ssh_command: saved.ssh_command.clone(),
        identity_files: match &saved.auth {
            crate::connect::AuthChoice::Key { path } => vec![std::path::PathBuf::from(path)],
            _ => Vec::new(),
        },
        ..crate::ssh::ConnectRequest::default()
    };
    start(
        store,
        target,
        &request,
        Some(instance),
        recipe,
        &options,
        now,
    )
    .await
}

/// Read the facts `recipe` needs, write its script, start it as a detached job and record it
/// (under `instance` when given) with how the target was reached, so `job attach` can reach it
/// again. Both the Install page and `leasehold install` start recipes through here.
pub async fn start(
    store: &crate::store::Store,
    target: &crate::ssh::SshTarget,
    request: &crate::ssh::ConnectRequest,
    instance: Option<&str>,
    recipe: Recipe,
    options: &RecipeOptions,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<crate::job::JobStatus, InstallError> {
    use crate::job::record::{self, NewJob};
    let facts = read_facts(target, recipe, now).await?;
    let text = script(recipe, options, &facts)?;
    let id = crate::job::JobId::generate(now);
    let label = target.destination().label();
    let job = NewJob {
        id: &id,
        instance,
        target: &label,
        request,
        name: None,
        recipe: Some(recipe.as_str()),
        options: options.as_map(),
        script: &text,
        now,
    };
    Ok(record::start_recorded(store, target, &crate::job::JobRoot::Home, &job).await?)
}

/// A piece of a job's log as the Install page shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct JobLog {
    /// Log bytes delivered so far, this piece included (attach again from here).
    #[ts(type = "number")]
    pub offset: u64,
    pub text: String,
    pub progress: progress::Progress,
    /// The link to the instance is down and being redialled; the job goes on there. A piece
    /// with no text says the link changed.
    pub link_lost: bool,
}

/// Follow recorded job `id` from byte `from` until it ends, handing each piece of its log to
/// `on_log` as whole UTF-8 text with the progress read so far; redials after a drop and keeps
/// the job's final state and offset.
pub async fn follow_recorded(
    store: &crate::store::Store,
    target: &dyn crate::target::Target,
    id: &str,
    from: u64,
    on_log: &mut (dyn FnMut(JobLog) + Send),
    clock: &dyn crate::clock::Clock,
) -> Result<crate::job::JobStatus, InstallError> {
    let started = std::time::Instant::now();
    // The log and the link both speak through `on_log`, one at a time.
    struct Following<'a> {
        progress: progress::Progress,
        text: crate::job::Utf8Chunks,
        delivered: u64,
        link_lost: bool,
        on_log: &'a mut (dyn FnMut(JobLog) + Send),
    }
    let following = std::sync::Mutex::new(Following {
        progress: progress::Progress::default(),
        text: crate::job::Utf8Chunks::default(),
        delivered: from,
        link_lost: false,
        on_log,
    });
    let mut sink = |chunk: &[u8]| {
        let Ok(mut f) = following.lock() else { return };
        f.delivered += chunk.len() as u64;
        f.progress.feed(chunk, started.elapsed().as_secs_f64());
        let log = JobLog {
            offset: f.delivered,
            text: f.text.push(chunk),
            progress: f.progress.clone(),
            link_lost: f.link_lost,
        };
        (f.on_log)(log);
    };
    let mut on_link = |state: crate::job::LinkChange| {
        let Ok(mut f) = following.lock() else { return };
        f.link_lost = state == crate::job::LinkChange::Lost;
        let log = JobLog {
            offset: f.delivered,
            text: String::new(),
            progress: f.progress.clone(),
            link_lost: f.link_lost,
        };
        (f.on_log)(log);
    };
    let mut offset = from;
    Ok(crate::job::record::attach_recorded(
        store,
        target,
        id,
        &mut offset,
        &mut sink,
        &mut on_link,
        clock,
    )
    .await?)
}

/// A recipe and its option specs, for the UI and `install --help`.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct RecipeInfo {
    pub recipe: Recipe,
    pub summary: String,
    pub options: Vec<OptionInfo>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct OptionInfo {
    pub name: String,
    pub default: String,
    pub help: String,
    /// The allowed values, when the option is a choice.
    pub choices: Vec<String>,
}

pub fn catalog() -> Vec<RecipeInfo> {
    Recipe::ALL
        .into_iter()
        .map(|recipe| RecipeInfo {
            recipe,
            summary: recipe.summary().to_owned(),
            options: recipe
                .options()
                .iter()
                .map(|s| OptionInfo {
                    name: s.name.to_owned(),
                    default: s.default.to_owned(),
                    help: s.help.to_owned(),
                    choices: match s.kind {
                        ValueKind::Choice(list) => list.iter().map(|c| (*c).to_owned()).collect(),
                        _ => Vec::new(),
                    },
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests;

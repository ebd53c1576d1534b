//! Each recipe's state on an instance as its last Verify run saw it: installed (with the
//! version), missing, outdated (there but not usable as it is: a CPU PyTorch, Docker without the
//! GPU runtime), impossible (Docker on a container) or unknown (Verify does not look for it).
//! A pure function of the facts, so the recipe cards say exactly what Verify read.

use chrono::{DateTime, Utc};
use serde::Serialize;
use ts_rs::TS;

use super::{InstallError, Recipe};
use crate::probe::Facts;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum RecipeState {
    Installed,
    Missing,
    /// There, but not what the recipe installs (needs running again).
    Outdated,
    /// Cannot be installed on this kind of machine (Docker in a container).
    Impossible,
    /// The last Verify run did not look (or there is none).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct RecipeStatus {
    pub recipe: Recipe,
    pub state: RecipeState,
    /// What Verify read, e.g. `2.5.1+cu124` or `conda 24.9.2`.
    pub version: Option<String>,
    /// Why outdated or impossible, in a few words (en; the UI shows its own text by state).
    pub reason: Option<String>,
}

/// The recipe cards' states with the Verify run they come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct RecipeStatuses {
    /// When that Verify run read the facts; `None` when the instance was never verified.
    pub checked_at: Option<DateTime<Utc>>,
    pub recipes: Vec<RecipeStatus>,
}

fn status(recipe: Recipe, state: RecipeState, version: Option<String>) -> RecipeStatus {
    RecipeStatus {
        recipe,
        state,
        version,
        reason: None,
    }
}

fn because(mut status: RecipeStatus, reason: &str) -> RecipeStatus {
    status.reason = Some(reason.to_owned());
    status
}

/// Every recipe's state from one Verify run's facts. Pure.
pub fn recipe_statuses(facts: &Facts) -> Vec<RecipeStatus> {
    Recipe::ALL
        .into_iter()
        .map(|recipe| one(recipe, facts))
        .collect()
}

fn one(recipe: Recipe, facts: &Facts) -> RecipeStatus {
    use RecipeState::{Impossible, Installed, Missing, Outdated, Unknown};
    let in_container = facts.system.as_ref().is_some_and(|s| s.container.is_some());
    match recipe {
        Recipe::Mirrors => match &facts.python {
            Some(python) => match python.pip_index_url.as_deref() {
                Some(url) if !url.contains("pypi.org") => {
                    status(recipe, Installed, Some(url.to_owned()))
                }
                _ => status(recipe, Missing, None),
            },
            None => status(recipe, Unknown, None),
        },
        Recipe::Miniconda => match &facts.conda {
            Some(conda) if conda.path.is_some() => status(
                recipe,
                Installed,
                conda.version.clone().map(|v| format!("conda {v}")),
            ),
            Some(_) => status(recipe, Missing, None),
            None => status(recipe, Unknown, None),
        },
        Recipe::Pytorch => match &facts.torch {
            Some(torch) if torch.installed() => {
                let version = torch.version.clone();
                if torch.is_cpu_build() {
                    because(status(recipe, Outdated, version), "CPU-only build")
                } else if torch.available == Some(false) {
                    because(status(recipe, Outdated, version), "CUDA not available")
                } else if torch.kernel.as_ref().is_some_and(|k| !k.ok) {
                    because(status(recipe, Outdated, version), "kernel launch failed")
                } else {
                    status(recipe, Installed, version)
                }
            }
            Some(torch) if torch.python_missing || torch.import_error.is_some() => {
                status(recipe, Missing, None)
            }
            Some(_) => status(recipe, Missing, None),
            None => status(recipe, Unknown, None),
        },
        Recipe::Pip => match &facts.python {
            Some(python) => match &python.pip_version {
                Some(version) => status(recipe, Installed, Some(format!("pip {version}"))),
                None => status(recipe, Missing, None),
            },
            None => status(recipe, Unknown, None),
        },
        Recipe::Ollama => match &facts.ollama {
            Some(ollama) if ollama.path.is_some() => {
                status(recipe, Installed, ollama.version.clone())
            }
            Some(_) => status(recipe, Missing, None),
            None => status(recipe, Unknown, None),
        },
        Recipe::Docker | Recipe::Tgi if in_container => because(
            status(recipe, Impossible, None),
            "the instance is a container",
        ),
        Recipe::Docker => match &facts.docker {
            Some(docker) if docker.installed() => {
                let version = docker
                    .server_version
                    .clone()
                    .or_else(|| docker.client_version.clone());
                if docker.daemon_reachable && docker.has_gpu_runtime() {
                    status(recipe, Installed, version)
                } else {
                    because(status(recipe, Outdated, version), "no NVIDIA runtime")
                }
            }
            Some(_) => status(recipe, Missing, None),
            None => status(recipe, Unknown, None),
        },
        Recipe::Vllm | Recipe::Tgi | Recipe::PerGpu => status(recipe, Unknown, None),
    }
}

/// Recipes Verify did not see (vLLM, TGI; any recipe when Verify never ran) count as installed
/// once a job of theirs succeeded on the instance. One process per GPU installs nothing, so it
/// stays unknown. Pure.
pub fn with_succeeded_jobs(statuses: &mut [RecipeStatus], succeeded: &[Recipe]) {
    for status in statuses {
        if status.state == RecipeState::Unknown
            && status.recipe != Recipe::PerGpu
            && succeeded.contains(&status.recipe)
        {
            status.state = RecipeState::Installed;
            status.reason = Some("a Leasehold job succeeded".to_owned());
        }
    }
}

/// The states from `instance`'s last Verify run (all unknown when it was never verified),
/// completed by the recipe jobs that succeeded there.
pub async fn for_instance(
    store: &crate::store::Store,
    instance: &str,
) -> Result<RecipeStatuses, InstallError> {
    crate::job::record::check_instance(store, instance).await?;
    let history = |err: crate::verify::VerifyError| InstallError::History(err.to_string());
    let last = crate::verify::history::history(store, Some(instance), "", 1)
        .await
        .map_err(history)?;
    let succeeded: Vec<Recipe> = crate::job::record::list_for_instance(store, instance)
        .await?
        .into_iter()
        .filter(|job| job.state == crate::job::JobState::Succeeded)
        .filter_map(|job| Recipe::parse(job.recipe.as_deref()?).ok())
        .collect();
    let (checked_at, mut recipes) = match last.first() {
        Some(run) => {
            let report = crate::verify::history::load(store, run.id)
                .await
                .map_err(history)?;
            (
                Some(report.facts.collected_at),
                recipe_statuses(&report.facts),
            )
        }
        None => (
            None,
            Recipe::ALL
                .into_iter()
                .map(|recipe| status(recipe, RecipeState::Unknown, None))
                .collect(),
        ),
    };
    with_succeeded_jobs(&mut recipes, &succeeded);
    Ok(RecipeStatuses {
        checked_at,
        recipes,
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::probe::docker::DockerFacts;
    use crate::probe::ollama::OllamaFacts;
    use crate::probe::python::{CondaFacts, PythonFacts};
    use crate::probe::system::SystemFacts;
    use crate::probe::torch::TorchFacts;

    fn state_of(facts: &Facts, recipe: Recipe) -> (RecipeState, Option<String>) {
        let found = recipe_statuses(facts)
            .into_iter()
            .find(|s| s.recipe == recipe)
            .expect("every recipe has a status");
        (found.state, found.version)
    }

    fn facts() -> Facts {
        Facts::empty(
            "root@gpu:22",
            Utc.with_ymd_and_hms(2026, 5, 1, 8, 0, 0).unwrap(),
        )
    }

    #[test]
    fn nothing_verified_is_unknown_not_missing() {
        let facts = facts();
        assert!(recipe_statuses(&facts)
            .iter()
            .all(|s| s.state == RecipeState::Unknown));
    }

    #[test]
    fn versions_come_from_the_facts() {
        let mut facts = facts();
        facts.conda = Some(CondaFacts {
            path: Some("/root/miniconda3/bin/conda".into()),
            version: Some("24.9.2".into()),
            ..CondaFacts::default()
        });
        facts.torch = Some(TorchFacts {
            version: Some("2.5.1+cu124".into()),
            cuda_build: Some("12.4".into()),
            available: Some(true),
            ..TorchFacts::default()
        });
        facts.ollama = Some(OllamaFacts::default());
        facts.python = Some(PythonFacts {
            pip_version: Some("24.2".into()),
            pip_index_url: Some("https://pypi.tuna.tsinghua.edu.cn/simple".into()),
            ..PythonFacts::default()
        });
        assert_eq!(
            state_of(&facts, Recipe::Miniconda),
            (RecipeState::Installed, Some("conda 24.9.2".into()))
        );
        assert_eq!(
            state_of(&facts, Recipe::Pytorch),
            (RecipeState::Installed, Some("2.5.1+cu124".into()))
        );
        assert_eq!(
            state_of(&facts, Recipe::Ollama),
            (RecipeState::Missing, None)
        );
        assert_eq!(state_of(&facts, Recipe::Mirrors).0, RecipeState::Installed);
        assert_eq!(state_of(&facts, Recipe::Vllm), (RecipeState::Unknown, None));
    }

    #[test]
    fn a_succeeded_job_fills_in_what_verify_cannot_see_but_never_overrides_it() {
        let mut facts = facts();
        facts.torch = Some(TorchFacts {
            version: Some("2.5.1+cpu".into()),
            ..TorchFacts::default()
        });
        let mut statuses = recipe_statuses(&facts);
        with_succeeded_jobs(
            &mut statuses,
            &[Recipe::Vllm, Recipe::Pytorch, Recipe::PerGpu],
        );
        let of = |recipe| statuses.iter().find(|s| s.recipe == recipe).unwrap().state;
        assert_eq!(of(Recipe::Vllm), RecipeState::Installed);
        assert_eq!(
            of(Recipe::Pytorch),
            RecipeState::Outdated,
            "Verify's reading wins"
        );
        assert_eq!(of(Recipe::Tgi), RecipeState::Unknown);
        assert_eq!(
            of(Recipe::PerGpu),
            RecipeState::Unknown,
            "a launcher installs nothing"
        );
    }

    #[test]
    fn a_cpu_pytorch_is_outdated_and_docker_in_a_container_impossible() {
        let mut facts = facts();
        facts.torch = Some(TorchFacts {
            version: Some("2.5.1+cpu".into()),
            cuda_build: None,
            available: Some(false),
            ..TorchFacts::default()
        });
        facts.system = Some(SystemFacts {
            container: Some("docker".into()),
            ..SystemFacts::default()
        });
        facts.docker = Some(DockerFacts::default());
        let statuses = recipe_statuses(&facts);
        let torch = statuses
            .iter()
            .find(|s| s.recipe == Recipe::Pytorch)
            .unwrap();
        assert_eq!(torch.state, RecipeState::Outdated);
        assert_eq!(torch.version.as_deref(), Some("2.5.1+cpu"));
        assert!(torch.reason.is_some());
        assert_eq!(state_of(&facts, Recipe::Docker).0, RecipeState::Impossible);
        assert_eq!(state_of(&facts, Recipe::Tgi).0, RecipeState::Impossible);
    }
}

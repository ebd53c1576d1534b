//! The check a model-server recipe ends with, from this computer: a port forward over the SSH
//! connection to the server's port on the instance, one request through it with reqwest, the
//! answer, tokens per second, and for Ollama whether the model sits wholly in GPU memory
//! (`/api/ps`: `size_vram` below `size` is the `ollama.cpu_offload` finding).
//!
//! Why from here as well as in the script: the script's own curl check proves the server runs
//! on the instance; this one proves the user can reach it the way they will use it (through the
//! forward), and reads the numbers with a real JSON parser. Everything the server answers is
//! untrusted: sizes are checked, text is cut short, nothing of it runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{InstallError, Recipe, RecipeOptions};
use crate::diagnose::{Finding, Lang};
use crate::probe::ollama::LoadedModel;
use crate::ssh::SshTarget;

/// Which API the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum ServerApi {
    Ollama,
    /// vLLM's OpenAI-compatible `/v1/completions`.
    Openai,
    /// Text Generation Inference's `/generate`.
    Tgi,
}

/// What one request through the forward showed.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct ServeCheck {
    pub api: ServerApi,
    pub model: String,
    /// The forward's local URL the check went through (it is closed afterwards).
    pub url: String,
    /// The start of the answer (at most [`ANSWER_CHARS`] characters).
    pub answer: String,
    #[ts(type = "number | null")]
    pub tokens: Option<u64>,
    pub tokens_per_second: Option<f64>,
    /// Ollama: the model's size and how much of it is in GPU memory (`/api/ps`).
    #[ts(type = "number | null")]
    pub size_bytes: Option<u64>,
    #[ts(type = "number | null")]
    pub size_vram_bytes: Option<u64>,
    pub findings: Vec<Finding>,
}

/// How much of an answer is kept for the page.
pub const ANSWER_CHARS: usize = 400;
const PROMPT: &str = "Say hello in one short sentence.";
/// A first answer loads the model into memory; big models take minutes.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// Server answers are small JSON; anything bigger is not a model server.
const MAX_BODY: usize = 4 * 1024 * 1024;

fn failed(what: &str, message: impl std::fmt::Display) -> InstallError {
    InstallError::ServerCheck {
        what: what.to_owned(),
        message: message.to_string().chars().take(300).collect(),
    }
}

fn client() -> Result<reqwest::Client, InstallError> {
    reqwest::Client::builder()
        // The forward is on 127.0.0.1; a proxy from the environment must not get the request.
        .no_proxy()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|err| failed("http client", err))
}

async fn json<T: serde::de::DeserializeOwned>(
    what: &str,
    request: reqwest::RequestBuilder,
) -> Result<T, InstallError> {
    let mut response = request.send().await.map_err(|err| failed(what, err))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| failed(what, err))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(failed(what, "the answer is larger than a model server's"));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        return Err(failed(
            what,
            format!("HTTP {status}: {}", String::from_utf8_lossy(&body)),
        ));
    }
    serde_json::from_slice(&body)
        .map_err(|err| failed(what, format!("not the expected JSON: {err}")))
}

fn cut(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .take(ANSWER_CHARS)
        .collect()
}

fn per_second(tokens: u64, seconds: f64) -> Option<f64> {
    (seconds > 0.0 && tokens > 0).then(|| (tokens as f64 / seconds * 10.0).round() / 10.0)
}

#[derive(Deserialize)]
struct OllamaGenerate {
    #[serde(default)]
    response: String,
    eval_count: Option<u64>,
    /// Nanoseconds spent generating `eval_count` tokens.
    eval_duration: Option<u64>,
}

#[derive(Deserialize)]
struct OllamaPs {
    #[serde(default)]
    models: Vec<OllamaRunning>,
}

#[derive(Deserialize)]
struct OllamaRunning {
    #[serde(default)]
    name: String,
    #[serde(default)]
    model: String,
    size: u64,
    size_vram: u64,
}

/// `1.3 GB`, as `ollama ps` prints sizes.
fn human_size(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// The offload finding when the model is not wholly in GPU memory. Pure.
pub fn offload_finding(model: &str, size: u64, size_vram: u64, lang: Lang) -> Option<Finding> {
    if size == 0 || size_vram >= size {
        return None;
    }
    let gpu_pct = u32::try_from(size_vram.saturating_mul(100) / size).unwrap_or(0);
    let cpu_pct = 100 - gpu_pct;
    let loaded = LoadedModel {
        name: model.to_owned(),
        size: Some(human_size(size)),
        processor: Some(if gpu_pct == 0 {
            "100% CPU".to_owned()
        } else {
            format!("{cpu_pct}%/{gpu_pct}% CPU/GPU")
        }),
        cpu_pct: Some(cpu_pct),
        gpu_pct: Some(gpu_pct),
        context: None,
    };
    let mut finding = crate::diagnose::rules::ollama_offload(lang, &loaded);
    finding.evidence.push(format!(
        "/api/ps: size {size} bytes, size_vram {size_vram} bytes"
    ));
    Some(finding)
}

/// One answer from Ollama at `base` (`http://127.0.0.1:PORT`), its speed and where the model
/// sits.
pub async fn check_ollama(base: &str, model: &str, lang: Lang) -> Result<ServeCheck, InstallError> {
    let http = client()?;
    let base = base.trim_end_matches('/');
    let answer: OllamaGenerate = json(
        "/api/generate",
        http.post(format!("{base}/api/generate"))
            .json(&serde_json::json!({
                "model": model,
                "prompt": PROMPT,
                "stream": false,
            })),
    )
    .await?;
    let seconds = answer.eval_duration.map(|n| n as f64 / 1e9).unwrap_or(0.0);
    let ps: OllamaPs = json("/api/ps", http.get(format!("{base}/api/ps"))).await?;
    let loaded = ps
        .models
        .iter()
        .find(|m| m.name == model || m.model == model)
        .or_else(|| ps.models.first());
    let findings = loaded
        .and_then(|m| offload_finding(model, m.size, m.size_vram, lang))
        .into_iter()
        .collect();
    Ok(ServeCheck {
        api: ServerApi::Ollama,
        model: model.to_owned(),
        url: base.to_owned(),
        answer: cut(&answer.response),
        tokens: answer.eval_count,
        tokens_per_second: answer.eval_count.and_then(|c| per_second(c, seconds)),
        size_bytes: loaded.map(|m| m.size),
        size_vram_bytes: loaded.map(|m| m.size_vram),
        findings,
    })
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct Usage {
    completion_tokens: Option<u64>,
}

/// One completion from an OpenAI-compatible server (vLLM) and its speed, timed here.
pub async fn check_openai(base: &str, model: &str) -> Result<ServeCheck, InstallError> {
    let http = client()?;
    let base = base.trim_end_matches('/');
    let started = Instant::now();
    let answer: Completion = json(
        "/v1/completions",
        http.post(format!("{base}/v1/completions"))
            .json(&serde_json::json!({ "model": model, "prompt": PROMPT, "max_tokens": 64 })),
    )
    .await?;
    let seconds = started.elapsed().as_secs_f64();
    let text = answer
        .choices
        .first()
        .map(|c| c.text.as_str())
        .unwrap_or("");
    if answer.choices.is_empty() {
        return Err(failed("/v1/completions", "the answer has no choices"));
    }
    let tokens = answer.usage.and_then(|u| u.completion_tokens);
    Ok(ServeCheck {
        api: ServerApi::Openai,
        model: model.to_owned(),
        url: base.to_owned(),
        answer: cut(text),
        tokens,
        tokens_per_second: tokens.and_then(|t| per_second(t, seconds)),
        size_bytes: None,
        size_vram_bytes: None,
        findings: Vec::new(),
    })
}

#[derive(Deserialize)]
struct TgiGenerate {
    #[serde(default)]
    generated_text: String,
    details: Option<TgiDetails>,
}

#[derive(Deserialize)]
struct TgiDetails {
    generated_tokens: Option<u64>,
}

/// One generation from Text Generation Inference and its speed, timed here.
pub async fn check_tgi(base: &str, model: &str) -> Result<ServeCheck, InstallError> {
    let http = client()?;
    let base = base.trim_end_matches('/');
    let started = Instant::now();
    let answer: TgiGenerate = json(
        "/generate",
        http.post(format!("{base}/generate"))
            .json(&serde_json::json!({
                "inputs": PROMPT,
                "parameters": { "max_new_tokens": 64, "details": true },
            })),
    )
    .await?;
    let seconds = started.elapsed().as_secs_f64();
    let tokens = answer.details.and_then(|d| d.generated_tokens);
    Ok(ServeCheck {
        api: ServerApi::Tgi,
        model: model.to_owned(),
        url: base.to_owned(),
        answer: cut(&answer.generated_text),
        tokens,
        tokens_per_second: tokens.and_then(|t| per_second(t, seconds)),
        size_bytes: None,
        size_vram_bytes: None,
        findings: Vec::new(),
    })
}

/// The server a recipe leaves running: its API, the port on the instance, the model. `None`
/// for recipes that start no server.
pub fn server_of(recipe: Recipe, options: &RecipeOptions) -> Option<(ServerApi, u16, String)> {
    let port = |key: &str, fallback: u16| options.get(recipe, key).parse().unwrap_or(fallback);
    match recipe {
        Recipe::Ollama => {
            let host = options.get(recipe, "host");
            let port = host
                .rsplit_once(':')
                .and_then(|(_, p)| p.parse().ok())
                .unwrap_or(11434);
            Some((ServerApi::Ollama, port, options.get(recipe, "model")))
        }
        Recipe::Vllm => Some((
            ServerApi::Openai,
            port("port", 8000),
            options.get(recipe, "model"),
        )),
        Recipe::Tgi => Some((
            ServerApi::Tgi,
            port("port", 8080),
            options.get(recipe, "model"),
        )),
        _ => None,
    }
}

/// Forward a free local port to the server's port on the instance, check the server through
/// it, and close the forward again.
pub async fn check_through_forward(
    target: &Arc<SshTarget>,
    recipe: Recipe,
    options: &RecipeOptions,
    lang: Lang,
) -> Result<ServeCheck, InstallError> {
    let (api, port, model) =
        server_of(recipe, options).ok_or(InstallError::NoServer(recipe.as_str()))?;
    let forward = target
        .forward_local(0, "127.0.0.1", port)
        .await
        .map_err(|err| failed("port forward", err))?;
    let base = format!("http://127.0.0.1:{}", forward.local_port);
    let checked = match api {
        ServerApi::Ollama => check_ollama(&base, &model, lang).await,
        ServerApi::Openai => check_openai(&base, &model).await,
        ServerApi::Tgi => check_tgi(&base, &model).await,
    };
    let _ = target.close_forward(forward.id);
    checked
}

/// The check for recorded job `id` (its recipe and options), e.g. when the Install page sees
/// a server recipe succeed.
pub async fn check_recorded(
    store: &crate::store::Store,
    target: &Arc<SshTarget>,
    id: &str,
    lang: Lang,
) -> Result<ServeCheck, InstallError> {
    let job = crate::job::record::load(store, id).await?;
    let recipe = Recipe::parse(job.recipe.as_deref().unwrap_or_default())?;
    let options = RecipeOptions::from_map(recipe, job.options)?;
    check_through_forward(target, recipe, &options, lang).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_partly_in_vram_is_the_offload_finding_in_both_languages() {
        let en = offload_finding("qwen2.5:7b", 6_000_000_000, 4_500_000_000, Lang::En)
            .expect("partial offload is a finding");
        assert_eq!(en.code, "ollama.cpu_offload");
        assert!(en.title.contains("part of qwen2.5:7b"), "{}", en.title);
        assert!(
            en.evidence.iter().any(|e| e.contains("25%/75% CPU/GPU")),
            "{:?}",
            en.evidence
        );
        assert!(!en.fix.is_empty());
        let zh = offload_finding("qwen2.5:7b", 6_000_000_000, 0, Lang::ZhCn).expect("all on CPU");
        assert!(zh.title.contains("完全跑在 CPU 上"), "{}", zh.title);
        assert!(offload_finding("m", 10, 10, Lang::En).is_none());
        assert!(offload_finding("m", 0, 0, Lang::En).is_none());
    }

    #[test]
    fn server_recipes_name_their_port_and_model() {
        let options = |recipe, pairs: &[&str]| {
            RecipeOptions::parse(
                recipe,
                &pairs.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>(),
            )
            .expect("valid")
        };
        assert_eq!(
            server_of(
                Recipe::Ollama,
                &options(Recipe::Ollama, &["host=0.0.0.0:11500", "model=llama3"])
            ),
            Some((ServerApi::Ollama, 11500, "llama3".to_owned()))
        );
        assert_eq!(
            server_of(Recipe::Vllm, &options(Recipe::Vllm, &[])),
            Some((
                ServerApi::Openai,
                8000,
                "Qwen/Qwen2.5-1.5B-Instruct".to_owned()
            ))
        );
        assert_eq!(server_of(Recipe::Pip, &options(Recipe::Pip, &[])), None);
    }
}

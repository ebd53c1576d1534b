//! The model-server check through a real port forward over a real sshd: an Ollama stand-in
//! answering `/api/generate`, `/api/ps` and `/api/tags` the way Ollama's API documents them,
//! and an OpenAI-compatible stand-in for vLLM. The check reaches them only through the
//! forward the SSH connection opens (the stand-ins listen on the instance's loopback; this
//! test's sshd runs on this machine, so that is 127.0.0.1 here too).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use leasehold_core::diagnose::Lang;
use leasehold_core::install::serve::{check_through_forward, ServerApi};
use leasehold_core::install::{Recipe, RecipeOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What a stand-in answers: (status, JSON body) for a method, path and request body.
type Route = fn(&str, &str, &serde_json::Value) -> (u16, serde_json::Value);

struct StandIn {
    port: u16,
    requests: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A small HTTP/1.1 server: one request per connection, `Connection: close`.
async fn stand_in(route: Route) -> StandIn {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                while buffer.len() < head_end + length {
                    let n = stream.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                }
                let mut words = head.split_whitespace();
                let method = words.next().unwrap_or_default().to_owned();
                let path = words.next().unwrap_or_default().to_owned();
                let body = serde_json::from_slice(&buffer[head_end..]).unwrap_or_default();
                counter.fetch_add(1, Ordering::SeqCst);
                let (status, answer) = route(&method, &path, &body);
                let text = answer.to_string();
                let reply = format!(
                    "HTTP/1.1 {status} {}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    if status == 200 { "OK" } else { "Not Found" },
                    text.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    StandIn {
        port,
        requests,
        task,
    }
}

const MODEL: &str = "qwen2.5:7b";
const SIZE: u64 = 6_654_289_920;

fn running_model(size_vram: u64) -> serde_json::Value {
    serde_json::json!({
        "name": MODEL, "model": MODEL, "size": SIZE,
        "digest": "845dbda0ea48ed749caafd9e6037047aa19acfcfd82e704d7ca97d631a0b697e",
        "details": {"parent_model": "", "format": "gguf", "family": "qwen2", "families": ["qwen2"],
                    "parameter_size": "7.6B", "quantization_level": "Q4_K_M"},
        "expires_at": "2026-05-01T08:05:00.000000000Z", "size_vram": size_vram
    })
}

/// Ollama's API as documented: unknown models are a 404 with `{"error": …}`.
fn ollama_route(
    method: &str,
    path: &str,
    body: &serde_json::Value,
    size_vram: u64,
) -> (u16, serde_json::Value) {
    match (method, path) {
        ("GET", "/api/version") => (200, serde_json::json!({"version": "0.6.2"})),
        ("GET", "/api/tags") => (
            200,
            serde_json::json!({"models": [{"name": MODEL, "model": MODEL, "modified_at": "2026-05-01T07:00:00Z",
                "size": 4_683_087_332_u64, "digest": "845dbda0ea48", "details": {"format": "gguf", "family": "qwen2"}}]}),
        ),
        ("GET", "/api/ps") => (
            200,
            serde_json::json!({"models": [running_model(size_vram)]}),
        ),
        ("POST", "/api/generate") if body["model"] == MODEL && body["stream"] == false => (
            200,
            serde_json::json!({
                "model": MODEL, "created_at": "2026-05-01T08:00:00Z",
                "response": "Hello! Nice to meet you.", "done": true, "done_reason": "stop",
                "context": [1, 2, 3], "total_duration": 900_000_000_u64, "load_duration": 300_000_000_u64,
                "prompt_eval_count": 12, "prompt_eval_duration": 100_000_000_u64,
                "eval_count": 20, "eval_duration": 500_000_000_u64
            }),
        ),
        ("POST", "/api/generate") => (
            404,
            serde_json::json!({"error": format!("model '{}' not found", body["model"].as_str().unwrap_or(""))}),
        ),
        _ => (404, serde_json::json!({"error": "not found"})),
    }
}

fn ollama_offloading(
    method: &str,
    path: &str,
    body: &serde_json::Value,
) -> (u16, serde_json::Value) {
    ollama_route(method, path, body, 4_000_000_000)
}

fn ollama_in_vram(method: &str, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
    ollama_route(method, path, body, SIZE)
}

const VLLM_MODEL: &str = "Qwen/Qwen2.5-1.5B-Instruct";

/// vLLM's OpenAI-compatible server: `/v1/models` and `/v1/completions` with `usage`.
fn openai(method: &str, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
    match (method, path) {
        ("GET", "/v1/models") => (
            200,
            serde_json::json!({"object": "list", "data": [{"id": VLLM_MODEL, "object": "model", "owned_by": "vllm"}]}),
        ),
        ("POST", "/v1/completions") if body["model"] == VLLM_MODEL => (
            200,
            serde_json::json!({
                "id": "cmpl-1", "object": "text_completion", "created": 1_746_086_400, "model": VLLM_MODEL,
                "choices": [{"index": 0, "text": " Alice, and I work with GPUs.", "logprobs": null, "finish_reason": "length"}],
                "usage": {"prompt_tokens": 5, "total_tokens": 21, "completion_tokens": 16}
            }),
        ),
        _ => (
            404,
            serde_json::json!({"object": "error", "message": "The model does not exist.", "code": 404}),
        ),
    }
}

fn options(recipe: Recipe, pairs: &[String]) -> RecipeOptions {
    RecipeOptions::parse(recipe, pairs).expect("valid options")
}

#[tokio::test]
async fn ollama_through_a_forward_reports_speed_and_cpu_offload() {
    if !leasehold_testkit::netns::can_run("ollama_through_a_forward_reports_speed_and_cpu_offload")
    {
        return;
    }
    let setup = common::Setup::new();
    let target = Arc::new(setup.connect().await);
    let server = stand_in(ollama_offloading).await;
    let opts = options(
        Recipe::Ollama,
        &[
            format!("host=127.0.0.1:{}", server.port),
            format!("model={MODEL}"),
        ],
    );

    let check = check_through_forward(&target, Recipe::Ollama, &opts, Lang::En)
        .await
        .expect("the stand-in answers through the forward");
    assert_eq!(check.api, ServerApi::Ollama);
    assert_eq!(check.answer, "Hello! Nice to meet you.");
    assert_eq!(check.tokens, Some(20));
    assert_eq!(check.tokens_per_second, Some(40.0));
    assert_eq!(check.size_bytes, Some(SIZE));
    assert_eq!(check.size_vram_bytes, Some(4_000_000_000));
    assert!(
        !check.url.ends_with(&format!(":{}", server.port)),
        "the check went through the forward's own port, not straight to the server: {}",
        check.url
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 2, "generate + ps");
    let codes: Vec<_> = check.findings.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["ollama.cpu_offload"]);
    assert!(
        check.findings[0].fix.len() >= 2,
        "{:?}",
        check.findings[0].fix
    );
    assert!(
        target.forwards().is_empty(),
        "the forward is closed afterwards"
    );

    let zh = check_through_forward(&target, Recipe::Ollama, &opts, Lang::ZhCn)
        .await
        .expect("answers again");
    assert!(
        zh.findings[0].title.contains("CPU"),
        "{}",
        zh.findings[0].title
    );
    assert!(
        zh.findings[0].title.contains("一部分"),
        "{}",
        zh.findings[0].title
    );
}

#[tokio::test]
async fn ollama_wholly_in_vram_has_no_finding_and_a_missing_model_is_an_error() {
    if !leasehold_testkit::netns::can_run("ollama_wholly_in_vram_has_no_finding") {
        return;
    }
    let setup = common::Setup::new();
    let target = Arc::new(setup.connect().await);
    let server = stand_in(ollama_in_vram).await;
    let host = format!("host=127.0.0.1:{}", server.port);
    let check = check_through_forward(
        &target,
        Recipe::Ollama,
        &options(Recipe::Ollama, &[host.clone(), format!("model={MODEL}")]),
        Lang::En,
    )
    .await
    .expect("answers");
    assert!(check.findings.is_empty(), "{:?}", check.findings);

    let err = check_through_forward(
        &target,
        Recipe::Ollama,
        &options(Recipe::Ollama, &[host, "model=llama3:70b".to_owned()]),
        Lang::En,
    )
    .await
    .expect_err("a model the server does not have");
    assert_eq!(
        leasehold_core::Coded::code(&err),
        "install.server_check_failed"
    );
    assert!(err.to_string().contains("not found"), "{err}");
}

#[tokio::test]
async fn vllm_through_a_forward_gives_one_completion_and_its_speed() {
    if !leasehold_testkit::netns::can_run("vllm_through_a_forward_gives_one_completion") {
        return;
    }
    let setup = common::Setup::new();
    let target = Arc::new(setup.connect().await);
    let server = stand_in(openai).await;
    let check = check_through_forward(
        &target,
        Recipe::Vllm,
        &options(Recipe::Vllm, &[format!("port={}", server.port)]),
        Lang::En,
    )
    .await
    .expect("the OpenAI stand-in answers through the forward");
    assert_eq!(check.api, ServerApi::Openai);
    assert_eq!(check.answer, " Alice, and I work with GPUs.");
    assert_eq!(check.tokens, Some(16));
    assert!(check.tokens_per_second.is_some_and(|t| t > 0.0));
    assert!(check.findings.is_empty());
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);

    // Nothing listens on the instance's port: a clear error, not a hang.
    let free = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let closed = free.local_addr().expect("addr").port();
    drop(free);
    let err = check_through_forward(
        &target,
        Recipe::Vllm,
        &options(Recipe::Vllm, &[format!("port={closed}")]),
        Lang::En,
    )
    .await
    .expect_err("no server");
    assert_eq!(
        leasehold_core::Coded::code(&err),
        "install.server_check_failed"
    );
}

/// Text Generation Inference's `/generate` with `details`.
fn tgi(method: &str, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
    match (method, path) {
        ("POST", "/generate") if body["parameters"]["details"] == true => (
            200,
            serde_json::json!({
                "generated_text": " Bob. I serve models.",
                "details": {"finish_reason": "length", "generated_tokens": 12, "seed": null, "prefill": [], "tokens": []}
            }),
        ),
        _ => (
            404,
            serde_json::json!({"error": "not found", "error_type": "not_found"}),
        ),
    }
}

#[tokio::test]
async fn tgi_through_a_forward_gives_one_generation_and_its_speed() {
    if !leasehold_testkit::netns::can_run("tgi_through_a_forward_gives_one_generation") {
        return;
    }
    let setup = common::Setup::new();
    let target = Arc::new(setup.connect().await);
    let server = stand_in(tgi).await;
    let check = check_through_forward(
        &target,
        Recipe::Tgi,
        &options(Recipe::Tgi, &[format!("port={}", server.port)]),
        Lang::En,
    )
    .await
    .expect("the TGI stand-in answers through the forward");
    assert_eq!(check.api, ServerApi::Tgi);
    assert_eq!(check.answer, " Bob. I serve models.");
    assert_eq!(check.tokens, Some(12));
    assert!(check.tokens_per_second.is_some_and(|t| t > 0.0));
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
}

//! The VRAM estimator: how much GPU memory a task takes, part by part, with the formula behind
//! each part so the user can check it.
//!
//! It follows the seeds' rules of thumb (7B at fp16 is ≈ 14 GB of weights and 15–18 GB for
//! inference at 4096 tokens; 13B ≈ 28 GB; 70B needs int4 to fit 48 GB; a full fine-tune of 7B
//! needs weights + gradients + AdamW states, far over 40 GB; LoRA on 7B fits 24 GB at batch
//! 2–4 with checkpointing; a q4_k_m 7B needs ≈ 6 GB) and the tests hold it to them.

mod formulas;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::models::{find_model, ModelShape};
use super::CatalogError;

pub use formulas::BYTES_PER_GIB;

/// What the user wants to do with the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Task {
    Inference,
    Lora,
    Qlora,
    Full,
}

impl Task {
    pub fn is_training(self) -> bool {
        !matches!(self, Task::Inference)
    }
}

/// Precision of the model weights (for QLoRA: of the compute; the base is always 4-bit NF4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub enum Precision {
    #[serde(rename = "fp32")]
    Fp32,
    #[serde(rename = "fp16")]
    Fp16,
    #[serde(rename = "bf16")]
    Bf16,
    #[serde(rename = "int8")]
    Int8,
    #[serde(rename = "int4")]
    Int4,
    #[serde(rename = "q4_k_m")]
    Q4KM,
}

impl Precision {
    pub fn is_quantized(self) -> bool {
        matches!(self, Precision::Int8 | Precision::Int4 | Precision::Q4KM)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Optimizer {
    Adamw,
    Adamw8bit,
}

macro_rules! text_enum {
    ($ty:ty, $what:literal, $($text:literal => $variant:expr),+ $(,)?) => {
        impl FromStr for $ty {
            type Err = CatalogError;
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text.trim().to_ascii_lowercase().as_str() {
                    $($text => Ok($variant),)+
                    _ => Err(CatalogError::InvalidInput(format!(
                        concat!($what, " {:?} is not one of: {}"),
                        text,
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }
    };
}

text_enum!(Task, "task", "inference" => Task::Inference, "lora" => Task::Lora,
    "qlora" => Task::Qlora, "full" => Task::Full);
text_enum!(Precision, "precision", "fp32" => Precision::Fp32, "fp16" => Precision::Fp16,
    "bf16" => Precision::Bf16, "int8" => Precision::Int8, "int4" => Precision::Int4,
    "q4_k_m" => Precision::Q4KM);
text_enum!(Optimizer, "optimizer", "adamw" => Optimizer::Adamw, "adamw8bit" => Optimizer::Adamw8bit);

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
            Precision::Q4KM => "q4_k_m",
        })
    }
}

/// The estimator's inputs. Either `params_b` or `model` (a preset) must be given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EstimateRequest {
    /// Parameters in billions.
    #[serde(default)]
    #[ts(optional)]
    pub params_b: Option<f64>,
    /// A preset name ("qwen2.5-7b", "llama3.1:70b", ...); its shape wins over `params_b`.
    #[serde(default)]
    #[ts(optional)]
    pub model: Option<String>,
    pub task: Task,
    pub precision: Precision,
    /// Tokens per sequence (prompt + output for inference).
    pub context: u32,
    pub batch: u32,
    pub optimizer: Optimizer,
    /// Recompute activations in the backward pass (training only). On by default, as in the
    /// fine-tuning tools renters use (LLaMA-Factory, Unsloth).
    pub grad_checkpointing: bool,
    pub lora_rank: u32,
}

impl Default for EstimateRequest {
    fn default() -> Self {
        Self {
            params_b: None,
            model: None,
            task: Task::Inference,
            precision: Precision::Fp16,
            context: 4096,
            batch: 1,
            optimizer: Optimizer::Adamw,
            grad_checkpointing: true,
            lora_rank: 16,
        }
    }
}

/// Memory by part, GiB (2^30 bytes), per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MemoryParts {
    pub weights_gib: f64,
    pub kv_cache_gib: f64,
    pub activations_gib: f64,
    pub gradients_gib: f64,
    pub optimizer_gib: f64,
    pub overhead_gib: f64,
}

impl MemoryParts {
    pub fn total(&self) -> f64 {
        self.weights_gib
            + self.kv_cache_gib
            + self.activations_gib
            + self.gradients_gib
            + self.optimizer_gib
            + self.overhead_gib
    }
}

/// Product text in both languages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Text {
    pub en: String,
    pub zh: String,
}

impl Text {
    pub fn new(en: impl Into<String>, zh: impl Into<String>) -> Self {
        Self {
            en: en.into(),
            zh: zh.into(),
        }
    }
}

/// A remark attached to an estimate or recommendation, with a stable code the UI can key on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Note {
    pub code: String,
    pub text: Text,
}

impl Note {
    pub fn new(code: &str, en: impl Into<String>, zh: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            text: Text::new(en, zh),
        }
    }
}

/// The formula behind each part, with the numbers filled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PartFormulas {
    pub weights: Text,
    pub kv_cache: Text,
    pub activations: Text,
    pub gradients: Text,
    pub optimizer: Text,
    pub overhead: Text,
}

/// The answer: parts, total, formulas and notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Estimate {
    /// Total per GPU, GiB.
    pub total_gib: f64,
    pub parts: MemoryParts,
    pub formulas: PartFormulas,
    pub notes: Vec<Note>,
    /// GPUs the model is spread over (1 unless estimating a multi-GPU option).
    pub gpu_count: u32,
    pub params_b: f64,
    pub model: ModelShape,
}

/// Estimate the memory of `request` on a single GPU.
pub fn estimate(request: &EstimateRequest) -> Result<Estimate, CatalogError> {
    estimate_on(request, 1)
}

/// Estimate the memory per GPU when the model is spread over `gpus` GPUs (tensor parallel for
/// inference, FSDP/ZeRO-3 sharding for training).
pub fn estimate_on(request: &EstimateRequest, gpus: u32) -> Result<Estimate, CatalogError> {
    let (shape, params) = resolve_model(request)?;
    validate(request)?;
    Ok(formulas::compute(request, &shape, params, gpus.max(1)))
}

fn resolve_model(request: &EstimateRequest) -> Result<(ModelShape, f64), CatalogError> {
    if let Some(name) = request.model.as_deref().filter(|n| !n.trim().is_empty()) {
        let shape = find_model(name).ok_or_else(|| CatalogError::UnknownModel(name.to_owned()))?;
        return Ok((shape.clone(), shape.params() as f64));
    }
    match request.params_b {
        Some(b) if b.is_finite() && b > 0.0 && b <= 2000.0 => {
            let params = b * 1e9;
            Ok((ModelShape::generic(params), params))
        }
        Some(b) => Err(CatalogError::InvalidInput(format!(
            "--params must be a number of billions between 0 and 2000, not {b}"
        ))),
        None => Err(CatalogError::InvalidInput(
            "give the model size with --params (billions) or a preset with --model".to_owned(),
        )),
    }
}

fn validate(request: &EstimateRequest) -> Result<(), CatalogError> {
    if request.context == 0 || request.context > 2_097_152 {
        return Err(CatalogError::InvalidInput(format!(
            "--context must be between 1 and 2097152 tokens, not {}",
            request.context
        )));
    }
    if request.batch == 0 || request.batch > 4096 {
        return Err(CatalogError::InvalidInput(format!(
            "--batch must be between 1 and 4096, not {}",
            request.batch
        )));
    }
    if matches!(request.task, Task::Lora | Task::Qlora) && !(1..=1024).contains(&request.lora_rank)
    {
        return Err(CatalogError::InvalidInput(format!(
            "--lora-rank must be between 1 and 1024, not {}",
            request.lora_rank
        )));
    }
    if request.task == Task::Full && request.precision.is_quantized() {
        return Err(CatalogError::InvalidInput(format!(
            "a full fine-tune trains every weight, which needs fp32, fp16 or bf16 weights, not {}; \
             for a quantized base use --task qlora",
            request.precision
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

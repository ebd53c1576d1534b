//! Model shapes for the VRAM estimator: the presets from public config.json files
//! (`data/models.toml`), and a generic shape for "a model of N billion parameters".

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::naming::NameKey;

/// The numbers of a decoder-only transformer that decide its memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ModelShape {
    /// Preset id (`qwen2.5-7b`), or `generic` for a shape derived from a parameter count.
    pub id: String,
    pub name: String,
    pub layers: u32,
    pub hidden: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub intermediate: u32,
    pub vocab: u32,
    pub tied_embeddings: bool,
    pub qkv_bias: bool,
    /// Key of the config.json source; `None` for the generic shape.
    pub source: Option<String>,
}

impl ModelShape {
    pub fn head_dim(&self) -> u32 {
        self.hidden / self.heads.max(1)
    }

    /// Width of the K (or V) projection: KV heads × head dim.
    pub fn kv_dim(&self) -> u64 {
        u64::from(self.kv_heads) * u64::from(self.head_dim())
    }

    /// Parameters of the linear layers inside the transformer blocks (what LoRA adapts and
    /// QLoRA quantizes).
    pub fn block_linear_params(&self) -> u64 {
        let d = u64::from(self.hidden);
        let ff = u64::from(self.intermediate);
        let attention = d * d * 2 + d * self.kv_dim() * 2;
        let mlp = d * ff * 3;
        u64::from(self.layers) * (attention + mlp)
    }

    /// Embedding and output-head parameters (kept in 16 bits by QLoRA).
    pub fn embedding_params(&self) -> u64 {
        let table = u64::from(self.vocab) * u64::from(self.hidden);
        if self.tied_embeddings {
            table
        } else {
            table * 2
        }
    }

    /// Total parameters: blocks (linear layers, q/k/v biases, two norms each), embeddings and
    /// the final norm. Matches the published counts of the presets (see tests).
    pub fn params(&self) -> u64 {
        let d = u64::from(self.hidden);
        let bias = if self.qkv_bias {
            d + self.kv_dim() * 2
        } else {
            0
        };
        let per_layer_small = bias + 2 * d;
        self.block_linear_params()
            + u64::from(self.layers) * per_layer_small
            + self.embedding_params()
            + d
    }

    /// A shape for "N billion parameters" when no preset is named: a modern dense decoder with
    /// grouped-query attention. Hidden size grows with depth at 128 per layer (Llama 2 7B/13B:
    /// 4096/32, 5120/40), head dim 128, 8 KV heads (Llama 3, Qwen2.5 14B–72B), SwiGLU MLP of
    /// 8/3 × hidden, 32k vocabulary; 12·L·d² ≈ parameters.
    pub fn generic(params: f64) -> Self {
        let per_layer_width = 128.0_f64;
        let layers = (params / (12.0 * per_layer_width * per_layer_width))
            .cbrt()
            .round()
            .max(1.0);
        let hidden_raw = (params / (12.0 * layers)).sqrt();
        let hidden = ((hidden_raw / 128.0).round().max(1.0) * 128.0) as u32;
        let heads = (hidden / 128).max(1);
        Self {
            id: "generic".to_owned(),
            name: format!("{:.1}B-parameter model (generic shape)", params / 1e9),
            layers: layers as u32,
            hidden,
            heads,
            kv_heads: heads.min(8),
            intermediate: ((f64::from(hidden) * 8.0 / 3.0 / 128.0).round() * 128.0) as u32,
            vocab: 32_000,
            tied_embeddings: false,
            qkv_bias: false,
            source: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
struct Preset {
    #[serde(flatten)]
    shape: ModelShapeFields,
    #[serde(default)]
    aliases: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct ModelShapeFields {
    id: String,
    name: String,
    layers: u32,
    hidden: u32,
    heads: u32,
    kv_heads: u32,
    intermediate: u32,
    vocab: u32,
    tied_embeddings: bool,
    qkv_bias: bool,
    source: String,
}

#[derive(Deserialize)]
struct ModelFile {
    model: Vec<Preset>,
}

struct PresetEntry {
    shape: ModelShape,
    aliases: Vec<String>,
}

static PRESETS: LazyLock<Vec<PresetEntry>> = LazyLock::new(|| {
    toml::from_str::<ModelFile>(include_str!("data/models.toml"))
        .expect("embedded models.toml is valid; see catalog tests")
        .model
        .into_iter()
        .map(|preset| {
            let f = preset.shape;
            PresetEntry {
                shape: ModelShape {
                    id: f.id,
                    name: f.name,
                    layers: f.layers,
                    hidden: f.hidden,
                    heads: f.heads,
                    kv_heads: f.kv_heads,
                    intermediate: f.intermediate,
                    vocab: f.vocab,
                    tied_embeddings: f.tied_embeddings,
                    qkv_bias: f.qkv_bias,
                    source: Some(f.source),
                },
                aliases: preset.aliases,
            }
        })
        .collect()
});

/// Every preset, in catalog order.
pub fn model_presets() -> Vec<&'static ModelShape> {
    PRESETS.iter().map(|entry| &entry.shape).collect()
}

/// A preset by id, name or alias ("qwen2.5-7b", "Qwen2.5-7B", "qwen2.5:7b",
/// "Qwen/Qwen2.5-7B-Instruct"); case and punctuation do not matter.
pub fn find_model(name: &str) -> Option<&'static ModelShape> {
    let key = NameKey::new(name);
    if key.tokens.is_empty() {
        return None;
    }
    PRESETS
        .iter()
        .find(|entry| {
            std::iter::once(&entry.shape.id)
                .chain(std::iter::once(&entry.shape.name))
                .chain(&entry.aliases)
                .any(|alias| NameKey::new(alias).tokens == key.tokens)
        })
        .map(|entry| &entry.shape)
}

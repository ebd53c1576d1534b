//! The arithmetic of the estimator. Every part is computed in bytes from the model shape and
//! explained in a sentence with the numbers filled in, so the user sees where a figure comes
//! from. Constants carry their reason next to them.

use super::{
    Estimate, EstimateRequest, MemoryParts, ModelShape, Note, Optimizer, PartFormulas, Precision,
    Task, Text,
};

pub const BYTES_PER_GIB: f64 = 1_073_741_824.0;

/// CUDA context, cuBLAS/cuDNN workspaces and the allocator's first blocks: nvidia-smi shows a
/// few hundred MiB per process before the first tensor.
const RUNTIME_GIB: f64 = 0.5;
/// The caching allocator never packs perfectly; fragmentation grows with what is allocated.
const FRAGMENTATION: f64 = 0.04;

/// Bits per weight of each storage format, including the scales quantized formats carry.
fn weight_bits(precision: Precision) -> f64 {
    match precision {
        Precision::Fp32 => 32.0,
        Precision::Fp16 | Precision::Bf16 => 16.0,
        // ggml Q8_0: blocks of 32 weights in 34 bytes (int8 values + an fp16 scale).
        Precision::Int8 => 8.5,
        // ggml Q4_0: blocks of 32 weights in 18 bytes; GPTQ/AWQ with group 128 are close to it.
        Precision::Int4 => 4.5,
        // llama.cpp tools/quantize README: Q4_K_M is 4.84 bits per weight on Llama 2 7B.
        Precision::Q4KM => 4.84,
    }
}

/// QLoRA's NF4 with double quantization: 4 bits + 0.127 bits of constants (Dettmers et al. 2023).
const NF4_BITS: f64 = 4.127;

/// Bytes per stored activation value: 16-bit unless the whole run is fp32.
fn activation_bytes(precision: Precision) -> f64 {
    if precision == Precision::Fp32 {
        4.0
    } else {
        2.0
    }
}

fn gib(bytes: f64) -> f64 {
    bytes / BYTES_PER_GIB
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Trainable parameters of LoRA adapters of rank r on every linear layer of every block
/// (q, k, v, o, gate, up, down): r × (in + out) each.
pub fn lora_params(shape: &ModelShape, rank: u32) -> f64 {
    let h = f64::from(shape.hidden);
    let kv = shape.kv_dim() as f64;
    let ff = f64::from(shape.intermediate);
    let per_layer = (2.0 * h) + (h + kv) * 2.0 + (2.0 * h) + (h + ff) * 2.0 + (ff + h);
    f64::from(rank) * per_layer * f64::from(shape.layers)
}

/// Activation bytes one block keeps for the backward pass per token (16-bit values), after
/// Korthikanti et al. 2022 with flash attention (no s² score matrix) and a SwiGLU MLP:
/// norms 4h, attention inputs/Q/output 8h, K and V 4·kv, MLP input 2h, gate/up/act/product 8·ff.
fn block_activation_bytes_per_token(shape: &ModelShape) -> f64 {
    let h = f64::from(shape.hidden);
    let kv = shape.kv_dim() as f64;
    let ff = f64::from(shape.intermediate);
    14.0 * h + 4.0 * kv + 8.0 * ff
}

pub(super) fn compute(
    request: &EstimateRequest,
    shape: &ModelShape,
    params: f64,
    gpus: u32,
) -> Estimate {
    let n = f64::from(gpus);
    let b = f64::from(request.batch);
    let s = f64::from(request.context);
    let layers = f64::from(shape.layers);
    let h = f64::from(shape.hidden);
    let vocab = f64::from(shape.vocab);
    let task = request.task;
    let precision = request.precision;
    let billions = params / 1e9;
    let mut notes = Vec::new();

    // --- weights -------------------------------------------------------------------------
    let adapters = match task {
        Task::Lora | Task::Qlora => lora_params(shape, request.lora_rank),
        _ => 0.0,
    };
    let (base_bytes, weights_text) = match task {
        Task::Qlora => {
            let linear = shape.block_linear_params() as f64 * (params / shape.params() as f64);
            let rest = params - linear;
            let bytes = linear * NF4_BITS / 8.0 + rest * 2.0;
            (
                bytes,
                Text::new(
                    format!(
                        "{:.2}B block weights × 4.127 bits (NF4 + double quantization) + {:.2}B \
                         embedding/norm weights × 2 bytes = {:.2} GiB",
                        linear / 1e9,
                        rest / 1e9,
                        gib(bytes)
                    ),
                    format!(
                        "{:.2}B 个块内权重 × 4.127 位（NF4 + 双重量化）+ {:.2}B 个嵌入/归一化权重 × 2 字节 = {:.2} GiB",
                        linear / 1e9,
                        rest / 1e9,
                        gib(bytes)
                    ),
                ),
            )
        }
        _ => {
            let bits = match (task, precision) {
                (Task::Full, Precision::Fp32) => 32.0,
                (Task::Full, _) => 16.0,
                _ => weight_bits(precision),
            };
            let bytes = params * bits / 8.0;
            (
                bytes,
                Text::new(
                    format!(
                        "{billions:.2}B parameters × {} bytes ({precision}) = {:.2} GiB",
                        bits / 8.0,
                        gib(bytes)
                    ),
                    format!(
                        "{billions:.2}B 参数 × {} 字节（{precision}）= {:.2} GiB",
                        bits / 8.0,
                        gib(bytes)
                    ),
                ),
            )
        }
    };
    let adapter_bytes = adapters * 4.0;
    let weights_text = if adapters > 0.0 {
        Text::new(
            format!(
                "{}, + LoRA adapters {:.1}M × 4 bytes (fp32), ÷ {gpus} GPU(s)",
                weights_text.en,
                adapters / 1e6
            ),
            format!(
                "{}，+ LoRA 适配器 {:.1}M × 4 字节（fp32），÷ {gpus} 张卡",
                weights_text.zh,
                adapters / 1e6
            ),
        )
    } else {
        Text::new(
            format!("{}, ÷ {gpus} GPU(s)", weights_text.en),
            format!("{}，÷ {gpus} 张卡", weights_text.zh),
        )
    };
    let weights = (base_bytes + adapter_bytes) / n;

    // --- KV cache (inference only: training runs whole sequences without a cache) -------------
    let kv_bytes_per_value = activation_bytes(precision);
    let kv_total = if task == Task::Inference {
        2.0 * layers * shape.kv_dim() as f64 * s * b * kv_bytes_per_value
    } else {
        0.0
    };
    let kv_cache = kv_total / n;
    let kv_text = if task == Task::Inference {
        Text::new(
            format!(
                "2 (K and V) × {} layers × {} (KV heads {} × head dim {}) × {} tokens × batch {} × \
                 {kv_bytes_per_value} bytes = {:.2} GiB, ÷ {gpus} GPU(s)",
                shape.layers,
                shape.kv_dim(),
                shape.kv_heads,
                shape.head_dim(),
                request.context,
                request.batch,
                gib(kv_total)
            ),
            format!(
                "2（K 和 V）× {} 层 × {}（KV 头 {} × 头维度 {}）× {} token × batch {} × {kv_bytes_per_value} 字节 = {:.2} GiB，÷ {gpus} 张卡",
                shape.layers,
                shape.kv_dim(),
                shape.kv_heads,
                shape.head_dim(),
                request.context,
                request.batch,
                gib(kv_total)
            ),
        )
    } else {
        Text::new(
            "training processes whole sequences; no KV cache is kept",
            "训练一次处理整段序列，不保留 KV 缓存",
        )
    };

    // --- activations -------------------------------------------------------------------------
    let act_bytes = activation_bytes(precision);
    let (activations, activations_text) = if task == Task::Inference {
        let ff = f64::from(shape.intermediate);
        let working = b * s * (4.0 * h + 2.0 * ff) * act_bytes;
        let logits = b * vocab * 4.0;
        let total = working + logits;
        (
            total,
            Text::new(
                format!(
                    "prefill working set of one layer: batch {} × {} tokens × (4 × {} hidden + 2 × {} MLP) \
                     × {act_bytes} bytes + last-token logits {} × 4 bytes = {:.2} GiB",
                    request.batch,
                    request.context,
                    shape.hidden,
                    shape.intermediate,
                    shape.vocab,
                    gib(total)
                ),
                format!(
                    "预填充时单层的工作集：batch {} × {} token × (4 × {} 隐藏维 + 2 × {} MLP 维) × {act_bytes} 字节 + 最后一个 token 的 logits {} × 4 字节 = {:.2} GiB",
                    request.batch,
                    request.context,
                    shape.hidden,
                    shape.intermediate,
                    shape.vocab,
                    gib(total)
                ),
            ),
        )
    } else {
        // Data parallel: each GPU runs its own share of the batch.
        let local_batch = (b / n).ceil();
        let tokens = local_batch * s;
        let per_token = block_activation_bytes_per_token(shape) * act_bytes / 2.0;
        let logits = tokens * vocab * 6.0;
        let (blocks, how_en, how_zh) = if request.grad_checkpointing {
            let stored = layers * tokens * h * act_bytes;
            let recompute = tokens * per_token;
            (
                stored + recompute,
                format!(
                    "gradient checkpointing: {} layer inputs × {tokens} tokens × {} hidden × {act_bytes} bytes \
                     + one layer recomputed ({:.0} bytes/token)",
                    shape.layers, shape.hidden, per_token
                ),
                format!(
                    "梯度检查点：{} 层输入 × {tokens} token × {} 隐藏维 × {act_bytes} 字节 + 重算一层（每 token {:.0} 字节）",
                    shape.layers, shape.hidden, per_token
                ),
            )
        } else {
            (
                layers * tokens * per_token,
                format!(
                    "{} layers × {tokens} tokens × {:.0} bytes/token/layer (14h + 4·kv + 8·ff, \
                     after Korthikanti et al. 2022 with flash attention)",
                    shape.layers, per_token
                ),
                format!(
                    "{} 层 × {tokens} token × 每层每 token {:.0} 字节（14h + 4·kv + 8·ff，参照 Korthikanti 等 2022，使用 flash attention）",
                    shape.layers, per_token
                ),
            )
        };
        let total = blocks + logits;
        (
            total,
            Text::new(
                format!(
                    "{how_en}, + logits {tokens} tokens × {} vocab × 6 bytes (16-bit + fp32 for the loss) = {:.2} GiB",
                    shape.vocab,
                    gib(total)
                ),
                format!(
                    "{how_zh}，+ logits {tokens} token × {} 词表 × 6 字节（16 位 + 计算损失的 fp32）= {:.2} GiB",
                    shape.vocab,
                    gib(total)
                ),
            ),
        )
    };

    // --- gradients and optimizer states ----------------------------------------------------
    let mixed = precision != Precision::Fp32;
    let (trainable, grad_bytes, state_bytes, trainable_label) = match task {
        Task::Inference => (0.0, 0.0, 0.0, ""),
        Task::Full => {
            let grad = if mixed { 2.0 } else { 4.0 };
            // AdamW keeps m and v in fp32 (8 bytes); mixed precision adds an fp32 master copy.
            let state = match (request.optimizer, mixed) {
                (Optimizer::Adamw, true) => 12.0,
                (Optimizer::Adamw, false) => 8.0,
                (Optimizer::Adamw8bit, true) => 6.0,
                (Optimizer::Adamw8bit, false) => 2.0,
            };
            (params, grad, state, "all parameters")
        }
        Task::Lora | Task::Qlora => {
            let state = match request.optimizer {
                Optimizer::Adamw => 8.0,
                Optimizer::Adamw8bit => 2.0,
            };
            (adapters, 4.0, state, "LoRA adapter parameters")
        }
    };
    let gradients = trainable * grad_bytes / n;
    let optimizer = trainable * state_bytes / n;
    let (gradients_text, optimizer_text) = if task == Task::Inference {
        (
            Text::new("inference computes no gradients", "推理不计算梯度"),
            Text::new("inference keeps no optimizer states", "推理没有优化器状态"),
        )
    } else {
        let optimizer_name = match request.optimizer {
            Optimizer::Adamw => "AdamW",
            Optimizer::Adamw8bit => "8-bit AdamW",
        };
        (
            Text::new(
                format!(
                    "{:.1}M {trainable_label} × {grad_bytes} bytes = {:.2} GiB, ÷ {gpus} GPU(s)",
                    trainable / 1e6,
                    gib(trainable * grad_bytes)
                ),
                format!(
                    "{:.1}M 个可训练参数 × {grad_bytes} 字节 = {:.2} GiB，÷ {gpus} 张卡",
                    trainable / 1e6,
                    gib(trainable * grad_bytes)
                ),
            ),
            Text::new(
                format!(
                    "{optimizer_name}: {:.1}M {trainable_label} × {state_bytes} bytes (moments{}) = {:.2} GiB, ÷ {gpus} GPU(s)",
                    trainable / 1e6,
                    if task == Task::Full && mixed { " + fp32 master weights" } else { "" },
                    gib(trainable * state_bytes)
                ),
                format!(
                    "{optimizer_name}：{:.1}M 个可训练参数 × {state_bytes} 字节（动量{}）= {:.2} GiB，÷ {gpus} 张卡",
                    trainable / 1e6,
                    if task == Task::Full && mixed { " + fp32 主权重" } else { "" },
                    gib(trainable * state_bytes)
                ),
            ),
        )
    };

    // --- overhead ----------------------------------------------------------------------------
    let allocated = weights + kv_cache + activations + gradients + optimizer;
    let overhead = RUNTIME_GIB * BYTES_PER_GIB + allocated * FRAGMENTATION;
    let overhead_text = Text::new(
        format!(
            "{RUNTIME_GIB} GiB CUDA context and library workspaces + {}% allocator fragmentation of {:.2} GiB = {:.2} GiB",
            FRAGMENTATION * 100.0,
            gib(allocated),
            gib(overhead)
        ),
        format!(
            "{RUNTIME_GIB} GiB CUDA 上下文与库工作区 + {:.2} GiB 的 {}% 分配器碎片 = {:.2} GiB",
            gib(allocated),
            FRAGMENTATION * 100.0,
            gib(overhead)
        ),
    );

    let parts = MemoryParts {
        weights_gib: round2(gib(weights)),
        kv_cache_gib: round2(gib(kv_cache)),
        activations_gib: round2(gib(activations)),
        gradients_gib: round2(gib(gradients)),
        optimizer_gib: round2(gib(optimizer)),
        overhead_gib: round2(gib(overhead)),
    };
    let total_gib = round2(gib(allocated + overhead));

    add_notes(
        &mut notes,
        request,
        shape,
        gpus,
        gib(activations),
        total_gib,
    );

    Estimate {
        total_gib,
        parts,
        formulas: PartFormulas {
            weights: weights_text,
            kv_cache: kv_text,
            activations: activations_text,
            gradients: gradients_text,
            optimizer: optimizer_text,
            overhead: overhead_text,
        },
        notes,
        gpu_count: gpus,
        params_b: round2(billions),
        model: shape.clone(),
    }
}

fn add_notes(
    notes: &mut Vec<Note>,
    request: &EstimateRequest,
    shape: &ModelShape,
    gpus: u32,
    activations_gib: f64,
    total_gib: f64,
) {
    notes.push(Note::new(
        "estimate.rough",
        "An estimate: frameworks differ by 10–20 %. Keep some headroom and watch `nvidia-smi` during the first minutes.",
        "这是估算：不同框架相差 10–20%。请留出余量，开始运行的头几分钟用 `nvidia-smi` 观察显存。",
    ));
    if shape.source.is_none() {
        notes.push(Note::new(
            "estimate.generic_shape",
            format!(
                "No preset named: assumed a modern dense model ({} layers, hidden {}, {} KV heads of 128, 32k vocabulary). Choose a preset (--model) for exact numbers.",
                shape.layers, shape.hidden, shape.kv_heads
            ),
            format!(
                "未指定模型预设：按常见稠密模型估算（{} 层，隐藏维 {}，{} 个 128 维 KV 头，3.2 万词表）。用 --model 选择预设可得到更准的结果。",
                shape.layers, shape.hidden, shape.kv_heads
            ),
        ));
    }
    match request.precision {
        Precision::Q4KM | Precision::Int4 | Precision::Int8 if request.task == Task::Inference => {
            notes.push(Note::new(
                "estimate.quantized",
                "Quantized weights (GGUF in Ollama/llama.cpp, or GPTQ/AWQ in vLLM) keep the KV cache in 16 bits; the cache grows with context.",
                "量化权重（Ollama/llama.cpp 的 GGUF，或 vLLM 的 GPTQ/AWQ）的 KV 缓存仍是 16 位，随上下文长度增长。",
            ));
        }
        Precision::Fp32 if request.task == Task::Inference => notes.push(Note::new(
            "estimate.fp32_inference",
            "fp32 doubles the weights; fp16/bf16 inference loses practically nothing.",
            "fp32 会让权重翻倍；用 fp16/bf16 推理几乎没有损失。",
        )),
        _ => {}
    }
    if request.task == Task::Qlora
        && request.precision != Precision::Bf16
        && request.precision != Precision::Fp16
    {
        notes.push(Note::new(
            "estimate.qlora_base",
            "QLoRA always stores the base model in 4-bit NF4; --precision only sets the compute type.",
            "QLoRA 总是以 4 位 NF4 存放基座模型；--precision 只决定计算精度。",
        ));
    }
    if request.task.is_training()
        && !request.grad_checkpointing
        && activations_gib > 0.3 * total_gib
    {
        notes.push(Note::new(
            "estimate.try_checkpointing",
            format!(
                "Activations are {activations_gib:.1} GiB of {total_gib:.1} GiB. Gradient checkpointing (on unless --no-grad-checkpointing) trades ~30 % more compute for most of it; a smaller batch with gradient accumulation keeps the effective batch."
            ),
            format!(
                "激活值占 {activations_gib:.1} GiB（共 {total_gib:.1} GiB）。开启梯度检查点（去掉 --no-grad-checkpointing）用约 30% 的额外计算换回大部分显存；减小 batch 并用梯度累积可保持等效 batch。"
            ),
        ));
    }
    if request.task.is_training() && request.grad_checkpointing {
        notes.push(Note::new(
            "estimate.assumes_checkpointing",
            "Assumes gradient checkpointing, as LLaMA-Factory and Unsloth enable by default; turn it off and activations grow several-fold.",
            "按开启梯度检查点估算（LLaMA-Factory、Unsloth 默认开启）；关闭后激活值会成倍增加。",
        ));
    }
    if request.task.is_training() && request.batch > 1 {
        notes.push(Note::new(
            "estimate.grad_accumulation",
            "Memory grows with batch × context. If it does not fit, halve the batch and double gradient accumulation steps.",
            "显存随 batch × 上下文增长。放不下时把 batch 减半、梯度累积步数加倍。",
        ));
    }
    if gpus > 1 {
        notes.push(Note::new(
            "estimate.sharded",
            format!(
                "Spread over {gpus} GPUs: weights, KV cache, gradients and optimizer states are split (tensor parallel for inference, FSDP/ZeRO-3 for training); activations are per GPU."
            ),
            format!(
                "分布在 {gpus} 张卡上：权重、KV 缓存、梯度和优化器状态被切分（推理用张量并行，训练用 FSDP/ZeRO-3），激活值按每张卡计算。"
            ),
        ));
    }
}

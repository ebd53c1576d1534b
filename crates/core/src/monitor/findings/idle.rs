//! GPUs paid for and not used: some busy while the others idle (the usual "only GPU 0 works"
//! of a script started without a distributed launcher), or all of them idle while billing.

use std::collections::BTreeMap;

use super::{
    gpu_list, recent, FindingContext, LiveFinding, BUSY_PCT, IDLE_PCT, MIN_SAMPLES, RECENT,
};
use crate::diagnose::text::draft;
use crate::diagnose::Severity;
use crate::monitor::sample::Sample;

/// Average utilisation of each GPU over the recent samples; `None` when there are too few.
pub(crate) fn average_utilisation(window: &[Sample]) -> Option<BTreeMap<u32, f64>> {
    let recent = recent(window, RECENT);
    if recent.len() < MIN_SAMPLES {
        return None;
    }
    let mut sums: BTreeMap<u32, (f64, usize)> = BTreeMap::new();
    for sample in recent {
        for gpu in &sample.gpus {
            if let Some(pct) = gpu.utilization_pct {
                let entry = sums.entry(gpu.index).or_default();
                entry.0 += f64::from(pct);
                entry.1 += 1;
            }
        }
    }
    Some(
        sums.into_iter()
            .filter(|(_, (_, n))| *n >= MIN_SAMPLES)
            .map(|(index, (sum, n))| (index, sum / n as f64))
            .collect(),
    )
}

pub(super) fn idle_peers(window: &[Sample], context: &FindingContext) -> Option<LiveFinding> {
    let averages = average_utilisation(window)?;
    let busy: Vec<u32> = averages
        .iter()
        .filter(|(_, pct)| **pct >= BUSY_PCT)
        .map(|(i, _)| *i)
        .collect();
    let idle: Vec<u32> = averages
        .iter()
        .filter(|(_, pct)| **pct < IDLE_PCT)
        .map(|(i, _)| *i)
        .collect();
    if busy.is_empty() || idle.is_empty() {
        return None;
    }
    let total = averages.len();
    let lang = context.lang;
    let (busy_text, idle_text) = (gpu_list(lang, &busy), gpu_list(lang, &idle));
    let evidence = averages
        .iter()
        .map(|(index, pct)| format!("GPU {index}: {pct:.0}% average over the last minute"));
    let finding = draft(lang, "gpu.idle_peers", Severity::Warning)
        .title(
            format!("只有 {busy_text} 在干活，{idle_text} 闲着"),
            format!("Only {busy_text} is working; {idle_text} idle"),
        )
        .detail(
            format!("{total} 张卡都在计费，但程序只用上了其中一部分。没有分布式启动时，PyTorch 默认只把模型和数据放到第一张可见的卡（GPU 0）上，其余的卡一直空转。"),
            format!("All {total} GPUs are billed, but the program uses only some of them. Started without a distributed launcher, PyTorch puts the model and data on the first visible GPU (GPU 0) and the others sit idle."),
        )
        .run(
            "先确认程序能看到哪些卡（为空表示全部可见）：",
            "Check which GPUs the program can see (empty means all):",
            "echo $CUDA_VISIBLE_DEVICES",
        )
        .run(
            "训练：用 torchrun 每张卡起一个进程，代码里用 DistributedDataParallel（DDP）包住模型：",
            "Training: start one process per GPU with torchrun and wrap the model in DistributedDataParallel (DDP):",
            format!("torchrun --nproc_per_node={total} train.py"),
        )
        .run(
            "推理：把模型切到多张卡上，例如 vLLM 的张量并行：",
            "Inference: split the model across the GPUs, e.g. vLLM's tensor parallelism:",
            format!("vllm serve MODEL --tensor-parallel-size {total}"),
        )
        .run(
            "互不相关的任务：每张卡单独跑一个，用 CUDA_VISIBLE_DEVICES 指定：",
            "Independent jobs: run one per GPU, each pinned with CUDA_VISIBLE_DEVICES:",
            format!("CUDA_VISIBLE_DEVICES={} python run.py", idle[0]),
        )
        .step(
            "如果任务本来就只需要一张卡，下次租更少的卡。",
            "If the job only ever needs one GPU, rent fewer next time.",
        )
        .evidence_all(evidence)
        .build();
    Some(LiveFinding {
        finding,
        gpus: idle,
    })
}

pub(super) fn idle_while_billing(
    window: &[Sample],
    context: &FindingContext,
) -> Option<LiveFinding> {
    if !context.billing {
        return None;
    }
    let averages = average_utilisation(window)?;
    if averages.is_empty() || averages.values().any(|pct| *pct >= IDLE_PCT) {
        return None;
    }
    let gpus: Vec<u32> = averages.keys().copied().collect();
    let lang = context.lang;
    let evidence = averages
        .iter()
        .map(|(index, pct)| format!("GPU {index}: {pct:.0}% average over the last minute"));
    let finding = draft(lang, "gpu.idle_while_billing", Severity::Warning)
        .title("所有 GPU 都闲着，实例还在计费", "Every GPU is idle while the instance bills")
        .detail(
            "过去一分钟里没有一张卡在工作，但按小时的费用照常在走。可能任务已经结束或崩溃，或者还在做只用 CPU 的准备工作（下载、解压、数据预处理）。",
            "No GPU did any work in the last minute, yet the hourly charge keeps running. The job may have finished or crashed, or it is still doing CPU-only preparation (downloads, unpacking, preprocessing).",
        )
        .run(
            "看看是不是 CPU 在忙（数据预处理、解压）：",
            "See whether the CPU is busy instead (preprocessing, unpacking):",
            "ps aux --sort=-%cpu | head -n 8",
        )
        .step(
            "任务跑完了就先备份结果，再在控制台关机或释放实例。",
            "If the job is done, back up the results, then stop or release the instance in the console.",
        )
        .step(
            "要离开一会儿的话，设一个“GPU 空闲提醒”或在实例上装空闲自动关机。",
            "If you step away, set a GPU-idle reminder or the on-instance idle watchdog.",
        )
        .evidence_all(evidence)
        .build();
    Some(LiveFinding { finding, gpus })
}

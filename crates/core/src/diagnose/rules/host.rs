//! The host around the GPUs: too few CPU cores or too little memory to feed them, and disks
//! close to full.

use super::gpus;
use crate::diagnose::text::draft;
use crate::diagnose::{DiagnoseContext, Finding, Severity};
use crate::probe::Facts;

/// Cores per GPU below which data loading usually starves the GPU.
const CORES_PER_GPU: f64 = 4.0;
/// Free space below which installs and checkpoints start failing.
const LOW_DISK_MIB: u64 = 5 * 1024;
const FULL_DISK_MIB: u64 = 1024;

pub(super) fn check(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(cpu(facts, context));
    findings.extend(memory(facts, context));
    findings.extend(disks(facts, context));
    findings
}

fn gpu_count(facts: &Facts) -> usize {
    gpus(facts).len()
}

fn no_gpu_mode(facts: &Facts, context: &DiagnoseContext) -> bool {
    gpu_count(facts) == 0 && context.is_container(facts)
}

fn cpu(facts: &Facts, context: &DiagnoseContext) -> Option<Finding> {
    let resources = facts.resources.as_ref()?;
    let cores = resources.effective_cpus()?;
    let gpu_count = gpu_count(facts);
    let needed = CORES_PER_GPU * gpu_count as f64;
    let starved = cores < 1.0 || (gpu_count > 0 && cores < needed);
    if !starved {
        return None;
    }
    let lang = context.lang;
    let quota = resources
        .cpu_quota_cores
        .map(|q| format!("cgroup cpu quota: {q} core(s)"))
        .unwrap_or_default();
    Some(
        draft(lang, "cpu.starved", Severity::Warning)
            .title(format!("CPU 只有 {cores} 核"), format!("Only {cores} CPU core(s)"))
            .detail(
                if no_gpu_mode(facts, context) {
                    format!("这台容器只分到 {cores} 核，而且没有 GPU：看起来是“无卡模式”开机。这种模式适合传文件、装环境，跑不了训练。")
                } else {
                    format!("{gpu_count} 张 GPU 只配了 {cores} 核。数据加载和预处理跑在 CPU 上，核数太少时 CPU 满载、GPU 利用率上不去，你在为闲着的 GPU 付费。建议每张卡至少 {CORES_PER_GPU} 核。")
                },
                if no_gpu_mode(facts, context) {
                    format!("This container got {cores} core(s) and no GPU: it looks like it was started in no-GPU mode. That mode is fine for copying files and setting up environments, not for training.")
                } else {
                    format!("{gpu_count} GPU(s) with only {cores} core(s). Data loading and preprocessing run on the CPU; with this few cores the CPU maxes out while the GPUs wait, and you pay for idle GPUs. Plan on at least {CORES_PER_GPU} cores per GPU.")
                },
            )
            .when(no_gpu_mode(facts, context), |d| d.step("要训练时，在控制台关机后以有卡模式开机。", "When you want to train, power off and start the instance with its GPUs from the console."))
            .when(!no_gpu_mode(facts, context), |d| {
                d.run("训练时观察 CPU 是否满载：", "Watch whether the CPU is saturated while training:", "top -b -n 1 | head -n 15")
                    .step("把 DataLoader 的 num_workers 调到核数以内；仍不够就选 CPU 更多的规格。", "Keep DataLoader num_workers within the core count; if that is not enough, pick a size with more CPU.")
            })
            .evidence(format!("usable cores: {cores}"))
            .evidence(quota)
            .evidence(resources.cpus_host.map(|h| format!("host cores: {h}")).unwrap_or_default())
            .build(),
    )
}

fn memory(facts: &Facts, context: &DiagnoseContext) -> Option<Finding> {
    let resources = facts.resources.as_ref()?;
    let memory = resources.effective_memory_mib()?;
    let vram: u64 = gpus(facts)
        .iter()
        .filter_map(|g| g.memory_total_mib)
        .map(u64::from)
        .sum();
    let starved = if vram > 0 {
        memory < vram
    } else {
        memory < 4096
    };
    if !starved {
        return None;
    }
    let gib = |mib: u64| mib as f64 / 1024.0;
    let lang = context.lang;
    Some(
        draft(lang, "memory.starved", Severity::Warning)
            .title(format!("内存只有 {:.1} GiB", gib(memory)), format!("Only {:.1} GiB of memory", gib(memory)))
            .detail(
                if vram > 0 {
                    format!("内存（{:.1} GiB）比显存总量（{:.1} GiB）还少。加载模型权重和数据都要先经过内存，很容易被系统 OOM 杀掉进程（表现为进程突然 Killed）。", gib(memory), gib(vram))
                } else {
                    format!("只有 {:.1} GiB 内存：装大一些的包或加载模型都可能被 OOM 杀掉。无卡模式通常只有 2 GiB。", gib(memory))
                },
                if vram > 0 {
                    format!("System memory ({:.1} GiB) is smaller than the GPUs' memory ({:.1} GiB). Model weights and data pass through RAM first, so the kernel's OOM killer can end your process (it just says \"Killed\").", gib(memory), gib(vram))
                } else {
                    format!("Only {:.1} GiB of memory: installing large packages or loading a model may get killed. No-GPU mode usually has 2 GiB.", gib(memory))
                },
            )
            .run("查看被 OOM 杀掉的记录：", "Look for processes the OOM killer ended:", "dmesg | grep -i 'killed process' | tail -n 5")
            .step("按分片加载权重（例如 low_cpu_mem_usage=True），或选内存更大的规格。", "Load weights in shards (e.g. low_cpu_mem_usage=True), or pick a size with more memory.")
            .evidence(format!("usable memory: {memory} MiB"))
            .evidence(resources.memory_limit_mib.map(|l| format!("cgroup memory limit: {l} MiB")).unwrap_or_default())
            .evidence(if vram > 0 { format!("GPU memory total: {vram} MiB") } else { String::new() })
            .build(),
    )
}

fn disks(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(disks) = &facts.disks else {
        return Vec::new();
    };
    let lang = context.lang;
    disks
        .iter()
        .filter(|d| d.size_mib > 0 && (d.available_mib < LOW_DISK_MIB || d.used_pct() >= 95.0))
        .map(|disk| {
            let severity = if disk.available_mib < FULL_DISK_MIB { Severity::Error } else { Severity::Warning };
            let system_disk = disk.mount == "/";
            let free_gib = disk.available_mib as f64 / 1024.0;
            draft(lang, "disk.low", severity)
                .subject(disk.mount.clone())
                .title(format!("{} 只剩 {free_gib:.1} GiB", disk.mount), format!("Only {free_gib:.1} GiB left on {}", disk.mount))
                .detail(
                    if system_disk { "系统盘快满了：pip/conda 安装、模型下载和训练检查点会写到一半失败。大文件应放在数据盘上。" } else { "这块盘快满了：下载文件和保存训练检查点都会失败。" },
                    if system_disk { "The system disk is nearly full: pip/conda installs, model downloads and checkpoints will fail half-way. Large files belong on the data disk." } else { "This disk is nearly full: downloads and checkpoints will fail." },
                )
                .run("找出占空间的目录：", "Find what takes the space:", "du -xh --max-depth=2 ~ 2>/dev/null | sort -rh | head -n 15")
                .run("清理 pip 和 conda 的缓存：", "Clear the pip and conda caches:", "pip cache purge; conda clean -a -y")
                .when(system_disk, |d| {
                    d.run(
                        "把模型缓存放到数据盘（AutoDL 为 /root/autodl-tmp）：",
                        "Keep model caches on the data disk (/root/autodl-tmp on AutoDL):",
                        "export HF_HOME=/root/autodl-tmp/hf-cache",
                    )
                })
                .evidence(format!("{} ({}): {} MiB free of {} MiB ({:.0}% used)", disk.mount, disk.paths.join(", "), disk.available_mib, disk.size_mib, disk.used_pct()))
                .build()
        })
        .collect()
}

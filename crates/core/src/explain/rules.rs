//! Every error besides the CUDA OOM: one function per error, each reading the lines the scan
//! kept and, where it helps, the instance's facts. Where Verify already has the rule (Xid lines,
//! nvidia-smi's driver failures) the finding comes from Verify's own rule, so the text and the
//! advice are the same whichever screen shows them.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use regex::Regex;

use super::scan::{clean, Scan, Signal};
use super::ExplainContext;
use crate::diagnose::rules::{install_wheel_step, wheel_choice};
use crate::diagnose::text::draft;
use crate::diagnose::{diagnose, DiagnoseContext, Finding, Severity};
use crate::probe::disk::{DiskUsage, DATA_PATHS};
use crate::probe::gpu::GpuFacts;
use crate::probe::kernel_log::{parse_dmesg, KernelLogAccess, KernelLogFacts, XidEvent};
use crate::probe::nvidia_smi::{self, NvidiaSmiReport, NvidiaSmiStatus};
use crate::probe::Facts;
use crate::shell;

pub(super) fn all(scan: &Scan<'_>, context: &ExplainContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(host_oom(scan, context));
    findings.extend(ollama(scan, context));
    findings.extend(arch_unsupported(scan, context));
    findings.extend(driver_too_old(scan, context));
    findings.extend(driver_state(scan, context));
    findings.extend(illegal_access(scan, context));
    findings.extend(device_assert(scan, context));
    findings.extend(xids(scan, context));
    findings.extend(crash_dump(scan, context));
    findings.extend(nccl(scan, context));
    findings.extend(disk_full(scan, context));
    findings.extend(hf_unreachable(scan, context));
    findings.extend(pip_no_torch(scan, context));
    findings.extend(cpu_build(scan, context));
    findings.extend(no_device(scan, context));
    findings
}

fn evidence(scan: &Scan<'_>, signal: Signal) -> Vec<String> {
    let mut lines: Vec<String> = scan.lines(signal).into_iter().map(clean).collect();
    lines.dedup();
    let count = scan.count(signal);
    if count > lines.len() {
        lines.push(format!("({count} lines in all)"));
    }
    lines
}

fn joined(scan: &Scan<'_>, signal: Signal) -> String {
    scan.lines(signal).join("\n")
}

fn capture<'t>(regex: &Regex, text: &'t str, group: usize) -> Option<&'t str> {
    regex.captures(text)?.get(group).map(|m| m.as_str())
}

fn base_facts(context: &ExplainContext) -> Facts {
    context
        .facts
        .clone()
        .unwrap_or_else(|| Facts::empty("pasted text", DateTime::<Utc>::UNIX_EPOCH))
}

fn host_oom(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::HostOom) {
        return None;
    }
    let memory = context
        .facts
        .as_ref()
        .and_then(|f| f.resources.as_ref())
        .and_then(|r| r.effective_memory_mib());
    let worker = joined(scan, Signal::HostOom).contains("DataLoader worker");
    Some(
        draft(context.lang, "oom.host", Severity::Error)
            .title("内存不足：进程被系统的 OOM killer 杀掉了", "Out of memory on the host: the kernel's OOM killer ended the process")
            .detail(
                format!("\"Killed\" 不是 GPU 的问题：是机器的内存（RAM，不是显存）用完了，内核直接结束了占内存最多的进程，所以没有 Python 报错。{}常见原因：一次把整个数据集或模型权重读进内存、DataLoader 的 worker 太多、容器的内存上限比机器小。",
                    memory.map_or(String::new(), |m| format!("这台实例可用内存约 {:.1} GiB。", m as f64 / 1024.0))),
                format!("\"Killed\" is not the GPU: the machine ran out of memory (RAM, not GPU memory) and the kernel ended the biggest process, so Python printed no error. {}Usual causes: reading a whole dataset or the model's weights into memory at once, too many DataLoader workers, or a container memory limit below the machine's size.",
                    memory.map_or(String::new(), |m| format!("This instance has about {:.1} GiB usable. ", m as f64 / 1024.0))),
            )
            .run("确认是 OOM killer 干的：", "Confirm the OOM killer did it:", "dmesg -T | grep -iE 'killed process|out of memory' | tail -n 5")
            .run("看内存和容器的内存上限：", "Check memory and the container's memory limit:", "free -h; cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes")
            .step(
                if worker { "减少 DataLoader 的 num_workers（每个 worker 都复制一份数据），或设为 0 先确认。" } else { "减少 DataLoader 的 num_workers，数据集改为按需读取而不是一次全部载入。" },
                if worker { "Lower the DataLoader's num_workers (each worker holds its own copy of the data), or set it to 0 to confirm." } else { "Lower the DataLoader's num_workers, and read the dataset lazily instead of all at once." },
            )
            .step(
                "加载大模型时按分片加载（from_pretrained(..., low_cpu_mem_usage=True) 或 device_map=\"auto\"），避免先在内存里放一整份。",
                "Load large models shard by shard (from_pretrained(..., low_cpu_mem_usage=True) or device_map=\"auto\") instead of holding a full copy in RAM first.",
            )
            .step("仍不够就换内存更大的规格（通常按卡数配比内存）。", "If that is not enough, pick a size with more memory (providers usually scale RAM with the GPU count).")
            .evidence_all(evidence(scan, Signal::HostOom))
            .build(),
    )
}

static OLLAMA_RAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"requires more system memory \(([^)]+)\) than is available \(([^)]+)\)")
        .expect("valid regex")
});
static OFFLOADED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"offloaded (\d+)/(\d+) layers to GPU").expect("valid regex"));

fn ollama(scan: &Scan<'_>, context: &ExplainContext) -> Vec<Finding> {
    let lang = context.lang;
    let mut findings = Vec::new();
    if scan.has(Signal::OllamaOom) {
        let text = joined(scan, Signal::OllamaOom);
        let ram = OLLAMA_RAM.captures(&text);
        let d = draft(lang, "ollama.out_of_memory", Severity::Error);
        let d = match &ram {
            Some(c) => d
                .title("Ollama：内存不够加载这个模型", "Ollama: not enough memory to load this model")
                .detail(
                    format!("模型需要 {} 内存，但只有 {} 可用。Ollama 先看显存，放不下的部分要放进内存；两者加起来都不够，就拒绝加载。", &c[1], &c[2]),
                    format!("The model needs {} of memory and only {} is available. Ollama puts what does not fit in GPU memory into RAM; when both together are too small it refuses to load.", &c[1], &c[2]),
                ),
            None => d
                .title("Ollama：显存分配失败（cudaMalloc failed）", "Ollama: GPU memory allocation failed (cudaMalloc failed)")
                .detail(
                    "加载模型或分配上下文（KV cache）时显存不够。常见原因：模型加上长上下文、并发请求超出了显存，或别的进程（另一个已加载的模型）占着显存。",
                    "Loading the model or its context (KV cache) needed more GPU memory than was free. Usual causes: the model plus a long context or parallel requests exceed the card, or another process (another loaded model) holds memory.",
                ),
        };
        findings.push(
            d.run("看已加载的模型和显存：", "See which models are loaded, and the GPU memory:", "ollama ps; nvidia-smi")
                .run("卸载不用的模型：", "Unload a model you are not using:", "ollama stop MODEL")
                .run(
                    "缩短上下文、限制并发后重启服务：",
                    "Shorten the context and limit parallel requests, then restart the server:",
                    "OLLAMA_CONTEXT_LENGTH=4096 OLLAMA_NUM_PARALLEL=1 ollama serve",
                )
                .step("换更小的量化（如 q4_K_M）或更小的模型；仍不够就选显存和内存更大的规格。", "Use a smaller quantisation (such as q4_K_M) or a smaller model; otherwise pick a size with more GPU memory and RAM.")
                .evidence_all(evidence(scan, Signal::OllamaOom))
                .build(),
        );
    }
    for line in scan.lines(Signal::OllamaOffload) {
        let Some(c) = OFFLOADED.captures(line) else {
            continue;
        };
        let (on_gpu, all): (u32, u32) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
        if on_gpu >= all || findings.iter().any(|f| f.code == "ollama.cpu_offload") {
            continue;
        }
        let all_cpu = on_gpu == 0;
        findings.push(
            draft(lang, "ollama.cpu_offload", Severity::Warning)
                .title(
                    format!("Ollama 只把 {on_gpu}/{all} 层放到了 GPU 上"),
                    format!("Ollama put only {on_gpu} of {all} layers on the GPU"),
                )
                .detail(
                    if all_cpu { "模型完全跑在 CPU 上，速度会慢一个数量级：通常是驱动没加载好，或 Ollama 的 CUDA 运行库与驱动不匹配。" } else { "显存放不下整个模型（或上下文太长、并发太多），其余层放到了 CPU 上，速度明显下降。" },
                    if all_cpu { "The model runs entirely on the CPU, an order of magnitude slower: usually the driver is not working, or Ollama's CUDA runtime does not match the driver." } else { "The model (with its context and parallel requests) does not fit in GPU memory, so the remaining layers run on the CPU and everything slows down markedly." },
                )
                .run("看显存和 Ollama 进程：", "Check GPU memory and the Ollama process:", "nvidia-smi; ollama ps")
                .run(
                    "缩短上下文、限制并发后重启服务：",
                    "Shorten the context and limit parallel requests, then restart the server:",
                    "OLLAMA_CONTEXT_LENGTH=4096 OLLAMA_NUM_PARALLEL=1 ollama serve",
                )
                .step("或换用更小的量化版本（如 q4_K_M），或显存更大的卡。", "Or use a smaller quantisation (such as q4_K_M), or a GPU with more memory.")
                .evidence(clean(line))
                .build(),
        );
    }
    findings
}

static NOT_COMPATIBLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([\w][\w .-]*?) with CUDA capability sm_(\d+) is not compatible")
        .expect("valid regex")
});
static SUPPORTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"supports CUDA capabilities((?:\s+(?:sm|compute)_\d+)+)").expect("valid regex")
});

fn arch_unsupported(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::ArchUnsupported) {
        return None;
    }
    // The warning's next line lists what the wheel supports.
    let text: String = scan
        .spans(Signal::ArchUnsupported)
        .into_iter()
        .map(|s| scan.with_following(s, 1))
        .collect::<Vec<_>>()
        .join("\n");
    let facts_device = context
        .facts
        .as_ref()
        .and_then(|f| f.torch.as_ref())
        .and_then(|t| t.devices.first());
    let name = capture(&NOT_COMPATIBLE, &text, 1)
        .map(|n| n.trim().to_owned())
        .or_else(|| facts_device.map(|d| d.name.clone()));
    let sm = capture(&NOT_COMPATIBLE, &text, 2)
        .map(str::to_owned)
        .or_else(|| {
            facts_device.and_then(|d| {
                let (major, minor) = d.capability.split_once('.')?;
                Some(format!("{major}{minor}"))
            })
        });
    let supported =
        capture(&SUPPORTS, &text, 1).map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "));
    let who_zh = match (&name, &sm) {
        (Some(n), Some(sm)) => format!("{n}（sm_{sm}）"),
        (Some(n), None) => n.clone(),
        (None, Some(sm)) => format!("sm_{sm}"),
        (None, None) => "这张 GPU".to_owned(),
    };
    let who_en = match (&name, &sm) {
        (Some(n), Some(sm)) => format!("{n} (sm_{sm})"),
        (Some(n), None) => n.clone(),
        (None, Some(sm)) => format!("sm_{sm}"),
        (None, None) => "this GPU".to_owned(),
    };
    let blackwell = sm
        .as_deref()
        .is_some_and(|s| s.starts_with("10") || s.starts_with("12"));
    let facts = context.facts.as_ref();
    let choice = facts.and_then(wheel_choice);
    let d = draft(context.lang, "torch.arch_unsupported", Severity::Error)
        .title(format!("装的 PyTorch 没有 {who_zh} 的 GPU 代码"), format!("The installed PyTorch has no GPU code for {who_en}"))
        .detail(
            format!("每个 PyTorch wheel 包只为一组 GPU 架构编译了代码{}。这张卡不在其中，所以第一次真正在 GPU 上运算就报 “no kernel image is available for execution on the device”。{}",
                supported.as_deref().map_or(String::new(), |s| format!("（这个装的支持：{s}）")),
                if blackwell { "Blackwell 架构的卡（RTX 50 系列、B200）需要 CUDA 12.8 及以上编出的 wheel 包。" } else { "" }),
            format!("Each PyTorch wheel carries GPU code for a fixed set of architectures{}. This card is not among them, so the first real GPU operation fails with \"no kernel image is available for execution on the device\".{}",
                supported.as_deref().map_or(String::new(), |s| format!(" (this one: {s})")),
                if blackwell { " Blackwell cards (RTX 50 series, B200) need a wheel built with CUDA 12.8 or newer." } else { "" }),
        )
        .run("卸载当前的 wheel 包：", "Remove the current wheel:", "pip uninstall -y torch torchvision torchaudio");
    let d = match (&choice, blackwell) {
        (Some(_), _) => install_wheel_step(d, choice.as_ref()),
        (None, true) => d.run(
            "安装 CUDA 12.8 编出的 wheel 包（驱动需 570 及以上）：",
            "Install a wheel built with CUDA 12.8 (needs driver 570 or newer):",
            "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128",
        ),
        (None, false) => d.step(
            "先运行检测（或看 nvidia-smi 的驱动版本），再按驱动和这张卡选 wheel 包：算力租用管家的 torch-wheel 会给出命令。",
            "Run Verify (or read the driver version from nvidia-smi), then pick the wheel for the driver and this card: Leasehold's torch-wheel gives the command.",
        ),
    };
    Some(
        d.run(
            "确认架构列表里有它：",
            "Check the architecture is now listed:",
            "python -c 'import torch; print(torch.cuda.get_arch_list())'",
        )
        .evidence_all(evidence(scan, Signal::ArchUnsupported))
        .build(),
    )
}

static FOUND_VERSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"found version (\d+)").expect("valid regex"));

fn driver_too_old(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::DriverTooOld) {
        return None;
    }
    let text = joined(scan, Signal::DriverTooOld);
    // The driver API version: 1000 × major + 10 × minor (11040 is CUDA 11.4).
    let found = capture(&FOUND_VERSION, &text, 1)
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|v| *v >= 1000)
        .map(|v| (v / 1000, (v % 1000) / 10));
    let facts = context.facts.as_ref();
    let driver = facts
        .and_then(|f| f.gpu.as_ref())
        .and_then(|g| g.nvidia_smi.driver_version.clone());
    let max_cuda = found
        .map(|(major, minor)| format!("{major}.{minor}"))
        .or_else(|| {
            facts
                .and_then(|f| f.gpu.as_ref())
                .and_then(|g| g.nvidia_smi.cuda_version.clone())
        });
    let choice = facts.and_then(wheel_choice);
    let d = draft(context.lang, "torch.driver_too_old", Severity::Error)
        .title(
            format!("驱动太旧，带不动装的这个 PyTorch{}", max_cuda.as_deref().map_or(String::new(), |c| format!("（驱动最高支持 CUDA {c}）"))),
            format!("The driver is too old for the installed PyTorch{}", max_cuda.as_deref().map_or(String::new(), |c| format!(" (the driver supports up to CUDA {c})"))),
        )
        .detail(
            "PyTorch wheel 包自带 CUDA 运行库，但要求驱动不低于那个 CUDA 版本的最低驱动。这个 wheel 包用的 CUDA 比驱动支持的新，所以 CUDA 初始化失败、torch.cuda.is_available() 为 False。不用动系统里的 CUDA，换一个与驱动匹配的 wheel 包即可。",
            "PyTorch wheels bring their own CUDA runtime but need a driver at least as new as that CUDA's minimum. This wheel's CUDA is newer than the driver supports, so CUDA fails to initialise and torch.cuda.is_available() is False. Leave the system CUDA alone: install a wheel that matches the driver.",
        )
        .run("看驱动版本和它支持的最高 CUDA：", "See the driver version and the highest CUDA it supports:", "nvidia-smi | head -n 4")
        .run("看装的 PyTorch 用的是哪个 CUDA：", "See which CUDA the installed PyTorch was built with:", "python -c 'import torch; print(torch.__version__, torch.version.cuda)'");
    let d = match (&choice, found) {
        (Some(_), _) => install_wheel_step(d, choice.as_ref()),
        (None, Some((11, _))) => d.run(
            "驱动是 CUDA 11 系列：装 cu118 的 wheel 包（11.x 驱动可以运行任何 11.x 的 wheel 包）：",
            "The driver is of the CUDA 11 family: install a cu118 wheel (an 11.x driver runs any 11.x wheel):",
            "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu118",
        ),
        (None, Some((12, _))) => d.run(
            "驱动是 CUDA 12 系列：装 cu12x 的 wheel 包，例如：",
            "The driver is of the CUDA 12 family: install a cu12x wheel, for example:",
            "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu126",
        ),
        (None, _) => d.step(
            "按驱动版本选 wheel 包（检测会算出具体命令），或用驱动更新的镜像重建实例。",
            "Pick the wheel for the driver version (Verify works out the exact command), or re-create the instance from an image with a newer driver.",
        ),
    };
    Some(
        d.step(
            "另一条路：在控制台用驱动更新的镜像重建实例（云实例上别自己升级驱动）。",
            "The other way: re-create the instance from an image with a newer driver (do not upgrade the driver yourself on a rented instance).",
        )
        .evidence(driver.map(|d| format!("nvidia-smi: driver {d}")).unwrap_or_default())
        .evidence_all(evidence(scan, Signal::DriverTooOld))
        .build(),
    )
}

/// nvidia-smi's driver failures, explained by Verify's own rules.
fn driver_state(scan: &Scan<'_>, context: &ExplainContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    for signal in [Signal::DriverMismatch, Signal::DriverNotLoaded] {
        if !scan.has(signal) {
            continue;
        }
        let spans = scan.spans(signal);
        // "NVML library version: 570.124" follows the mismatch line.
        let text: String = spans
            .iter()
            .map(|&s| scan.with_following(s, 1))
            .collect::<Vec<_>>()
            .join("\n");
        let mut report = nvidia_smi::parse(&text);
        let wanted = if signal == Signal::DriverMismatch {
            NvidiaSmiStatus::DriverMismatch
        } else {
            NvidiaSmiStatus::DriverNotLoaded
        };
        if report.status != wanted {
            report = NvidiaSmiReport {
                message: scan.lines(signal).first().copied().map(clean),
                ..NvidiaSmiReport::with_status(wanted)
            };
        }
        let mut facts = base_facts(context);
        let had_gpu_facts = facts.gpu.is_some();
        let gpu = facts.gpu.get_or_insert_with(|| GpuFacts {
            nvidia_smi: NvidiaSmiReport::with_status(wanted),
            nvidia_smi_path: None,
            nvidia_smi_found_at: Vec::new(),
            kernel_modules: Vec::new(),
            kernel_module_version: None,
            device_nodes: Vec::new(),
            process_states: Vec::new(),
        });
        gpu.nvidia_smi = report;
        let code = if signal == Signal::DriverMismatch {
            "driver.version_mismatch"
        } else {
            "driver.not_loaded"
        };
        for mut finding in diagnose(&facts, &DiagnoseContext::new(context.lang)) {
            if finding.code != code {
                continue;
            }
            // Without Verify's facts, the rule's lsmod/device lines would be made up.
            if !had_gpu_facts {
                finding.evidence.clear();
            }
            let mut lines = evidence(scan, signal);
            lines.append(&mut finding.evidence);
            finding.evidence = lines;
            findings.push(finding);
        }
    }
    findings
}

fn illegal_access(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::IllegalAccess) {
        return None;
    }
    Some(
        draft(context.lang, "cuda.illegal_memory_access", Severity::Error)
            .title("GPU 上的代码访问了非法地址（illegal memory access）", "Code on the GPU touched an illegal address (illegal memory access)")
            .detail(
                "一个 CUDA 内核读写了不属于它的显存。CUDA 报错是异步的，堆栈里指向的那一行往往不是真正出错的地方。多数是程序的问题：越界的索引、自定义 CUDA 算子、不匹配的扩展（flash-attn、xformers 等与 PyTorch 版本不配）；极少数是 GPU 或驱动出了故障。出错之后这个进程的 CUDA 状态已经坏了，只能重启程序。",
                "A CUDA kernel read or wrote memory it does not own. CUDA reports errors asynchronously, so the line in the stack trace is often not where it happened. Most often it is the program: an out-of-range index, a custom CUDA kernel, or an extension built for another PyTorch (flash-attn, xformers); rarely the GPU or driver is failing. After this the process's CUDA state is broken; only a restart helps.",
            )
            .run("同步执行重跑，让报错指向真正出错的那一行：", "Run again synchronously so the error points at the real line:", "CUDA_LAUNCH_BLOCKING=1 python train.py")
            .step("检查索引和自定义算子；用了 flash-attn、xformers、bitsandbytes 等扩展时，确认它们是为当前 PyTorch 和 CUDA 版本编译的。", "Check indices and custom kernels; if you use extensions such as flash-attn, xformers or bitsandbytes, make sure they were built for this PyTorch and CUDA.")
            .run("看内核有没有记录 Xid（硬件或驱动故障）：", "See whether the kernel logged an Xid (hardware or driver fault):", "dmesg -T | grep -i xid | tail -n 20")
            .step("最小的代码也复现、且有 Xid 时：重启实例，仍不行就联系平台换机器。", "If even minimal code reproduces it and Xid lines appear: restart the instance, and ask the provider for another machine if it persists.")
            .evidence_all(evidence(scan, Signal::IllegalAccess))
            .build(),
    )
}

fn device_assert(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::DeviceAssert) {
        return None;
    }
    Some(
        draft(context.lang, "cuda.device_assert", Severity::Error)
            .title("GPU 上的断言失败（device-side assert triggered）", "An assertion failed on the GPU (device-side assert triggered)")
            .detail(
                "GPU 上的算子检查到了非法输入，最常见的是索引越界：标签值大于等于类别数、embedding 的 token id 超出词表、gather/index 的下标越界。这是代码或数据的问题，不是 GPU 的问题。",
                "An operation on the GPU found invalid input; most often an index out of range: a label not below the number of classes, a token id beyond the embedding's vocabulary, a gather/index out of bounds. It is the code or the data, not the GPU.",
            )
            .run("同步执行重跑，看到真正出错的那一行：", "Run again synchronously to see the real line:", "CUDA_LAUNCH_BLOCKING=1 python train.py")
            .step("或者在 CPU 上跑一小批数据：CPU 上会直接给出可读的 IndexError。", "Or run one small batch on the CPU: there the same problem is a readable IndexError.")
            .step("检查标签范围（0 到类别数−1）、分词器与模型的词表大小是否一致。", "Check the label range (0 to classes−1) and that the tokenizer and the model have the same vocabulary size.")
            .evidence_all(evidence(scan, Signal::DeviceAssert))
            .build(),
    )
}

static FALLEN_PCI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})").expect("valid regex")
});

/// Xid lines, explained by Verify's Xid rule.
fn xids(scan: &Scan<'_>, context: &ExplainContext) -> Vec<Finding> {
    if !scan.has(Signal::Xid) {
        return Vec::new();
    }
    let text = joined(scan, Signal::Xid);
    let mut log = parse_dmesg(&text, Some(0));
    // "has fallen off the bus" printed without an Xid number is Xid 79 all the same.
    if !log.xid_events.iter().any(|e| e.code == 79) {
        if let Some(line) = scan
            .lines(Signal::Xid)
            .into_iter()
            .find(|l| l.contains("fallen off the bus"))
        {
            log.xid_events.push(XidEvent {
                code: 79,
                pci: capture(&FALLEN_PCI, line, 1).map(str::to_owned),
                pid: None,
                process: None,
                detail: "GPU has fallen off the bus".to_owned(),
                line: clean(line),
            });
        }
    }
    if log.xid_events.is_empty() {
        return Vec::new();
    }
    let mut facts = Facts::empty("pasted text", DateTime::<Utc>::UNIX_EPOCH);
    facts.kernel_log = Some(KernelLogFacts {
        access: KernelLogAccess::Read,
        xid_events: log.xid_events,
        nvrm_errors: Vec::new(),
        message: None,
    });
    diagnose(&facts, &DiagnoseContext::new(context.lang))
        .into_iter()
        .filter(|f| f.code == "gpu.xid")
        .collect()
}

fn crash_dump(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::CrashDump) {
        return None;
    }
    Some(
        draft(context.lang, "gpu.crash_dump", Severity::Error)
            .title("GPU 驱动检测到崩溃并生成了 crash dump", "The GPU driver detected a crash and wrote a crash dump")
            .detail(
                "某个 GPU 操作让显卡进入了异常状态，驱动记录了现场。绝大多数情况是显存访问越界（自定义算子、索引越界）或驱动版本过旧；也见于多个容器同时用 --gpus all 抢同一张卡，以及 PyTorch 与驱动版本不配触发驱动的 bug。",
                "A GPU operation put the card into a bad state and the driver recorded it. Most often an out-of-bounds memory access (a custom kernel, a bad index) or an old driver; also several containers started with --gpus all fighting over one card, or a PyTorch/driver mismatch hitting a driver bug.",
            )
            .run("先看卡还在不在（ERR! 或看不到说明驱动层已经崩了，需要重启实例）：", "First check the card is still there (ERR! or missing means the driver has crashed; restart the instance):", "nvidia-smi")
            .run("查看内核日志里的 Xid、ECC 或总线错误：", "Read the kernel log for Xid, ECC or bus errors:", "dmesg -T | grep -iE 'xid|nvrm' | tail -n 30")
            .step("用了自定义算子时，先在 CPU 上跑同样的输入看能否复现。", "If you use custom kernels, run the same input on the CPU to see whether it reproduces.")
            .step("确认驱动与 PyTorch 版本匹配；驱动过旧就用驱动更新的镜像重建实例。", "Make sure the driver and PyTorch match; if the driver is old, re-create the instance from an image with a newer one.")
            .evidence_all(evidence(scan, Signal::CrashDump))
            .build(),
    )
}

fn nccl(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::Nccl) {
        return None;
    }
    let text = joined(scan, Signal::Nccl);
    let lower = text.to_ascii_lowercase();
    let all_disk = joined(scan, Signal::DiskFull).to_ascii_lowercase();
    let shm = lower.contains("shared memory")
        || lower.contains("/dev/shm")
        || lower.contains("shm_open")
        || lower.contains("shm.h")
        || all_disk.contains("posix_fallocate");
    let p2p =
        lower.contains("p2p") || lower.contains("peer access") || lower.contains("peer mapping");
    let timeout = lower.contains("timeout") || lower.contains("timed out");
    let consumer_multi = context.facts.as_ref().is_some_and(|f| {
        let gpus = f
            .gpu
            .as_ref()
            .map_or(&[][..], |g| g.nvidia_smi.gpus.as_slice());
        gpus.len() > 1
            && gpus.iter().any(|g| {
                g.name.as_deref().is_some_and(|n| {
                    n.contains("GeForce")
                        || n.contains("RTX 40")
                        || n.contains("RTX 50")
                        || n.contains("RTX 30")
                })
            })
    });
    let d = draft(context.lang, "nccl.error", Severity::Error)
        .title(
            if shm { "NCCL 出错：容器的共享内存（/dev/shm）不够" } else if p2p { "NCCL 出错：GPU 之间的直连（P2P）通信失败" } else if timeout { "NCCL 出错：多卡通信超时" } else { "NCCL 出错：多卡通信失败" },
            if shm { "NCCL failed: the container's shared memory (/dev/shm) is too small" } else if p2p { "NCCL failed: direct GPU-to-GPU (P2P) transfers fail" } else if timeout { "NCCL failed: a collective operation timed out" } else { "NCCL failed: multi-GPU communication broke" },
        )
        .detail(
            if shm { "NCCL 在同一台机器的卡之间用共享内存传数据。Docker 容器默认只有 64 MB 的 /dev/shm，NCCL 建不了共享内存段，就报 unhandled system error。" } else if p2p { "消费级显卡（RTX 30/40/50 系列）之间的 P2P 直连在很多主机上不可用或不稳定，NCCL 尝试直连时会报错或卡住。" } else if timeout { "某个进程没有按时参加集合通信：常见于另一张卡上的进程已经崩溃（比如 OOM），或各进程的数据量不一致。" } else { "“unhandled system error” 只说明底层调用失败了，具体原因要打开 NCCL 的调试日志看。在租用的容器里最常见的是共享内存不够和消费卡的 P2P 问题。" },
            if shm { "NCCL moves data between GPUs of one machine through shared memory. A Docker container gets 64 MB of /dev/shm by default, NCCL cannot create its segment, and reports \"unhandled system error\"." } else if p2p { "Direct P2P transfers between consumer cards (RTX 30/40/50 series) are unavailable or unreliable on many hosts; NCCL fails or hangs when it tries them." } else if timeout { "One process did not join the collective in time: usually the process on another GPU already crashed (an OOM, say), or the ranks got different amounts of data." } else { "\"unhandled system error\" only says a system call failed; NCCL's debug log names it. In rented containers the usual causes are too little shared memory and P2P between consumer cards." },
        )
        .run("打开 NCCL 的调试日志重跑，找 WARN 行：", "Run again with NCCL's debug log and look for WARN lines:", "NCCL_DEBUG=INFO python train.py 2>&1 | grep -E 'NCCL (WARN|INFO) (Error|Call|NET|P2P)'")
        .when(shm || !(p2p || timeout), |d| {
            d.run("看共享内存的大小：", "Check the size of shared memory:", "df -h /dev/shm")
                .step("自己启动的容器：加 --shm-size=16g 或 --ipc=host 重新启动。", "A container you start yourself: restart it with --shm-size=16g or --ipc=host.")
                .run("改不了容器时，让 NCCL 不用共享内存（会慢一些）：", "If the container cannot change, keep NCCL off shared memory (somewhat slower):", "export NCCL_SHM_DISABLE=1")
        })
        .when(p2p || consumer_multi || !(shm || timeout), |d| {
            d.run("消费级多卡：关掉 P2P 直连再试：", "Consumer cards: turn P2P off and try again:", "export NCCL_P2P_DISABLE=1")
        })
        .when(timeout, |d| {
            d.step("往上翻日志，找最先出错的那个进程（rank）的报错，先解决它。", "Scroll up for the first rank that failed and fix that error first.")
        });
    Some(d.evidence_all(evidence(scan, Signal::Nccl)).build())
}

static SPACE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"No space left on device:?\s*['"]([^'"]{1,500})['"]"#).expect("valid regex")
});

/// The disk a path lives on: the mount that is the longest prefix of it.
fn disk_of<'d>(disks: &'d [DiskUsage], path: &str) -> Option<&'d DiskUsage> {
    let path = if let Some(rest) = path.strip_prefix("~/") {
        format!("/root/{rest}")
    } else {
        path.to_owned()
    };
    disks
        .iter()
        .filter(|d| {
            path == d.mount
                || path.starts_with(&format!("{}/", d.mount.trim_end_matches('/')))
                || d.mount == "/"
        })
        .max_by_key(|d| d.mount.len())
}

fn disk_full(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::DiskFull) {
        return None;
    }
    let text = joined(scan, Signal::DiskFull);
    let lower = text.to_ascii_lowercase();
    // NCCL's "posix_fallocate failed: No space left on device" is /dev/shm, explained by nccl.error.
    if scan.has(Signal::Nccl) && (lower.contains("posix_fallocate") || lower.contains("/dev/shm")) {
        return None;
    }
    let path = capture(&SPACE_PATH, &text, 1).map(str::to_owned);
    let disks = context
        .facts
        .as_ref()
        .and_then(|f| f.disks.as_deref())
        .unwrap_or(&[]);
    let full = match &path {
        Some(p) => disk_of(disks, p),
        None => disks.iter().min_by_key(|d| d.available_mib),
    };
    let data = disks
        .iter()
        .filter(|d| full.is_none_or(|f| f.mount != d.mount))
        .filter(|d| {
            d.mount != "/"
                && (DATA_PATHS
                    .iter()
                    .any(|p| d.paths.iter().any(|q| q.as_str() == *p))
                    || d.available_mib > 10 * 1024)
        })
        .max_by_key(|d| d.available_mib);
    let data_dir = data
        .and_then(|d| {
            d.paths
                .iter()
                .find(|p| DATA_PATHS.contains(&p.as_str()))
                .or(d.paths.first())
        })
        .cloned()
        .unwrap_or_else(|| "/root/autodl-tmp".to_owned());
    let q = |s: &str| shell::quote(s).into_owned();
    let which_zh = match (full, &path) {
        (Some(d), _) => format!(
            "满的是挂在 {} 的盘（剩 {:.1} GiB）。",
            d.mount,
            d.available_mib as f64 / 1024.0
        ),
        (None, Some(p)) => format!("写入 {p} 时失败。"),
        (None, None) => String::new(),
    };
    let which_en = match (full, &path) {
        (Some(d), _) => format!(
            "The full disk is the one mounted at {} ({:.1} GiB left). ",
            d.mount,
            d.available_mib as f64 / 1024.0
        ),
        (None, Some(p)) => format!("Writing {p} failed. "),
        (None, None) => String::new(),
    };
    Some(
        draft(context.lang, "disk.full", Severity::Error)
            .title("磁盘满了（No space left on device）", "The disk is full (No space left on device)")
            .detail(
                format!("{which_zh}租用实例的系统盘通常很小（AutoDL 约 30 GB），而 pip/conda 缓存、Hugging Face 模型和数据集缓存默认都写在家目录（系统盘）里。大文件要放到数据盘{}。", data.map_or(String::new(), |_| format!("（这台是 {data_dir}）"))),
                format!("{which_en}A rented instance's system disk is small (about 30 GB on AutoDL), yet pip/conda caches and Hugging Face model and dataset caches all default to the home folder on it. Large files belong on the data disk{}.", data.map_or(String::new(), |_| format!(" ({data_dir} here)"))),
            )
            .run("看各个盘还剩多少：", "See what each disk has left:", "df -h")
            .run("找出占空间的缓存：", "Find the caches taking the space:", "du -xh --max-depth=1 ~/.cache ~ 2>/dev/null | sort -rh | head -n 15")
            .run("清理 pip 和 conda 的缓存：", "Clear the pip and conda caches:", "pip cache purge; conda clean -a -y")
            .run(
                "把模型、数据集和临时文件放到数据盘（写进 ~/.bashrc 长期生效）：",
                "Keep models, datasets and temporary files on the data disk (add to ~/.bashrc to keep it):",
                format!(
                    "mkdir -p {hf} {tmp} && export HF_HOME={hf} TMPDIR={tmp}",
                    hf = q(&format!("{data_dir}/hf-cache")),
                    tmp = q(&format!("{data_dir}/tmp"))
                ),
            )
            .evidence_all(evidence(scan, Signal::DiskFull))
            .evidence(full.map(|d| format!("{} ({}): {} MiB free of {} MiB", d.mount, d.paths.join(", "), d.available_mib, d.size_mib)).unwrap_or_default())
            .build(),
    )
}

static HF_MODEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:it looks like|and it looks like) ([\w.-]+/[\w.-]+|[\w.-]+) is not the path")
        .expect("valid regex")
});
static HF_URL_MODEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"huggingface\.co/([\w.-]+/[\w.-]+)/resolve/").expect("valid regex")
});

fn hf_unreachable(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::HfUnreachable) {
        return None;
    }
    // The model's name may sit on the line after the connection error.
    let text: String = scan
        .spans(Signal::HfUnreachable)
        .into_iter()
        .map(|s| scan.with_following(s, 1))
        .collect::<Vec<_>>()
        .join("\n");
    let model = capture(&HF_MODEL, &text, 1)
        .or_else(|| capture(&HF_URL_MODEL, &text, 1))
        .map(str::to_owned);
    let turbo = context
        .facts
        .as_ref()
        .and_then(|f| f.network.as_ref())
        .is_some_and(|n| n.network_turbo);
    let download = match &model {
        Some(m) => format!(
            "HF_ENDPOINT=https://hf-mirror.com huggingface-cli download {}",
            shell::quote(m)
        ),
        None => "HF_ENDPOINT=https://hf-mirror.com huggingface-cli download MODEL_ID".to_owned(),
    };
    Some(
        draft(context.lang, "network.hf_unreachable", Severity::Error)
            .title("连不上 Hugging Face", "Hugging Face cannot be reached")
            .detail(
                format!("程序要从 huggingface.co 下载{}，但这台实例连不上它（国内机房通常直连不了），本地缓存里也没有。", model.as_deref().map_or("模型".to_owned(), |m| format!(" {m} "))),
                format!("The program wanted to download {} from huggingface.co, but this instance cannot reach it (mainland data centres usually cannot) and it is not in the local cache.", model.as_deref().unwrap_or("a model")),
            )
            .run(
                "改用国内镜像（写进 ~/.bashrc 长期生效）：",
                "Use the mirror instead (add to ~/.bashrc to keep it):",
                "export HF_ENDPOINT=https://hf-mirror.com",
            )
            .when(turbo, |d| d.run("这台机器有平台的学术加速，也可以先启用：", "This machine has the provider's academic accelerator; you can also enable it:", "source /etc/network_turbo"))
            .run("先把模型完整下载到本地，再从本地路径加载：", "Download the model completely first, then load it from the local path:", download)
            .step("已经下载过的模型，可以设置 HF_HUB_OFFLINE=1 让程序只用本地缓存。", "For a model already downloaded, HF_HUB_OFFLINE=1 makes the program use only the local cache.")
            .evidence_all(evidence(scan, Signal::HfUnreachable))
            .build(),
    )
}

static REQUIREMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"requirement (torch[\w-]*)\s*([=<>!~]=?\s*[^\s)(]+)?").expect("valid regex")
});
static FROM_VERSIONS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(from versions: ([^)]{0,2000})\)").expect("valid regex"));

fn pip_no_torch(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::PipNoTorch) {
        return None;
    }
    let text = joined(scan, Signal::PipNoTorch);
    let package = capture(&REQUIREMENT, &text, 1)
        .unwrap_or("torch")
        .to_owned();
    let spec = capture(&REQUIREMENT, &text, 2).map(|s| s.replace(' ', ""));
    let versions = capture(&FROM_VERSIONS, &text, 1)
        .map(str::trim)
        .map(str::to_owned);
    let none = versions.as_deref().is_none_or(|v| v == "none");
    let python = context.facts.as_ref().and_then(|f| {
        f.torch
            .as_ref()
            .and_then(|t| t.python_version.clone())
            .or_else(|| {
                f.python.as_ref().and_then(|p| {
                    p.python3_version
                        .clone()
                        .or_else(|| p.python_version.clone())
                })
            })
    });
    let local = spec.as_deref().is_some_and(|s| s.contains('+'));
    let spec = spec.unwrap_or_default();
    let versions = versions.unwrap_or_default();
    let (why_zh, why_en) = if local {
        (
            format!("要的是带 CUDA 后缀的版本（{package}{spec}），这种版本只在 PyTorch 自己的下载源里，PyPI 和国内镜像都没有。"),
            format!("It asks for a CUDA-tagged build ({package}{spec}); those live only on PyTorch's own index, not on PyPI or the mirrors."),
        )
    } else if none {
        (
            "pip 在当前的下载源里找不到任何适合这个 Python 的 PyTorch wheel 包（from versions: none）。通常是 Python 版本太新或太旧（PyTorch 只为部分 Python 版本发布 wheel 包）、32 位 Python，或者下载源里没有 torch。".to_owned(),
            "pip found no PyTorch wheel for this Python on the index (from versions: none). Usually the Python version is too new or too old (PyTorch publishes wheels for a range of Python versions only), a 32-bit Python, or an index that carries no torch.".to_owned(),
        )
    } else {
        (
            format!("要的版本（{package}{spec}）没有适合这个 Python 的 wheel 包；下载源里有的是：{versions}。老版本的 PyTorch 不支持新的 Python。"),
            format!("The version asked for ({package}{spec}) has no wheel for this Python; the index has: {versions}. Old PyTorch releases do not support newer Python versions."),
        )
    };
    let choice = context.facts.as_ref().and_then(wheel_choice);
    let d = draft(context.lang, "pip.no_matching_torch", Severity::Error)
        .title(
            format!("pip 找不到能装的 {package}"),
            format!("pip finds no {package} it can install"),
        )
        .detail(
            format!(
                "{why_zh}{}",
                python
                    .as_deref()
                    .map_or(String::new(), |p| format!("这台实例的 Python 是 {p}。"))
            ),
            format!(
                "{why_en}{}",
                python.as_deref().map_or(String::new(), |p| format!(
                    " This instance's Python is {p}."
                ))
            ),
        )
        .run(
            "看 Python 的版本和位数：",
            "Check the Python version and word size:",
            "python -V; python -c 'import struct; print(struct.calcsize(\"P\") * 8, \"bit\")'",
        )
        .run(
            "用 conda 建一个 PyTorch 支持的 Python 版本的环境：",
            "Create an environment with a Python version PyTorch supports:",
            "conda create -n torch python=3.11 -y && conda activate torch",
        );
    let d = install_wheel_step(d, choice.as_ref());
    Some(
        d.when(!none && !local, |d| {
            d.step(
                "或者不指定这个旧版本，改用下载源里列出的版本。",
                "Or drop the pin on the old version and use one the index lists.",
            )
        })
        .evidence_all(evidence(scan, Signal::PipNoTorch))
        .build(),
    )
}

fn cpu_build(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::CpuBuild) {
        return None;
    }
    let choice = context.facts.as_ref().and_then(wheel_choice);
    let d = draft(context.lang, "torch.cpu_build", Severity::Error)
        .title("装的是 CPU 版 PyTorch", "The installed PyTorch is a CPU-only build")
        .detail(
            "“Torch not compiled with CUDA enabled”：这个 PyTorch 不带 CUDA，所以用不了 GPU，哪怕驱动和显卡都正常。常见原因是直接 pip install torch（Windows 上或某些镜像源会给 CPU 版）。",
            "\"Torch not compiled with CUDA enabled\": this PyTorch has no CUDA, so it cannot use the GPU even though the driver and card are fine. The usual cause is a plain `pip install torch` (Windows and some mirrors serve the CPU build).",
        )
        .run("确认装的版本（+cpu 就是 CPU 版）：", "Check the build (+cpu means CPU-only):", "python -c 'import torch; print(torch.__version__, torch.version.cuda)'")
        .run("卸载 CPU 版：", "Remove the CPU build:", "pip uninstall -y torch torchvision torchaudio");
    let d = install_wheel_step(d, choice.as_ref());
    Some(d.evidence_all(evidence(scan, Signal::CpuBuild)).build())
}

fn no_device(scan: &Scan<'_>, context: &ExplainContext) -> Option<Finding> {
    if !scan.has(Signal::NoDevice) {
        return None;
    }
    Some(
        draft(context.lang, "torch.cuda_unavailable", Severity::Error)
            .title("程序看不到任何 GPU（no CUDA-capable device）", "The program sees no GPU (no CUDA-capable device)")
            .detail(
                "CUDA 初始化时一张卡都没找到：实例可能是以“无卡模式”开机的，CUDA_VISIBLE_DEVICES 被设成了空或错误的编号，或者驱动没有正常工作。",
                "CUDA found no GPU when it started: the instance may be running in no-GPU mode, CUDA_VISIBLE_DEVICES may be empty or wrong, or the driver is not working.",
            )
            .run("第一步永远是看 nvidia-smi：", "The first check is always nvidia-smi:", "nvidia-smi")
            .run("检查可见设备变量：", "Check the visible-devices variable:", "echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"")
            .step("在控制台确认实例是带 GPU 开机的；无卡模式下要关机后以 GPU 模式重新开机。", "In the provider console, check the instance runs with its GPUs; from no-GPU mode, power off and start it with GPUs.")
            .evidence_all(evidence(scan, Signal::NoDevice))
            .build(),
    )
}

/// Nothing matched: say so, and where to look next.
pub(super) fn unknown(scan: &Scan<'_>, context: &ExplainContext) -> Finding {
    let marker = scan.last_marker.map(|s| clean(scan.raw(s)));
    let mut tail_start = scan.text.len().saturating_sub(4096);
    while !scan.text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let last_line = scan.text[tail_start..]
        .lines()
        .rev()
        .map(clean)
        .find(|l| !l.is_empty());
    draft(context.lang, "explain.unknown", Severity::Info)
        .title("这段报错不在已知的问题里", "This error is not one Leasehold knows")
        .detail(
            "没有认出这段文字里的问题，所以不做猜测。报错的关键通常在最后一个 Error/Exception 行，以及它上面第一个指向你自己代码的位置。",
            "Nothing in this text matches a known problem, so there is no guess here. The key is usually the last Error/Exception line, and the first line above it that points into your own code.",
        )
        .step("从下往上读：最后一行异常说明是什么错，往上找第一个属于你项目的文件和行号。", "Read from the bottom up: the last exception line says what failed; above it, find the first file and line of your own project.")
        .run("如果是 CUDA 报错，同步执行重跑，让堆栈指向真正出错的地方：", "For a CUDA error, run again synchronously so the stack points at the real place:", "CUDA_LAUNCH_BLOCKING=1 python train.py")
        .run("看内核日志有没有 GPU 或内存的记录：", "Look for GPU or memory events in the kernel log:", "dmesg -T | tail -n 50")
        .step("用“检测”把这台实例查一遍：驱动、PyTorch、磁盘和显存占用都会被查到。", "Run Verify on the machine: it checks the driver, PyTorch, disks and GPU memory in one go.")
        .evidence(marker.clone().unwrap_or_default())
        .when(marker.is_none(), |d| d.evidence(last_line.unwrap_or_default()))
        .build()
}

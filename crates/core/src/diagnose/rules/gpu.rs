//! The GPUs themselves: error states, Xid reports, memory held by someone else, fewer GPUs than
//! rented, and what the stress test measured.

use std::collections::BTreeMap;

use super::gpus;
use crate::catalog::find_gpu_with_memory;
use crate::diagnose::text::draft;
use crate::diagnose::xid::{self, XidCause};
use crate::diagnose::{DiagnoseContext, Finding, Severity};
use crate::probe::nvidia_smi::{GpuInfo, GpuState};
use crate::probe::Facts;

pub(super) fn check(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(error_state(facts, context));
    findings.extend(xids(facts, context));
    findings.extend(busy(facts, context));
    findings.extend(count_mismatch(facts, context));
    findings.extend(stress(facts, context));
    findings
}

fn label(gpu: &GpuInfo) -> String {
    match gpu.name.as_deref() {
        Some(name) => format!("GPU {} ({name})", gpu.index),
        None => format!("GPU {}", gpu.index),
    }
}

fn error_state(facts: &Facts, context: &DiagnoseContext) -> Option<Finding> {
    let failed: Vec<&GpuInfo> = gpus(facts)
        .iter()
        .filter(|g| g.state == GpuState::Error)
        .collect();
    if failed.is_empty() {
        return None;
    }
    let which: Vec<String> = failed.iter().map(|g| label(g)).collect();
    let evidence = failed.iter().map(|g| {
        format!(
            "{}: {} {}",
            label(g),
            if g.failed_fields.iter().any(|f| f == "device_handle") {
                "cannot open device handle"
            } else {
                "ERR!/Unknown Error in"
            },
            g.failed_fields.join(", ")
        )
    });
    Some(
        draft(context.lang, "gpu.error_state", Severity::Error)
            .title(format!("{} 处于错误状态", which.join("、")), format!("{} in an error state", which.join(", ")))
            .detail(
                "nvidia-smi 读这张卡时得到 ERR! / Unknown Error：驱动层已经和这张卡失去正常联系（常见于 GPU 崩溃、显存 ECC 错误、供电或散热问题）。在这张卡上继续跑任务会报错或结果不可信。",
                "nvidia-smi reads ERR! / Unknown Error from this GPU: the driver has lost normal contact with it (typical after a GPU crash, an ECC memory error, or power or heat trouble). Work on this GPU will fail or give results you cannot trust.",
            )
            .run("查看内核里的 Xid 报错：", "Look for Xid errors from the kernel:", "dmesg | grep -i xid | tail -n 20")
            .run("查看 ECC 与显存页退役情况：", "Check ECC errors and retired memory pages:", "nvidia-smi -q -d ECC,PAGE_RETIREMENT")
            .step(
                "在控制台把实例关机再开机（容器里重启不会重置 GPU）。",
                "Power the instance off and on from the console (restarting processes inside a container does not reset the GPU).",
            )
            .step(
                "重启后仍是 ERR!：联系平台更换机器，这是硬件或宿主机的问题，不要继续调试代码。",
                "Still ERR! after that: ask the provider for another machine. This is the hardware or host, not your code.",
            )
            .evidence_all(evidence)
            .build(),
    )
}

fn xids(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(log) = &facts.kernel_log else {
        return Vec::new();
    };
    let mut by_code: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for event in &log.xid_events {
        by_code
            .entry(event.code)
            .or_default()
            .push(event.line.clone());
    }
    let lang = context.lang;
    by_code
        .into_iter()
        .map(|(code, lines)| {
            let meaning = xid::meaning(code);
            let severity = meaning.map_or(Severity::Warning, |m| m.severity);
            let cause = meaning.map_or(XidCause::Unknown, |m| m.cause);
            let what = meaning.map_or_else(
                || lang.pick("NVIDIA Xid 目录里查得到具体含义", "see NVIDIA's Xid catalog for its meaning"),
                |m| m.text(lang),
            );
            let d = draft(lang, "gpu.xid", severity)
                .subject(format!("xid{code}"))
                .title(format!("内核报告了 GPU 错误 Xid {code}"), format!("The kernel reported GPU error Xid {code}"))
                .detail(
                    format!("Xid {code}：{what}。共出现 {} 次。", lines.len()),
                    format!("Xid {code}: {what}. Seen {} time(s).", lines.len()),
                );
            let d = match cause {
                XidCause::Application => d
                    .step("多半是程序自身的问题：检查自定义 CUDA 算子、越界索引，必要时先在 CPU 上复现。", "Most likely the program: check custom CUDA kernels and out-of-range indexing; reproduce on the CPU if needed.")
                    .step("重启出错的程序即可；反复出现再看驱动版本是否过旧。", "Restarting the program is enough; if it keeps happening, check whether the driver is too old."),
                XidCause::Hardware => d
                    .run("查看 ECC 计数：", "Check the ECC counters:", "nvidia-smi -q -d ECC")
                    .step("这是硬件或宿主机故障：保存数据，联系平台更换机器，不要继续在这张卡上训练。", "This is the hardware or the host: save your data, ask the provider for another machine, and stop training on this GPU."),
                XidCause::ResetPending => d
                    .step("在控制台关机再开机，让 GPU 重置后修复生效。", "Power the instance off and on from the console so the GPU is reset and the repair applies."),
                XidCause::Unknown => d
                    .step("对照 NVIDIA Xid 目录判断原因：https://docs.nvidia.com/deploy/xid-errors/", "Look the code up in NVIDIA's Xid catalog: https://docs.nvidia.com/deploy/xid-errors/"),
            };
            d.evidence_all(lines.into_iter().rev().take(5)).build()
        })
        .collect()
}

/// Memory above this on an idle, freshly rented GPU belongs to someone.
const BUSY_MIB: u32 = 1024;

fn busy(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(gpu_facts) = &facts.gpu else {
        return Vec::new();
    };
    let lang = context.lang;
    let mut findings = Vec::new();
    for gpu in gpus(facts) {
        let used = gpu.memory_used_mib.unwrap_or(0);
        if used < BUSY_MIB {
            continue;
        }
        let holders: Vec<_> = gpu_facts
            .nvidia_smi
            .processes
            .iter()
            .filter(|p| p.gpu_index == Some(gpu.index))
            .collect();
        let state_of = |pid: u32| gpu_facts.process_states.iter().find(|s| s.pid == pid);
        let zombies: Vec<u32> = holders
            .iter()
            .filter(|p| {
                state_of(p.pid).is_some_and(|s| !s.visible || s.state.as_deref() == Some("Z"))
            })
            .map(|p| p.pid)
            .collect();
        let idle = gpu.utilization_pct == Some(0);
        let invisible = holders.is_empty();
        let (zh, en) = if !zombies.is_empty() || (invisible && idle) {
            (
                format!("{} 的 {used} MiB 显存被已经不在运行的进程占着（僵尸进程或别的容器），利用率为 0%。这部分显存你用不了，训练会更早报 CUDA out of memory。", label(gpu)),
                format!("{used} MiB on {} is held by processes that are not running here any more (zombies, or another container) while utilisation is 0%. You cannot use that memory, and training will hit CUDA out of memory sooner.", label(gpu)),
            )
        } else {
            (
                format!("{} 上已有 {used} MiB 显存被占用（利用率 {}%）：可能是你之前启动的任务还在跑，也可能有别人的进程。", label(gpu), gpu.utilization_pct.map_or("?".into(), |u| u.to_string())),
                format!("{used} MiB on {} is already in use (utilisation {}%): a job you started earlier may still be running, or someone else's process is.", label(gpu), gpu.utilization_pct.map_or("?".into(), |u| u.to_string())),
            )
        };
        let kill_list: Vec<String> = holders
            .iter()
            .filter(|p| state_of(p.pid).is_none_or(|s| s.visible))
            .map(|p| p.pid.to_string())
            .collect();
        let d = draft(lang, "gpu.busy", Severity::Warning)
            .subject(format!("gpu{}", gpu.index))
            .title(format!("{} 的显存已被占用", label(gpu)), format!("Memory on {} is already taken", label(gpu)))
            .detail(zh, en)
            .run("列出占用显存的进程：", "List the processes holding GPU memory:", "nvidia-smi --query-compute-apps=pid,used_memory,process_name --format=csv")
            .when(!kill_list.is_empty(), |d| {
                d.run("确认是自己不再需要的进程后结束它：", "If they are yours and no longer needed, end them:", format!("kill -9 {}", kill_list.join(" ")))
            })
            .when(invisible || zombies.len() == holders.len(), |d| {
                d.step(
                    "容器里看不到这些进程，无法从内部结束：在控制台重启实例；仍被占用就联系平台。",
                    "These processes are not visible from inside the container and cannot be ended here: restart the instance from the console, and contact the provider if the memory is still taken.",
                )
            });
        let evidence = holders.iter().map(|p| {
            let state = state_of(p.pid).map_or(String::new(), |s| match (&s.state, s.visible) {
                (_, false) => " [not visible here]".to_owned(),
                (Some(state), true) => format!(" [state {state}]"),
                (None, true) => String::new(),
            });
            format!(
                "pid {} {} {} MiB{state}",
                p.pid,
                p.name,
                p.used_memory_mib.map_or("?".into(), |m| m.to_string())
            )
        });
        findings.push(
            d.evidence(format!(
                "{}: {used} / {} MiB, {}% util",
                label(gpu),
                gpu.memory_total_mib.map_or("?".into(), |t| t.to_string()),
                gpu.utilization_pct.map_or("?".into(), |u| u.to_string())
            ))
            .evidence_all(evidence)
            .build(),
        );
    }
    findings
}

fn count_mismatch(facts: &Facts, context: &DiagnoseContext) -> Option<Finding> {
    let expected = context.expected_gpu_count?;
    facts.gpu.as_ref()?;
    let seen = u32::try_from(gpus(facts).len()).unwrap_or(u32::MAX);
    if seen >= expected {
        return None;
    }
    Some(
        draft(context.lang, "gpu.count_mismatch", Severity::Error)
            .title(format!("只看到 {seen} 张 GPU，租的是 {expected} 张"), format!("Only {seen} GPU(s) visible, {expected} rented"))
            .detail(
                "实例里能用的 GPU 比订单上的少。你在按订单的卡数付费，少的卡可能没有分配、掉线，或实例以较少的卡数开机。",
                "Fewer GPUs are usable than the rental says. You pay for the full count; the missing GPUs were not attached, dropped off, or the instance was started with fewer.",
            )
            .run("列出能看到的 GPU：", "List the GPUs the driver sees:", "nvidia-smi -L")
            .run("看 PCI 上有几张卡（能看到但驱动没认出，多为掉卡）：", "Count the cards on the PCI bus (present there but not in nvidia-smi usually means a GPU fell off):", "lspci | grep -i nvidia")
            .step("在控制台核对实例的 GPU 数量；不一致就联系平台，并考虑先停止计费。", "Check the instance's GPU count in the console; if it differs, contact the provider and consider stopping the billing first.")
            .evidence(format!("nvidia-smi lists {seen} GPU(s); expected {expected}"))
            .build(),
    )
}

/// A batch this much slower at the end than at the start means the GPU throttled.
const SLOWDOWN_LIMIT: f64 = 0.15;
/// A GPU below this share of its rated dense FP16/BF16 peak is underperforming; well-fed
/// matmuls reach 60–80 % of the datasheet figure.
const PEAK_SHARE: f64 = 0.5;
/// Batches spread this far around the median mean the speed is not stable.
const SPREAD_LIMIT: f64 = 0.30;

fn stress(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(stress) = &facts.stress else {
        return Vec::new();
    };
    let lang = context.lang;
    let mut findings = Vec::new();
    for device in &stress.devices {
        for run in &device.runs {
            let who = format!("GPU {} ({}) {}", device.index, device.name, run.dtype);
            if let Some(error) = &run.error {
                let oom = error.to_ascii_lowercase().contains("out of memory");
                findings.push(
                    draft(lang, "gpu.stress_failed", Severity::Error)
                        .subject(format!("gpu{}:{}", device.index, run.dtype))
                        .title(format!("{who} 压力测试出错"), format!("The stress test failed on {who}"))
                        .detail(
                            if oom { "8192×8192 的矩阵乘法只要不到 1 GiB 显存，却报显存不足：显存被别的进程占用了。" } else { "一个简单的矩阵乘法在这张卡上报错或算出 NaN。代码没有问题时，这说明驱动不稳定、显存出错或散热不足——应该找平台处理，而不是继续调代码。" },
                            if oom { "An 8192×8192 matmul needs under 1 GiB, yet the GPU ran out of memory: other processes are holding it." } else { "A plain matrix multiplication failed or produced NaN on this GPU. With code this simple, that points to an unstable driver, failing memory or overheating: take it to the provider rather than debugging your code." },
                        )
                        .run("查看 Xid 与 ECC：", "Check Xid errors and ECC:", "dmesg | grep -i xid | tail -n 20; nvidia-smi -q -d ECC")
                        .step("重启实例后再测一次；仍失败就联系平台更换机器。", "Restart the instance and test again; if it still fails, ask the provider for another machine.")
                        .evidence(format!("{who}: {error}"))
                        .build(),
                );
                continue;
            }
            let slowdown = run.slowdown().filter(|s| *s > SLOWDOWN_LIMIT);
            let spread = run.spread().filter(|s| *s > SPREAD_LIMIT);
            let median = run.median().unwrap_or(0.0);
            let memory = gpus(facts)
                .iter()
                .find(|g| g.index == device.index)
                .and_then(|g| g.memory_total_mib)
                .map(u64::from);
            let peak = find_gpu_with_memory(&device.name, memory)
                .and_then(|spec| spec.fp16_tensor_tflops.as_ref())
                .map(|p| p.value);
            let slow = peak.filter(|p| median > 0.0 && median < p * PEAK_SHARE);
            if slowdown.is_none() && spread.is_none() && slow.is_none() {
                continue;
            }
            let (zh, en) = match slow {
                Some(peak) => (
                    format!("矩阵乘法只有 {median:.0} TFLOPS，不到这张卡标称峰值（{peak:.0} TFLOPS）的一半。"),
                    format!("The matmul reached {median:.0} TFLOPS, less than half of this GPU's rated peak ({peak:.0} TFLOPS)."),
                ),
                None if slowdown.is_some() => (
                    format!("矩阵乘法中位数 {median:.0} TFLOPS，但后段比前段明显变慢。"),
                    format!("The median is {median:.0} TFLOPS, but the last batches ran clearly slower than the first."),
                ),
                None => (
                    format!("矩阵乘法中位数 {median:.0} TFLOPS，但各批次快慢差别很大。"),
                    format!("The median is {median:.0} TFLOPS, but batches varied widely in speed."),
                ),
            };
            findings.push(
                draft(lang, "gpu.underperforming", Severity::Warning)
                    .subject(format!("gpu{}:{}", device.index, run.dtype))
                    .title(format!("{who} 没有发挥应有的算力"), format!("{who} is not delivering its speed"))
                    .detail(
                        format!("{zh}多为过热降频、功耗墙被调低，或有别的进程在抢这张卡。"),
                        format!("{en} Usually thermal throttling, a lowered power cap, or another process sharing the GPU."),
                    )
                    .run("查看温度、功耗和降频原因：", "Check temperature, power and throttle reasons:", "nvidia-smi -q -d TEMPERATURE,POWER,PERFORMANCE")
                    .step("确认没有别的进程在用这张卡；长期降频请联系平台（散热问题）。", "Make sure nothing else runs on this GPU; persistent throttling is a cooling problem for the provider.")
                    .evidence(format!("{who}: median {median:.1} TFLOPS, slowdown {:.0}%, spread {:.0}%", run.slowdown().unwrap_or(0.0) * 100.0, run.spread().unwrap_or(0.0) * 100.0))
                    .evidence(peak.map(|p| format!("catalog peak (dense FP16/BF16 tensor): {p:.0} TFLOPS")).unwrap_or_default())
                    .build(),
            );
        }
    }
    findings
}

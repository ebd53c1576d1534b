//! A compute process that was using a GPU is gone and the GPU is idle now: the training run
//! crashed, was killed (out of host memory, a lost terminal), or finished — and billing goes on.

use chrono::{DateTime, Utc};

use super::{clock_time, gpu_list, FindingContext, LiveFinding, IDLE_PCT, TREND};
use crate::diagnose::text::draft;
use crate::diagnose::Severity;
use crate::monitor::sample::{ComputeProcess, Sample};
use crate::monitor::summary::SeenProcesses;

pub(super) fn died(
    last_sample: Option<&Sample>,
    seen: &SeenProcesses,
    context: &FindingContext,
) -> Option<LiveFinding> {
    let latest = seen.latest()?;
    let last_sample = last_sample?;
    let from = latest.at - TREND;
    // Each vanished process once, with the last time it was seen.
    let vanished: Vec<(&ComputeProcess, DateTime<Utc>)> = seen
        .earlier()
        .filter(|(process, at)| {
            *at >= from && !latest.processes.iter().any(|p| p.pid == process.pid)
        })
        .collect();
    let idle_now = |index: u32| {
        last_sample
            .gpus
            .iter()
            .find(|g| g.index == index)
            .and_then(|g| g.utilization_pct)
            .is_some_and(|pct| f64::from(pct) < IDLE_PCT)
    };
    let gone: Vec<_> = vanished
        .iter()
        .filter(|(p, _)| p.gpu_index.is_some_and(idle_now))
        .collect();
    if gone.is_empty() {
        return None;
    }
    let mut gpus: Vec<u32> = gone.iter().filter_map(|(p, _)| p.gpu_index).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let lang = context.lang;
    let which = gpu_list(lang, &gpus);
    let evidence = gone.iter().map(|(p, seen)| {
        format!(
            "PID {} ({}) on GPU {}, {} MiB, last seen {}",
            p.pid,
            p.name,
            p.gpu_index.unwrap_or_default(),
            p.used_memory_mib.map_or("-".into(), |m| m.to_string()),
            clock_time(*seen)
        )
    });
    let finding = draft(lang, "gpu.process_died", Severity::Warning)
        .title(
            format!("{which} 上的进程结束了，卡现在闲着"),
            format!("The process on {which} ended; the GPU is idle now"),
        )
        .detail(
            "刚才还在用这张卡的计算进程不见了，卡也停了下来。如果不是正常跑完，常见原因是内存不足被系统杀掉、断开终端后进程被挂断，或者程序报错退出。计费不会因此停止。",
            "A compute process that was using this GPU is gone and the GPU has stopped working. If it did not simply finish, it was usually killed for lack of host memory, hung up with a closed terminal, or exited with an error. Billing goes on regardless.",
        )
        .run(
            "看看系统是否因为内存不足杀掉了它：",
            "See whether the system killed it for lack of memory:",
            "dmesg | grep -i -E 'killed process|out of memory' | tail -n 5",
        )
        .run(
            "查看 GPU 报错（Xid）：",
            "Look for GPU errors (Xid):",
            "dmesg | grep -i xid | tail -n 5",
        )
        .step(
            "检查任务日志的最后几行；长任务用 nohup、tmux 或算力租用管家的后台任务启动，断线也不会被挂断。",
            "Read the last lines of the job's log; start long jobs with nohup, tmux or a Leasehold job so a dropped link cannot hang them up.",
        )
        .evidence_all(evidence)
        .build();
    Some(LiveFinding { finding, gpus })
}

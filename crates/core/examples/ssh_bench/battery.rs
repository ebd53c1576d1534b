//! The commands a Verify run sends to a fresh instance: what every benchmark side runs.
//!
//! Modelled on the probe battery of the Verify issue (OS, kernel, GPUs, driver, CPU, memory, disks,
//! Python, container). `nvidia-smi` is a fake that replays a real H200 capture, since the bench host
//! has no GPU; everything else is the real command on this machine.

/// One probe: a label for the table and the shell command line the remote shell runs.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub label: &'static str,
    pub command: &'static str,
}

pub const BATTERY: &[Probe] = &[
    Probe {
        label: "os-release",
        command: "cat /etc/os-release",
    },
    Probe {
        label: "kernel",
        command: "uname -r",
    },
    Probe {
        label: "gpus",
        command: "nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used,\
                  utilization.gpu,temperature.gpu,power.draw,power.limit --format=csv,noheader,nounits",
    },
    Probe {
        label: "gpu processes",
        command: "nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory \
                  --format=csv,noheader,nounits",
    },
    Probe {
        label: "driver module",
        command: "grep -E '^nvidia' /proc/modules; cat /proc/driver/nvidia/version 2>/dev/null; true",
    },
    Probe {
        label: "cpu count",
        command: "nproc",
    },
    Probe {
        label: "cgroup limits",
        command: "cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max 2>/dev/null; true",
    },
    Probe {
        label: "memory",
        command: "free -b",
    },
    Probe {
        label: "disks",
        command: "df -h / /tmp",
    },
    Probe {
        label: "python",
        command: "python3 --version",
    },
    Probe {
        label: "container",
        command: "test -e /.dockerenv && echo docker; head -3 /proc/1/cgroup",
    },
    Probe {
        label: "hostname",
        command: "hostname",
    },
];

/// The fake `nvidia-smi` put first on the test host's PATH: answers the two queries of the
/// battery with lines from a real H200 capture (utkuozdemir/nvidia_gpu_exporter, MIT), and the
/// plain invocation with the driver header.
pub const FAKE_NVIDIA_SMI: &str = r#"#!/bin/sh
case "$*" in
  *--query-gpu*) echo "0, NVIDIA H200, 590.48.01, 143771, 32362, 100, 52, 627.40, 700.00" ;;
  *--query-compute-apps*) echo "GPU-00000000-0000-0000-0000-000000000000, 90311, python3, 31744" ;;
  *) echo "NVIDIA-SMI 590.48.01    Driver Version: 590.48.01    CUDA Version: 13.1" ;;
esac
"#;

//! The driver: nvidia-smi missing, cannot reach the kernel module, sees no GPU, or disagrees
//! with the module's version. On rented instances the remedy is nearly always a fresh instance
//! from an image with the driver preinstalled, not reinstalling the driver by hand.

use crate::diagnose::text::draft;
use crate::diagnose::{DiagnoseContext, Finding, Severity};
use crate::probe::gpu::GpuFacts;
use crate::probe::nvidia_smi::NvidiaSmiStatus;
use crate::probe::Facts;
use crate::shell;

pub(super) fn check(facts: &Facts, context: &DiagnoseContext) -> Vec<Finding> {
    let Some(gpu) = &facts.gpu else {
        return Vec::new();
    };
    let container = context.is_container(facts);
    match gpu.nvidia_smi.status {
        NvidiaSmiStatus::NotInstalled => vec![not_installed(gpu, container, context)],
        NvidiaSmiStatus::DriverNotLoaded => vec![not_loaded(facts, gpu, container, context)],
        NvidiaSmiStatus::NoDevices => vec![no_devices(facts, gpu, container, context)],
        NvidiaSmiStatus::DriverMismatch => vec![mismatch(gpu, container, context)],
        NvidiaSmiStatus::Ok | NvidiaSmiStatus::Unrecognized => Vec::new(),
    }
}

fn common_evidence(gpu: &GpuFacts) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(message) = &gpu.nvidia_smi.message {
        lines.push(format!("nvidia-smi: {message}"));
    }
    if gpu.kernel_modules.is_empty() {
        lines.push("lsmod | grep nvidia: (nothing)".to_owned());
    } else {
        lines.push(format!(
            "lsmod | grep nvidia: {}",
            gpu.kernel_modules.join(", ")
        ));
    }
    if let Some(version) = &gpu.kernel_module_version {
        lines.push(format!("/proc/driver/nvidia/version: {version}"));
    }
    if gpu.device_nodes.is_empty() {
        lines.push("/dev/nvidia*: (none)".to_owned());
    }
    lines
}

fn recreate_step(d: crate::diagnose::text::Draft) -> crate::diagnose::text::Draft {
    d.step(
        "最省时的办法：在控制台释放（或停用）这台实例，换一个预装 NVIDIA 驱动和 CUDA 的镜像重新创建。云实例重建只要几分钟，比在上面反复重装驱动可靠得多。",
        "Quickest fix: release (or stop) this instance in the provider console and create a new one from an image with the NVIDIA driver and CUDA preinstalled. Re-creating takes minutes and is far more reliable than reinstalling the driver by hand.",
    )
}

fn not_installed(gpu: &GpuFacts, container: bool, context: &DiagnoseContext) -> Finding {
    let lang = context.lang;
    if let Some(found) = gpu.nvidia_smi_found_at.first() {
        let dir = found.rsplit_once('/').map_or("/usr/bin", |(dir, _)| dir);
        return draft(lang, "driver.not_installed", Severity::Error)
            .title("nvidia-smi 已安装，但不在 PATH 中", "nvidia-smi is installed but not on PATH")
            .detail(
                format!("驱动工具在 {found}，但当前 shell 的 PATH 找不到它，所以直接输入 nvidia-smi 会提示 command not found。驱动本身可能是好的。"),
                format!("The driver's tool is at {found}, but the shell's PATH does not include it, so typing nvidia-smi says \"command not found\". The driver itself may be fine."),
            )
            .run("先用完整路径确认显卡可见：", "First check the GPUs with the full path:", shell::quote(found).into_owned())
            .run(
                "把它所在目录加入 PATH（写入 ~/.bashrc，以后登录都生效）：",
                "Add its folder to PATH (in ~/.bashrc, so every login has it):",
                format!("echo 'export PATH={}:$PATH' >> ~/.bashrc && source ~/.bashrc", shell::quote(dir)),
            )
            .evidence_all(common_evidence(gpu))
            .evidence(format!("found: {}", gpu.nvidia_smi_found_at.join(", ")))
            .build();
    }
    let module_loaded = !gpu.kernel_modules.is_empty();
    draft(lang, "driver.not_installed", Severity::Error)
        .title("没有 NVIDIA 驱动：nvidia-smi 不存在", "No NVIDIA driver: nvidia-smi does not exist")
        .detail(
            if container {
                "这台实例是容器，驱动由宿主机提供并挂载进来。找不到 nvidia-smi 说明实例没有分到 GPU（例如以“无卡模式”开机），或镜像没有带上驱动的用户态组件。在容器里无法自行安装驱动。"
            } else {
                "系统里找不到 nvidia-smi，说明 NVIDIA 驱动没有安装，或者安装后 PATH 没有配置。没有驱动，任何框架都用不了 GPU。"
            },
            if container {
                "This instance is a container; the driver comes from the host and is mounted in. No nvidia-smi means the instance got no GPU (for example it was started in no-GPU mode) or the image lacks the driver's user-space tools. A driver cannot be installed from inside a container."
            } else {
                "nvidia-smi cannot be found: the NVIDIA driver is not installed, or PATH was never set up for it. Without the driver no framework can use the GPU."
            },
        )
        .run("确认内核模块是否加载：", "Check whether the kernel module is loaded:", "lsmod | grep nvidia")
        .when(container, |d| {
            d.step(
                "在控制台确认实例是以“有卡模式”开机的，并且 GPU 数量正确；必要时关机后以 GPU 模式重新开机。",
                "In the provider console, check the instance was powered on with its GPUs (not in no-GPU mode) and shows the right GPU count; if not, power it off and on again with GPUs.",
            )
        })
        .when(!container && !module_loaded, |d| {
            d.run(
                "如果是虚拟机或物理机，可以用发行版工具安装驱动（Ubuntu）：",
                "On a VM or bare-metal machine you can install the driver with the distribution's tool (Ubuntu):",
                "sudo ubuntu-drivers autoinstall && sudo reboot",
            )
        })
        .when(true, recreate_step)
        .evidence_all(common_evidence(gpu))
        .build()
}

fn not_loaded(
    facts: &Facts,
    gpu: &GpuFacts,
    container: bool,
    context: &DiagnoseContext,
) -> Finding {
    let nvrm = facts
        .kernel_log
        .as_ref()
        .map(|k| k.nvrm_errors.clone())
        .unwrap_or_default();
    draft(context.lang, "driver.not_loaded", Severity::Error)
        .title("nvidia-smi 无法与驱动通信", "nvidia-smi cannot talk to the NVIDIA driver")
        .detail(
            "nvidia-smi 在，但内核里的驱动模块没有加载或加载失败。最常见的原因是系统内核升级后，驱动没有为新内核重新编译（内核与驱动不匹配）。这时 torch.cuda.is_available() 一定是 False。",
            "nvidia-smi is there but the driver's kernel module is not loaded, or failed to load. The usual cause is a kernel upgrade the driver was never rebuilt for (kernel and driver no longer match). torch.cuda.is_available() will be False until this is fixed.",
        )
        .run("查看内核模块：", "Look for the kernel module:", "lsmod | grep nvidia")
        .run("查看驱动的内核日志：", "Read the driver's kernel messages:", "dmesg | grep -iE 'nvrm|nvidia' | tail -n 30")
        .when(container, |d| {
            d.step(
                "这是容器实例，驱动属于宿主机，容器内修不了：重启实例一次，仍不行就联系平台客服或迁移到别的主机。",
                "This is a container: the driver belongs to the host and cannot be fixed from inside. Restart the instance once; if it persists, contact the provider or move to another host.",
            )
        })
        .when(!container, |d| {
            d.run(
                "虚拟机/物理机：确认当前内核有对应的驱动模块（DKMS），重建后重启：",
                "VM or bare metal: check the running kernel has a driver module built (DKMS), rebuild it, then reboot:",
                "dkms status && sudo dkms autoinstall && sudo reboot",
            )
        })
        .when(true, recreate_step)
        .evidence_all(common_evidence(gpu))
        .evidence_all(nvrm)
        .build()
}

fn no_devices(
    facts: &Facts,
    gpu: &GpuFacts,
    container: bool,
    context: &DiagnoseContext,
) -> Finding {
    let nvrm = facts
        .kernel_log
        .as_ref()
        .map(|k| k.nvrm_errors.clone())
        .unwrap_or_default();
    let init_failed = nvrm
        .iter()
        .any(|l| l.contains("RmInitAdapter") || l.contains("rm_init_adapter"));
    draft(context.lang, "driver.no_devices", Severity::Error)
        .title("驱动在，但找不到任何 GPU（No devices were found）", "The driver is loaded but finds no GPU (\"No devices were found\")")
        .detail(
            if init_failed {
                "驱动尝试初始化显卡失败（RmInitAdapter failed）。通常是驱动版本太旧、不认识这张卡（例如 RTX 5090 需要 570 以上的驱动和开源内核模块），或内核与驱动不匹配。"
            } else {
                "驱动加载了，却看不到显卡：要么驱动与内核不匹配，要么实例的显卡没有被正确分配或加载。"
            },
            if init_failed {
                "The driver tried to bring the GPU up and failed (RmInitAdapter failed). Usually the driver is too old for this card (an RTX 5090 needs driver 570 or newer with the open kernel module) or the kernel and driver do not match."
            } else {
                "The driver is loaded but sees no GPU: either the driver and kernel do not match, or the instance's GPU was not attached or brought up properly."
            },
        )
        .run("查看驱动的内核日志：", "Read the driver's kernel messages:", "dmesg | grep -iE 'nvrm|nvidia' | tail -n 30")
        .run("确认 PCI 上有这张卡：", "Check the card is on the PCI bus:", "lspci | grep -i nvidia")
        .when(container, |d| {
            d.step(
                "容器实例无法自行处理：重启实例一次，仍然看不到卡就联系平台，或换一台主机重建。",
                "A container cannot fix this itself: restart the instance once; if the GPU is still missing, contact the provider or re-create on another host.",
            )
        })
        .when(true, recreate_step)
        .evidence_all(common_evidence(gpu))
        .evidence_all(nvrm)
        .build()
}

fn mismatch(gpu: &GpuFacts, container: bool, context: &DiagnoseContext) -> Finding {
    // An unknown version is said in words: a "?" on screen reads as a missing text.
    let (library_zh, library_en) = match gpu.nvidia_smi.nvml_library_version.as_deref() {
        Some(version) => (format!("NVML {version}"), format!("NVML {version}")),
        None => (
            "NVML，版本未知".to_owned(),
            "NVML, version unknown".to_owned(),
        ),
    };
    draft(context.lang, "driver.version_mismatch", Severity::Error)
        .title("驱动版本不一致（Driver/library version mismatch）", "Driver and library versions differ (\"Driver/library version mismatch\")")
        .detail(
            format!("内核里运行的驱动模块和用户态库（{library_zh}）不是同一个版本。多见于驱动升级后没有重启；在容器里则是镜像自带的驱动库与宿主机驱动不一致。"),
            format!("The driver module running in the kernel and the user-space library ({library_en}) are different versions. This happens after a driver upgrade without a reboot; in a container, the image ships driver libraries that do not match the host's driver."),
        )
        .run("对比两边的版本：", "Compare the two versions:", "cat /proc/driver/nvidia/version")
        .when(!container, |d| d.run("虚拟机/物理机：重启即可加载新模块：", "VM or bare metal: a reboot loads the new module:", "sudo reboot"))
        .when(container, |d| {
            d.step(
                "容器实例：不要在镜像里自行安装驱动包；换用平台提供的标准镜像重建实例。",
                "Container: do not install driver packages inside the image; re-create the instance from the provider's standard image.",
            )
        })
        .evidence_all(common_evidence(gpu))
        .build()
}

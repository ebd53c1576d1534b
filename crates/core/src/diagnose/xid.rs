//! What an Xid code means, in our words, from NVIDIA's Xid catalog
//! (<https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html>) as summarised in the
//! project's facts sheet. Codes not listed fall back to "see the catalog".

use super::{Lang, Severity};

/// Who is most likely at fault, which decides the advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XidCause {
    /// A bug or bad memory access in the program; restart it.
    Application,
    /// Memory errors or a GPU gone from the bus: the hardware or the host.
    Hardware,
    /// Needs a GPU reset (instance restart) to take effect.
    ResetPending,
    Unknown,
}

pub struct XidMeaning {
    pub code: u32,
    pub severity: Severity,
    pub cause: XidCause,
    zh: &'static str,
    en: &'static str,
}

impl XidMeaning {
    pub fn text(&self, lang: Lang) -> String {
        lang.pick(self.zh, self.en)
    }
}

const TABLE: &[XidMeaning] = &[
    XidMeaning { code: 13, severity: Severity::Warning, cause: XidCause::Application,
        zh: "图形引擎异常：通常是程序越界访问或自定义 CUDA 算子出错",
        en: "graphics engine exception: usually an out-of-bounds access or a faulty custom CUDA kernel in the program" },
    XidMeaning { code: 31, severity: Severity::Warning, cause: XidCause::Application,
        zh: "GPU 显存页错误（MMU Fault）：程序访问了非法地址，多为代码问题",
        en: "GPU memory page fault (MMU fault): the program touched an illegal address, usually a code bug" },
    XidMeaning { code: 43, severity: Severity::Warning, cause: XidCause::Application,
        zh: "GPU 停止处理当前任务：多为应用自身故障，重启程序即可",
        en: "the GPU stopped processing the job: usually the application's own fault; restart it" },
    XidMeaning { code: 48, severity: Severity::Error, cause: XidCause::Hardware,
        zh: "双比特（不可纠正）ECC 显存错误：显存硬件出错",
        en: "double-bit (uncorrectable) ECC memory error: the GPU's memory is failing" },
    XidMeaning { code: 63, severity: Severity::Warning, cause: XidCause::ResetPending,
        zh: "显存行重映射待生效：需要重置 GPU（重启实例）后才会启用",
        en: "a memory row was marked for remapping: it takes effect only after a GPU reset (restart the instance)" },
    XidMeaning { code: 64, severity: Severity::Error, cause: XidCause::Hardware,
        zh: "显存行重映射失败：同一地址重置后仍出错，反复出现应更换 GPU",
        en: "row remapping failed: the same address keeps failing after a reset; if it recurs the GPU needs replacing" },
    XidMeaning { code: 74, severity: Severity::Error, cause: XidCause::Hardware,
        zh: "NVLink 错误：GPU 之间的互联出现故障",
        en: "NVLink error: the link between GPUs is failing" },
    XidMeaning { code: 79, severity: Severity::Error, cause: XidCause::Hardware,
        zh: "GPU 已从总线上掉线（fallen off the bus）：PCIe 上找不到这张卡，常见于供电、散热或插接问题",
        en: "the GPU has fallen off the bus: it no longer answers on PCIe, usually power, heat or seating" },
    XidMeaning { code: 94, severity: Severity::Warning, cause: XidCause::Application,
        zh: "已隔离的 ECC 错误：只有受影响的程序需要重启",
        en: "contained ECC error: only the affected program has to restart" },
    XidMeaning { code: 95, severity: Severity::Error, cause: XidCause::Hardware,
        zh: "未能隔离的 ECC 错误：需要重置 GPU 或重启机器",
        en: "uncontained ECC error: the GPU must be reset or the machine rebooted" },
];

/// The meaning of `code`, or `None` when the catalog summary does not list it.
pub fn meaning(code: u32) -> Option<&'static XidMeaning> {
    TABLE.iter().find(|m| m.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallen_off_the_bus_is_a_hardware_error() {
        let m = meaning(79).expect("listed");
        assert_eq!((m.severity, m.cause), (Severity::Error, XidCause::Hardware));
        assert!(m.text(Lang::En).contains("fallen off the bus"));
        assert!(meaning(12345).is_none());
    }
}

//! Recent NVIDIA kernel messages: Xid errors and NVRM failures from `dmesg`.
//!
//! An Xid is the driver's own error report for a GPU fault (fallen off the bus, ECC, page
//! fault). Containers usually may not read the kernel log; that is recorded as a fact
//! ("denied"), not as a failed probe.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum KernelLogAccess {
    Read,
    /// `Operation not permitted` / `Permission denied`: normal inside containers.
    Denied,
    Unavailable,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct XidEvent {
    pub code: u32,
    /// `0000:3b:00` as the driver prints it.
    pub pci: Option<String>,
    pub pid: Option<u32>,
    pub process: Option<String>,
    pub detail: String,
    pub line: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct KernelLogFacts {
    pub access: KernelLogAccess,
    pub xid_events: Vec<XidEvent>,
    /// Other `NVRM:` lines that report a failure (`RmInitAdapter failed`, `GPU has fallen off`).
    pub nvrm_errors: Vec<String>,
    /// The error text when access was denied or dmesg is missing.
    pub message: Option<String>,
}

pub(crate) fn part() -> Part {
    Part::new(
        "dmesg",
        r#"out=$(dmesg 2>&1); rc=$?
if [ $rc -ne 0 ]; then printf '%s\n' "$out" | head -n 3; (exit $rc); else printf '%s\n' "$out" | grep -iE 'NVRM|Xid' | tail -n 200; true; fi"#,
    )
}

static XID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Xid \(PCI:([0-9A-Fa-f:.]+)\):\s*(\d+)(?:,\s*pid=(?:'?<unknown>'?|(\d+)))?(?:,\s*name=([^,]*))?,?\s*(.*)$")
        .expect("static regex")
});

pub(crate) fn parse(part: Option<&PartOutput>) -> KernelLogFacts {
    let Some(part) = part else {
        return KernelLogFacts {
            access: KernelLogAccess::Unavailable,
            xid_events: Vec::new(),
            nvrm_errors: Vec::new(),
            message: None,
        };
    };
    parse_dmesg(&part.text, part.exit)
}

pub fn parse_dmesg(text: &str, exit: Option<i32>) -> KernelLogFacts {
    let lower = text.to_ascii_lowercase();
    if exit.is_some_and(|code| code != 0) {
        let denied = lower.contains("not permitted") || lower.contains("permission denied");
        return KernelLogFacts {
            access: if denied {
                KernelLogAccess::Denied
            } else {
                KernelLogAccess::Unavailable
            },
            xid_events: Vec::new(),
            nvrm_errors: Vec::new(),
            message: text.lines().next().map(|l| l.trim().to_owned()),
        };
    }
    let mut facts = KernelLogFacts {
        access: KernelLogAccess::Read,
        xid_events: Vec::new(),
        nvrm_errors: Vec::new(),
        message: None,
    };
    for line in text.lines() {
        if let Some(c) = XID.captures(line) {
            let Some(code) = c.get(2).and_then(|m| m.as_str().parse().ok()) else {
                continue;
            };
            facts.xid_events.push(XidEvent {
                code,
                pci: c.get(1).map(|m| m.as_str().to_owned()),
                pid: c.get(3).and_then(|m| m.as_str().parse().ok()),
                process: c
                    .get(4)
                    .map(|m| m.as_str().trim().to_owned())
                    .filter(|n| !n.is_empty() && n != "<unknown>"),
                detail: c.get(5).map_or("", |m| m.as_str()).trim().to_owned(),
                line: line.trim().to_owned(),
            });
        } else if line.contains("NVRM") && is_failure_line(line) {
            facts.nvrm_errors.push(line.trim().to_owned());
        }
    }
    facts
}

fn is_failure_line(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "failed",
        "fallen off",
        "error",
        "mismatch",
        "not supported",
        "timeout",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid_lines_of_old_and_new_drivers_are_read() {
        let text = "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n\
[ 99.1] NVRM: Xid (PCI:0000:01:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x405840=0x7\n\
[ 99.2] NVRM: Xid (PCI:0000:01:00): 31, pid=4242, name=python, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS\n\
[ 5.0] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)\n\
[ 5.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14";
        let facts = parse_dmesg(text, Some(0));
        assert_eq!(facts.access, KernelLogAccess::Read);
        let codes: Vec<u32> = facts.xid_events.iter().map(|x| x.code).collect();
        assert_eq!(codes, vec![79, 13, 31]);
        assert_eq!(facts.xid_events[0].pci.as_deref(), Some("0000:3b:00"));
        assert_eq!(facts.xid_events[0].detail, "GPU has fallen off the bus.");
        assert_eq!(
            (
                facts.xid_events[1].pid,
                facts.xid_events[1].process.as_deref()
            ),
            (None, None)
        );
        assert_eq!(
            (
                facts.xid_events[2].pid,
                facts.xid_events[2].process.as_deref()
            ),
            (Some(4242), Some("python"))
        );
        assert_eq!(
            facts.nvrm_errors.len(),
            1,
            "the loading banner is not an error"
        );
    }

    #[test]
    fn permission_denied_is_a_fact_not_a_failure() {
        let facts = parse_dmesg(
            "dmesg: read kernel buffer failed: Operation not permitted",
            Some(1),
        );
        assert_eq!(facts.access, KernelLogAccess::Denied);
        assert!(facts.xid_events.is_empty());
        let missing = parse_dmesg("sh: 1: dmesg: not found", Some(127));
        assert_eq!(missing.access, KernelLogAccess::Unavailable);
    }
}

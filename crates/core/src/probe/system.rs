//! The machine itself: OS release, kernel, hostname, and whether it is a container or a VM.
//!
//! Most rented "instances" (AutoDL and friends) are Docker containers on a shared host: that
//! decides whether Docker can run inside, whether `dmesg` is readable and why the driver cannot
//! be reinstalled from inside.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct SystemFacts {
    /// `PRETTY_NAME` from `/etc/os-release`, e.g. `Ubuntu 22.04.3 LTS`.
    pub os_name: Option<String>,
    pub os_id: Option<String>,
    pub os_version_id: Option<String>,
    pub kernel: Option<String>,
    pub arch: Option<String>,
    pub hostname: Option<String>,
    /// `docker`, `podman`, `kubernetes`, `lxc`, … when the instance is a container.
    pub container: Option<String>,
    /// `kvm`, `vmware`, `microsoft`, … when it is a virtual machine (or the host under a container).
    pub virtualization: Option<String>,
    /// What the container verdict rests on (`/.dockerenv`, `cgroup: docker`, `overlay root`).
    pub container_evidence: Vec<String>,
}

pub(crate) fn parts() -> Vec<Part> {
    vec![
        Part::new("os-release", "cat /etc/os-release"),
        Part::new("uname", "uname -r; uname -m"),
        Part::new(
            "hostname",
            "hostname 2>/dev/null || cat /proc/sys/kernel/hostname",
        ),
        Part::new(
            "container",
            r#"[ -f /.dockerenv ] && echo "marker=/.dockerenv"
[ -f /run/.containerenv ] && echo "marker=/run/.containerenv"
[ -n "$KUBERNETES_SERVICE_HOST" ] && echo "marker=kubernetes-env"
awk '$2=="/" {print "rootfs=" $3}' /proc/mounts 2>/dev/null | head -n 1
sed 's/^/cgroup=/' /proc/1/cgroup 2>/dev/null | head -n 20
if command -v systemd-detect-virt >/dev/null 2>&1; then
  echo "detect-container=$(systemd-detect-virt --container 2>/dev/null)"
  echo "detect-vm=$(systemd-detect-virt --vm 2>/dev/null)"
fi
grep -q '^flags.* hypervisor' /proc/cpuinfo 2>/dev/null && echo "cpu-flag=hypervisor"
echo "dmi=$(cat /sys/class/dmi/id/sys_vendor 2>/dev/null) $(cat /sys/class/dmi/id/product_name 2>/dev/null)"
true"#,
        ),
    ]
}

pub(crate) fn parse(parts: &HashMap<String, PartOutput>) -> SystemFacts {
    let text = |name: &str| parts.get(name).map(|p| p.text.as_str()).unwrap_or("");
    let mut facts = SystemFacts::default();
    let release = parse_os_release(text("os-release"));
    facts.os_name = release
        .get("PRETTY_NAME")
        .or_else(|| release.get("NAME"))
        .cloned();
    facts.os_id = release.get("ID").cloned();
    facts.os_version_id = release.get("VERSION_ID").cloned();
    let mut uname = text("uname")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    facts.kernel = uname.next().map(str::to_owned);
    facts.arch = uname.next().map(str::to_owned);
    facts.hostname = text("hostname")
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned);
    read_container(text("container"), &mut facts);
    facts
}

/// `KEY=value` / `KEY="value"` lines.
pub fn parse_os_release(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(key, _)| !key.trim().is_empty() && !key.trim_start().starts_with('#'))
        .map(|(key, value)| {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            (key.trim().to_owned(), unquoted.to_owned())
        })
        .collect()
}

fn read_container(text: &str, facts: &mut SystemFacts) {
    let mut kind: Option<&str> = None;
    let mut set = |candidate: &'static str, evidence: String, facts: &mut SystemFacts| {
        kind.get_or_insert(candidate);
        facts.container_evidence.push(evidence);
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim();
        match key {
            "marker" if value == "/.dockerenv" => set("docker", value.to_owned(), facts),
            "marker" if value == "/run/.containerenv" => set("podman", value.to_owned(), facts),
            "marker" if value == "kubernetes-env" => set("kubernetes", value.to_owned(), facts),
            "cgroup" => {
                let found = [
                    ("kubepods", "kubernetes"),
                    ("docker", "docker"),
                    ("lxc", "lxc"),
                    ("containerd", "containerd"),
                ]
                .into_iter()
                .find(|(needle, _)| value.contains(needle));
                if let Some((needle, name)) = found {
                    set(name, format!("cgroup: {needle}"), facts);
                }
            }
            "rootfs" if value == "overlay" => {
                set("container", "overlay root filesystem".to_owned(), facts);
            }
            "detect-container" if !value.is_empty() && value != "none" => {
                let name: &'static str = match value {
                    "docker" => "docker",
                    "podman" => "podman",
                    "lxc" | "lxc-libvirt" => "lxc",
                    "wsl" => "wsl",
                    _ => "container",
                };
                set(name, format!("systemd-detect-virt: {value}"), facts);
            }
            "detect-vm" if !value.is_empty() && value != "none" => {
                facts.virtualization = Some(value.to_owned());
            }
            "cpu-flag" if facts.virtualization.is_none() => {
                facts.virtualization = Some("hypervisor".to_owned());
            }
            "dmi" => {
                let lower = value.to_ascii_lowercase();
                let vm = [
                    ("kvm", "kvm"),
                    ("qemu", "kvm"),
                    ("vmware", "vmware"),
                    ("virtualbox", "oracle"),
                    ("microsoft", "microsoft"),
                    ("amazon ec2", "amazon"),
                    ("google", "google"),
                    ("alibaba", "alibaba"),
                ]
                .into_iter()
                .find(|(needle, _)| lower.contains(needle));
                if let Some((_, name)) = vm {
                    if facts
                        .virtualization
                        .as_deref()
                        .is_none_or(|v| v == "hypervisor")
                    {
                        facts.virtualization = Some(name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    facts.container = kind.map(str::to_owned);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(pairs: &[(&str, &str)]) -> HashMap<String, PartOutput> {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_owned(),
                    PartOutput {
                        text: (*v).to_owned(),
                        exit: Some(0),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn ubuntu_container_on_kvm_is_recognised() {
        let facts = parse(&parts_of(&[
            ("os-release", "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nPRETTY_NAME=\"Ubuntu 22.04.3 LTS\"\n"),
            ("uname", "5.15.0-91-generic\nx86_64"),
            ("hostname", "autodl-container-7f3a9b"),
            ("container", "marker=/.dockerenv\nrootfs=overlay\ncgroup=0::/\ncpu-flag=hypervisor\ndmi= "),
        ]));
        assert_eq!(facts.os_name.as_deref(), Some("Ubuntu 22.04.3 LTS"));
        assert_eq!(
            (facts.os_id.as_deref(), facts.os_version_id.as_deref()),
            (Some("ubuntu"), Some("22.04"))
        );
        assert_eq!(
            (facts.kernel.as_deref(), facts.arch.as_deref()),
            (Some("5.15.0-91-generic"), Some("x86_64"))
        );
        assert_eq!(
            facts.container.as_deref(),
            Some("docker"),
            "/.dockerenv wins over the generic overlay hint"
        );
        assert_eq!(
            facts.container_evidence,
            vec!["/.dockerenv", "overlay root filesystem"]
        );
        assert_eq!(facts.virtualization.as_deref(), Some("hypervisor"));
    }

    #[test]
    fn bare_metal_has_no_container_and_no_vm() {
        let facts = parse(&parts_of(&[
            ("container", "rootfs=ext4\ncgroup=0::/init.scope\ndetect-container=none\ndetect-vm=none\ndmi=Supermicro SYS-4029GP-TRT"),
        ]));
        assert_eq!(facts.container, None);
        assert_eq!(facts.virtualization, None);
    }

    #[test]
    fn kubernetes_cgroup_and_kvm_dmi_are_read() {
        let facts = parse(&parts_of(&[(
            "container",
            "cgroup=12:memory:/kubepods/burstable/pod1234\ndmi=QEMU Standard PC (Q35 + ICH9, 2009)",
        )]));
        assert_eq!(facts.container.as_deref(), Some("kubernetes"));
        assert_eq!(facts.virtualization.as_deref(), Some("kvm"));
    }
}

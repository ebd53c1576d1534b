//! `nvidia-smi -q -x`: the XML report (schema v11 to v13 seen in captures).
//!
//! Read with `roxmltree` (a read-only DOM, no unsafe, no dependencies): the report is small and
//! the fields we want sit at fixed paths under each `<gpu>`. Paths moved between schema
//! versions (`power_readings/power_draw` became `gpu_power_readings/instant_power_draw`), so
//! each reading lists the paths it may live at.

use roxmltree::{Document, Node, ParsingOptions};

use super::value;
use super::{GpuInfo, GpuProcess, GpuState, NvidiaSmiReport, NvidiaSmiStatus};

#[derive(Debug, thiserror::Error)]
#[error("not an nvidia-smi XML report: {0}")]
pub struct XmlError(String);

/// Parse the XML report. GPUs are numbered in document order, which is nvidia-smi's index order.
pub fn parse_xml(text: &str) -> Result<NvidiaSmiReport, XmlError> {
    let start = text
        .find("<?xml")
        .or_else(|| text.find("<nvidia_smi_log"))
        .unwrap_or(0);
    let body = &text[start..];
    let end = body
        .rfind("</nvidia_smi_log>")
        .map_or(body.len(), |at| at + "</nvidia_smi_log>".len());
    let options = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let document = Document::parse_with_options(&body[..end], options)
        .map_err(|err| XmlError(err.to_string()))?;
    let root = document.root_element();
    if root.tag_name().name() != "nvidia_smi_log" {
        return Err(XmlError(format!(
            "root element is <{}>",
            root.tag_name().name()
        )));
    }
    let mut report = NvidiaSmiReport::with_status(NvidiaSmiStatus::Ok);
    report.driver_version = text_at(root, &["driver_version"]);
    report.cuda_version = text_at(root, &["cuda_version"]);
    for (position, gpu_node) in root
        .children()
        .filter(|n| n.has_tag_name("gpu"))
        .enumerate()
    {
        let index = u32::try_from(position).unwrap_or(u32::MAX);
        report.gpus.push(gpu_from(gpu_node, index));
        report.processes.extend(processes_of(gpu_node, index));
    }
    if report.gpus.is_empty() && report.driver_version.is_none() {
        report.status = NvidiaSmiStatus::Unrecognized;
    }
    Ok(report)
}

fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| n.has_tag_name(name))
}

/// The node at a `/`-separated path of direct children.
fn at<'a, 'i>(node: Node<'a, 'i>, path: &str) -> Option<Node<'a, 'i>> {
    path.split('/').try_fold(node, child)
}

fn raw_at<'a>(node: Node<'a, '_>, paths: &[&str]) -> Option<&'a str> {
    paths
        .iter()
        .find_map(|path| at(node, path).and_then(|n| n.text()))
}

fn text_at(node: Node<'_, '_>, paths: &[&str]) -> Option<String> {
    paths
        .iter()
        .find_map(|path| at(node, path).and_then(|n| n.text()).and_then(value::text))
}

fn int_at(node: Node<'_, '_>, paths: &[&str]) -> Option<u32> {
    paths
        .iter()
        .find_map(|path| raw_at(node, &[path]).and_then(|raw| value::small(value::integer(raw))))
}

fn dec_at(node: Node<'_, '_>, paths: &[&str]) -> Option<f64> {
    paths
        .iter()
        .find_map(|path| raw_at(node, &[path]).and_then(value::decimal))
}

fn gpu_from(node: Node<'_, '_>, index: u32) -> GpuInfo {
    let mut gpu = GpuInfo {
        index,
        name: text_at(node, &["product_name"]),
        uuid: text_at(node, &["uuid"]),
        bus_id: node
            .attribute("id")
            .map(str::to_owned)
            .or_else(|| text_at(node, &["pci/pci_bus_id"])),
        memory_total_mib: int_at(node, &["fb_memory_usage/total"]),
        memory_used_mib: int_at(node, &["fb_memory_usage/used"]),
        utilization_pct: int_at(node, &["utilization/gpu_util"]),
        temperature_c: raw_at(node, &["temperature/gpu_temp"])
            .and_then(value::signed)
            .and_then(|t| i32::try_from(t).ok()),
        power_draw_w: dec_at(
            node,
            &[
                "power_readings/power_draw",
                "gpu_power_readings/power_draw",
                "gpu_power_readings/instant_power_draw",
                "gpu_power_readings/average_power_draw",
            ],
        ),
        power_limit_w: dec_at(
            node,
            &[
                "power_readings/power_limit",
                "power_readings/enforced_power_limit",
                "gpu_power_readings/current_power_limit",
                "gpu_power_readings/enforced_power_limit",
            ],
        ),
        compute_cap: None,
        pcie_gen_current: int_at(node, &["pci/pci_gpu_link_info/pcie_gen/current_link_gen"]),
        pcie_gen_max: int_at(node, &["pci/pci_gpu_link_info/pcie_gen/max_link_gen"]),
        pcie_width_current: int_at(
            node,
            &["pci/pci_gpu_link_info/link_widths/current_link_width"],
        ),
        pcie_width_max: int_at(node, &["pci/pci_gpu_link_info/link_widths/max_link_width"]),
        clock_sm_mhz: int_at(node, &["clocks/sm_clock"]),
        clock_sm_max_mhz: int_at(node, &["max_clocks/sm_clock"]),
        clock_mem_mhz: int_at(node, &["clocks/mem_clock"]),
        pstate: text_at(node, &["performance_state"]),
        ecc_uncorrected_volatile: ecc_total(node, true),
        ecc_corrected_volatile: ecc_total(node, false),
        mig_enabled: text_at(node, &["mig_mode/current_mig"]).map(|m| m == "Enabled"),
        name_truncated: false,
        state: GpuState::Ok,
        failed_fields: Vec::new(),
    };
    for leaf in node
        .descendants()
        .filter(|n| n.is_element() && !n.children().any(|c| c.is_element()))
    {
        if leaf.text().is_some_and(value::is_failure) {
            gpu.state = GpuState::Error;
            gpu.failed_fields.push(leaf.tag_name().name().to_owned());
        }
    }
    gpu
}

/// Sum of the volatile ECC counters: `single_bit/total` + … in old schemas, `*_correctable` /
/// `*_uncorrectable*` in new ones. `None` when ECC is not reported at all.
fn ecc_total(node: Node<'_, '_>, uncorrected: bool) -> Option<u64> {
    let volatile = at(node, "ecc_errors/volatile")?;
    let mut total: Option<u64> = None;
    for leaf in volatile.descendants().filter(|n| n.is_element()) {
        let name = leaf.tag_name().name();
        let parent = leaf.parent().map(|p| p.tag_name().name()).unwrap_or("");
        let counts = if uncorrected {
            name.contains("uncorrectable") || (parent == "double_bit" && name == "total")
        } else {
            (name.ends_with("_correctable") && !name.contains("uncorrectable"))
                || (parent == "single_bit" && name == "total")
        };
        if counts {
            if let Some(n) = leaf.text().and_then(value::integer) {
                total = Some(total.unwrap_or(0).saturating_add(n));
            }
        }
    }
    total
}

fn processes_of(node: Node<'_, '_>, index: u32) -> Vec<GpuProcess> {
    let Some(list) = child(node, "processes") else {
        return Vec::new();
    };
    list.children()
        .filter(|n| n.has_tag_name("process_info"))
        .filter_map(|info| {
            Some(GpuProcess {
                gpu_index: Some(index),
                gpu_uuid: text_at(node, &["uuid"]),
                gpu_bus_id: node.attribute("id").map(str::to_owned),
                pid: int_at(info, &["pid"])?,
                name: text_at(info, &["process_name"]).unwrap_or_default(),
                kind: text_at(info, &["type"]),
                used_memory_mib: int_at(info, &["used_memory"]),
            })
        })
        .collect()
}

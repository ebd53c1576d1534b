//! Every captured fixture parses to the values read off the capture by hand.

use super::*;

mod csv;
mod errors;
mod tables;
mod xml;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/nvidia-smi")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("fixture {}: {err}", path.display()))
}

/// What a test expects of one GPU; `None` fields are not checked.
struct Expect {
    index: u32,
    name: &'static str,
    total: Option<u32>,
    used: Option<u32>,
    util: Option<u32>,
    temp: Option<i32>,
    draw: Option<f64>,
    limit: Option<f64>,
    state: GpuState,
}

fn check_gpu(file: &str, gpu: &GpuInfo, want: &Expect) {
    assert_eq!(gpu.index, want.index, "{file}: index");
    assert_eq!(
        gpu.name.as_deref(),
        Some(want.name),
        "{file}: name of GPU {}",
        want.index
    );
    assert_eq!(gpu.memory_total_mib, want.total, "{file}: memory.total");
    assert_eq!(gpu.memory_used_mib, want.used, "{file}: memory.used");
    assert_eq!(gpu.utilization_pct, want.util, "{file}: utilization");
    assert_eq!(gpu.temperature_c, want.temp, "{file}: temperature");
    assert_eq!(gpu.power_draw_w, want.draw, "{file}: power draw");
    assert_eq!(gpu.power_limit_w, want.limit, "{file}: power limit");
    assert_eq!(
        gpu.state, want.state,
        "{file}: state ({:?})",
        gpu.failed_fields
    );
}

#[allow(clippy::too_many_arguments)]
fn ok(
    index: u32,
    name: &'static str,
    total: u32,
    used: u32,
    util: Option<u32>,
    temp: i32,
    draw: f64,
    limit: f64,
) -> Expect {
    Expect {
        index,
        name,
        total: Some(total),
        used: Some(used),
        util,
        temp: Some(temp),
        draw: Some(draw),
        limit: Some(limit),
        state: GpuState::Ok,
    }
}

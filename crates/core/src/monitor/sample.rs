//! What one look at the GPUs yields (the events the sampler hands on are in `event`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Why the clocks are held back, from the driver's "clocks event reasons" bitmask (called
/// "clocks throttle reasons" before driver 535). `GpuIdle` is left out: an idle card slowing
/// down is not a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ThrottleReason {
    /// Software power cap: the card draws as much power as it is allowed.
    PowerCap,
    /// Hardware slowdown (heat or the power supply), clocks halved or worse.
    HwSlowdown,
    HwThermal,
    HwPowerBrake,
    /// The driver holds clocks down because the card is too hot.
    SwThermal,
    /// Application clocks set lower than the card can do.
    AppClocks,
    SyncBoost,
}

impl ThrottleReason {
    /// NVML's `nvmlClocksEventReason*` bits (nvml.h), the same numbers nvidia-smi prints in hex.
    const BITS: [(u64, Self); 7] = [
        (0x2, Self::AppClocks),
        (0x4, Self::PowerCap),
        (0x8, Self::HwSlowdown),
        (0x10, Self::SyncBoost),
        (0x20, Self::SwThermal),
        (0x40, Self::HwThermal),
        (0x80, Self::HwPowerBrake),
    ];

    /// The active reasons in a bitmask.
    pub fn from_mask(mask: u64) -> Vec<Self> {
        Self::BITS
            .iter()
            .filter(|(bit, _)| mask & bit != 0)
            .map(|(_, reason)| *reason)
            .collect()
    }

    /// Heat, as opposed to power or settings.
    pub fn is_thermal(self) -> bool {
        matches!(self, Self::HwThermal | Self::SwThermal)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::PowerCap => "power_cap",
            Self::HwSlowdown => "hw_slowdown",
            Self::HwThermal => "hw_thermal",
            Self::HwPowerBrake => "hw_power_brake",
            Self::SwThermal => "sw_thermal",
            Self::AppClocks => "app_clocks",
            Self::SyncBoost => "sync_boost",
        }
    }
}

/// One GPU at one moment. Every reading is optional: a card may answer `[N/A]` or
/// `[Not Supported]` for any of them (MIG, consumer cards, a failing GPU), and nothing is made up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct GpuReading {
    pub index: u32,
    pub uuid: Option<String>,
    pub utilization_pct: Option<u32>,
    #[ts(type = "number | null")]
    pub memory_used_mib: Option<u64>,
    #[ts(type = "number | null")]
    pub memory_total_mib: Option<u64>,
    pub temperature_c: Option<u32>,
    pub power_draw_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub sm_clock_mhz: Option<u32>,
    /// Active clock limits; empty when the driver does not report them.
    pub throttle: Vec<ThrottleReason>,
    /// PCIe throughput (NVML on this computer only: `nvidia-smi --query-gpu` has no such field).
    #[ts(type = "number | null")]
    pub pcie_rx_kib_s: Option<u64>,
    #[ts(type = "number | null")]
    pub pcie_tx_kib_s: Option<u64>,
}

impl GpuReading {
    pub fn new(index: u32) -> Self {
        Self {
            index,
            uuid: None,
            utilization_pct: None,
            memory_used_mib: None,
            memory_total_mib: None,
            temperature_c: None,
            power_draw_w: None,
            power_limit_w: None,
            sm_clock_mhz: None,
            throttle: Vec::new(),
            pcie_rx_kib_s: None,
            pcie_tx_kib_s: None,
        }
    }

    /// Used memory as a fraction of the total, when both are known.
    pub fn memory_fraction(&self) -> Option<f64> {
        match (self.memory_used_mib, self.memory_total_mib) {
            (Some(used), Some(total)) if total > 0 => Some(used as f64 / total as f64),
            _ => None,
        }
    }
}

/// Every GPU of the machine at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Sample {
    pub at: DateTime<Utc>,
    pub gpus: Vec<GpuReading>,
}

/// A process using a GPU for compute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ComputeProcess {
    /// The GPU's index, matched from its UUID; `None` when the UUID is not among the GPUs.
    pub gpu_index: Option<u32>,
    pub gpu_uuid: String,
    pub pid: u32,
    /// As the instance names it (untrusted text, shown only).
    pub name: String,
    #[ts(type = "number | null")]
    pub used_memory_mib: Option<u64>,
}

/// The compute processes at one moment (empty: none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProcessList {
    pub at: DateTime<Utc>,
    pub processes: Vec<ComputeProcess>,
}

/// Why the series has a hole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum GapReason {
    /// `nvidia-smi` stopped printing without ending (a hung driver, a frozen link).
    Stalled,
    /// The stream ended (the process was killed, the link dropped).
    Ended,
    /// The stream could not be started again yet.
    Unreachable,
}

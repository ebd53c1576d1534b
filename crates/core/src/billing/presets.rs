//! Provider presets: starting values for the rule fields that follow from how a provider bills,
//! never prices. Prices change weekly and differ per GPU and region; the user types the one they
//! see. Every pre-filled field stays editable, and the values are the providers' published
//! behaviour as we understand it — the form tells the user to check them on the provider's page.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::rules::{BillingStart, Granularity};
use super::BillingError;

/// The providers the seeds and our users name, plus `custom` for everything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ProviderKey {
    Autodl,
    /// 恒源云
    Hengyuan,
    /// 酷虎云
    Kuhu,
    Runpod,
    Vast,
    Lambda,
    Custom,
}

impl ProviderKey {
    pub const ALL: [Self; 7] = [
        Self::Autodl,
        Self::Hengyuan,
        Self::Kuhu,
        Self::Runpod,
        Self::Vast,
        Self::Lambda,
        Self::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Autodl => "autodl",
            Self::Hengyuan => "hengyuan",
            Self::Kuhu => "kuhu",
            Self::Runpod => "runpod",
            Self::Vast => "vast",
            Self::Lambda => "lambda",
            Self::Custom => "custom",
        }
    }

    /// Accepts the key, and the names people type (`AutoDL`, `恒源云`, `vast.ai`).
    pub fn parse(text: &str) -> Result<Self, BillingError> {
        let key = text.trim().to_lowercase().replace([' ', '-', '_'], "");
        let found = match key.as_str() {
            "autodl" => Self::Autodl,
            "hengyuan" | "hengyuanyun" | "gpushare" | "恒源云" => Self::Hengyuan,
            "kuhu" | "kuhuyun" | "酷虎云" => Self::Kuhu,
            "runpod" => Self::Runpod,
            "vast" | "vastai" | "vast.ai" => Self::Vast,
            "lambda" | "lambdalabs" | "lambdacloud" => Self::Lambda,
            "custom" | "other" | "" => Self::Custom,
            _ => {
                return Err(BillingError::UnknownProvider {
                    key: text.to_owned(),
                })
            }
        };
        Ok(found)
    }

    pub fn preset(self) -> ProviderPreset {
        let preset = |display_name: &str,
                      billing_starts,
                      stopped_billing_kind: &str,
                      granularity,
                      wipe_after_stopped_days,
                      no_gpu_mode| ProviderPreset {
            key: self,
            display_name: display_name.to_owned(),
            billing_starts,
            stopped_billing_kind: stopped_billing_kind.to_owned(),
            granularity,
            wipe_after_stopped_days,
            no_gpu_mode,
        };
        use BillingStart::{Created, Running};
        use Granularity::{Hour, Minute, Second};
        match self {
            // Pay-as-you-go bills from power-on, a stopped instance costs no GPU time, it is
            // wiped after 15 days stopped, and it can power on without GPU (无卡模式).
            Self::Autodl => preset("AutoDL", Running, "none", Second, Some(15), true),
            Self::Hengyuan => preset("恒源云", Running, "none", Second, None, false),
            // The seed guide describes it as billed by the hour.
            Self::Kuhu => preset("酷虎云", Created, "none", Hour, None, false),
            // Stopped pods keep paying for their volume disk.
            Self::Runpod => preset("RunPod", Created, "storage", Second, None, false),
            Self::Vast => preset("Vast.ai", Created, "storage", Second, None, false),
            // Instances cannot be stopped, only terminated; billed in one-minute increments.
            Self::Lambda => preset("Lambda", Created, "none", Minute, None, false),
            Self::Custom => preset("Custom", Created, "none", Second, None, false),
        }
    }
}

/// Rule fields a provider preset fills in. No prices: the user types what they see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ProviderPreset {
    pub key: ProviderKey,
    pub display_name: String,
    pub billing_starts: BillingStart,
    /// `none`, `storage` or `rate`: which stopped-billing rule applies; its rate is the user's.
    pub stopped_billing_kind: String,
    pub granularity: Granularity,
    pub wipe_after_stopped_days: Option<u32>,
    /// Whether the provider offers a no-GPU power-on mode (its rate is the user's).
    pub no_gpu_mode: bool,
}

/// Every preset, `custom` last.
pub fn presets() -> Vec<ProviderPreset> {
    ProviderKey::ALL.iter().map(|k| k.preset()).collect()
}

//! Provider presets: starting values for the rule fields that follow from how a provider bills,
//! never prices. Prices change weekly and differ per GPU and region; the user types the one they
//! see. Every pre-filled field stays editable, and the values are the providers' published
//! behaviour as we understand it — the form tells the user to check them on the provider's page.
//!
//! Each preset also says what kind of machine the provider rents ([`MachineKind`]): a container
//! on a shared host (AutoDL and the other GPU-rental platforms) or a virtual machine billed until
//! it is released (the big clouds' GPU servers). Diagnosis uses it next to what the probe sees:
//! Docker and the NVIDIA Container Toolkit can run in a VM, never inside a container.
//!
//! Where each fact comes from is in [`ProviderPreset::source`]: a public page of the provider,
//! or `None` when the values are our best reading (of the seed guides, or of how the provider is
//! commonly described) and not checked against the provider's own documentation.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::rules::{BillingStart, Granularity};
use super::BillingError;

/// What a provider rents out, as far as Docker is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum MachineKind {
    /// A container on a shared host: no Docker daemon, no NVIDIA Container Toolkit inside.
    Container,
    /// A virtual machine of its own: Docker and the NVIDIA Container Toolkit can be installed.
    VirtualMachine,
}

/// The providers the seeds and our users name, plus `custom` for everything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ProviderKey {
    /// 并行计算云 (seed 004 ranks it first for newcomers).
    Bingxing,
    Autodl,
    /// 恒源云
    Hengyuan,
    /// 酷虎云
    Kuhu,
    Runpod,
    Vast,
    Lambda,
    /// 阿里云 GPU 云服务器 (ECS)
    Aliyun,
    /// 腾讯云 GPU 云服务器 (CVM)
    Tencent,
    /// 华为云 GPU 加速型弹性云服务器 (ECS)
    Huawei,
    /// Amazon EC2 GPU instances
    Aws,
    /// Google Compute Engine with GPUs
    Gcp,
    Custom,
}

impl ProviderKey {
    pub const ALL: [Self; 13] = [
        Self::Bingxing,
        Self::Autodl,
        Self::Hengyuan,
        Self::Kuhu,
        Self::Runpod,
        Self::Vast,
        Self::Lambda,
        Self::Aliyun,
        Self::Tencent,
        Self::Huawei,
        Self::Aws,
        Self::Gcp,
        Self::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bingxing => "bingxing",
            Self::Autodl => "autodl",
            Self::Hengyuan => "hengyuan",
            Self::Kuhu => "kuhu",
            Self::Runpod => "runpod",
            Self::Vast => "vast",
            Self::Lambda => "lambda",
            Self::Aliyun => "aliyun",
            Self::Tencent => "tencent",
            Self::Huawei => "huawei",
            Self::Aws => "aws",
            Self::Gcp => "gcp",
            Self::Custom => "custom",
        }
    }

    /// Accepts the key, and the names people type (`AutoDL`, `恒源云`, `vast.ai`, `阿里云`).
    pub fn parse(text: &str) -> Result<Self, BillingError> {
        let key = text.trim().to_lowercase().replace([' ', '-', '_'], "");
        let found = match key.as_str() {
            "bingxing" | "并行计算云" | "并行计算云平台" | "并行智算云" => {
                Self::Bingxing
            }
            "autodl" => Self::Autodl,
            "hengyuan" | "hengyuanyun" | "gpushare" | "恒源云" => Self::Hengyuan,
            "kuhu" | "kuhuyun" | "酷虎云" => Self::Kuhu,
            "runpod" => Self::Runpod,
            "vast" | "vastai" | "vast.ai" => Self::Vast,
            "lambda" | "lambdalabs" | "lambdacloud" => Self::Lambda,
            "aliyun" | "alibabacloud" | "alibaba" | "阿里云" => Self::Aliyun,
            "tencent" | "tencentcloud" | "qcloud" | "腾讯云" => Self::Tencent,
            "huawei" | "huaweicloud" | "华为云" => Self::Huawei,
            "aws" | "ec2" | "amazon" | "amazonec2" => Self::Aws,
            "gcp" | "googlecloud" | "gce" | "computeengine" => Self::Gcp,
            "custom" | "other" | "" => Self::Custom,
            _ => {
                return Err(BillingError::UnknownProvider {
                    key: text.to_owned(),
                })
            }
        };
        Ok(found)
    }

    /// The currency the provider bills in: US dollars for the international platforms and
    /// clouds, yuan for the Chinese ones (and for `custom`, whose users mostly rent there).
    pub fn currency(self) -> &'static str {
        match self {
            Self::Runpod | Self::Vast | Self::Lambda | Self::Aws | Self::Gcp => "USD",
            Self::Bingxing
            | Self::Autodl
            | Self::Hengyuan
            | Self::Kuhu
            | Self::Aliyun
            | Self::Tencent
            | Self::Huawei
            | Self::Custom => "CNY",
        }
    }

    /// How the provider names a region, as New rental's example: AutoDL's zones, RunPod's data
    /// centre ids, the clouds' region codes. `None` where we have not seen how the provider
    /// writes them (the form then shows a neutral example).
    pub fn region_example(self) -> Option<&'static str> {
        match self {
            Self::Autodl => Some("西北B区"),
            Self::Runpod => Some("EU-RO-1"),
            Self::Vast => Some("Sweden, SE"),
            Self::Lambda | Self::Aws => Some("us-east-1"),
            Self::Aliyun => Some("cn-beijing"),
            Self::Tencent => Some("ap-guangzhou"),
            Self::Huawei => Some("cn-north-4"),
            Self::Gcp => Some("us-central1-a"),
            Self::Bingxing | Self::Hengyuan | Self::Kuhu | Self::Custom => None,
        }
    }

    pub fn preset(self) -> ProviderPreset {
        let preset = |display_name: &str,
                      billing_starts,
                      stopped_billing_kind: &str,
                      granularity,
                      wipe_after_stopped_days,
                      no_gpu_mode,
                      machine,
                      source: Option<&str>| ProviderPreset {
            key: self,
            display_name: display_name.to_owned(),
            billing_starts,
            stopped_billing_kind: stopped_billing_kind.to_owned(),
            granularity,
            wipe_after_stopped_days,
            no_gpu_mode,
            machine,
            source: source.map(str::to_owned),
            currency: self.currency().to_owned(),
            region_example: self.region_example().map(str::to_owned),
        };
        use BillingStart::{Created, Running};
        use Granularity::{Hour, Minute, Second};
        use MachineKind::{Container, VirtualMachine};
        match self {
            // Seed 004 §1.1: first choice for newcomers, driver and CUDA preinstalled. It says
            // nothing of how it bills or what it rents, and we found no page of the provider:
            // a neutral starting point, the machine kind left to the probe.
            Self::Bingxing => preset("并行计算云", Created, "none", Second, None, false, None, None),
            // Pay-as-you-go bills from power-on, a stopped instance costs no GPU time, it is
            // wiped after 15 days stopped, and it can power on without GPU (无卡模式). Instances
            // are Docker containers on a shared host (our reading; what the probe usually sees).
            Self::Autodl => preset("AutoDL", Running, "none", Second, Some(15), true, Some(Container), None),
            Self::Hengyuan => preset("恒源云", Running, "none", Second, None, false, Some(Container), None),
            // Seed 000 describes it as billed by the hour; what it rents is not said.
            Self::Kuhu => preset("酷虎云", Created, "none", Hour, None, false, None, None),
            // Stopped pods keep paying for their volume disk; a pod is a container.
            Self::Runpod => preset("RunPod", Created, "storage", Second, None, false, Some(Container), None),
            // Ordinary Vast.ai instances are Docker containers (a few hosts also rent VMs).
            Self::Vast => preset("Vast.ai", Created, "storage", Second, None, false, Some(Container), None),
            // Instances cannot be stopped, only terminated; billed in one-minute increments;
            // each instance is a virtual machine.
            Self::Lambda => preset("Lambda", Created, "none", Minute, None, false, Some(VirtualMachine), None),
            // GPU servers bill like ECS: pay-as-you-go from creation, per second, until released.
            // A plain stop keeps billing the instance; only the "economical mode" stop
            // (节省停机模式) stops the compute charge, disks and IP still bill.
            Self::Aliyun => preset(
                "阿里云",
                Created,
                "rate",
                Second,
                None,
                false,
                Some(VirtualMachine),
                Some("https://help.aliyun.com/document_detail/163808.html"),
            ),
            // GPU CVMs support "no charge when shut down" (关机不收费) for pay-as-you-go
            // instances: compute stops billing, cloud disks keep billing.
            Self::Tencent => preset(
                "腾讯云",
                Created,
                "storage",
                Second,
                None,
                false,
                Some(VirtualMachine),
                Some("https://cloud.tencent.com/document/product/560/8025"),
            ),
            // Pay-per-use, per second, from creation to deletion; an ordinary stopped instance
            // (GPU ones included) stops billing vCPU, memory and GPU, disks and EIP bill on.
            // Instances with local disks or FPGAs, and bare metal, keep billing when stopped.
            Self::Huawei => preset(
                "华为云",
                Created,
                "storage",
                Second,
                None,
                false,
                Some(VirtualMachine),
                Some("https://support.huaweicloud.com/price-ecs/ecs_01_0000.html"),
            ),
            // A stopped instance is not billed for instance usage, its EBS volumes are; per
            // second with a one-minute minimum at each start (the minimum is not modelled).
            Self::Aws => preset(
                "AWS",
                Created,
                "storage",
                Second,
                None,
                false,
                Some(VirtualMachine),
                Some("https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StartInstances.html"),
            ),
            // A stopped VM incurs no VM usage charges; persistent disks and static IPs do.
            Self::Gcp => preset(
                "Google Cloud",
                Created,
                "storage",
                Second,
                None,
                false,
                Some(VirtualMachine),
                Some("https://cloud.google.com/compute/docs/reference/rest/v1/instances/stop"),
            ),
            Self::Custom => preset("Custom", Created, "none", Second, None, false, None, None),
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
    /// A container or a virtual machine; `null` when the provider rents either or we do not
    /// know (the probe decides alone then).
    pub machine: Option<MachineKind>,
    /// The provider's public page these values were read from; `null` when they are our best
    /// reading and the user should check them on the provider's page.
    pub source: Option<String>,
    /// The currency the provider bills in (ISO 4217): what New rental starts with.
    pub currency: String,
    /// A region written the way this provider writes them, for the form's example.
    pub region_example: Option<String>,
}

/// Every preset, `custom` last.
pub fn presets() -> Vec<ProviderPreset> {
    ProviderKey::ALL.iter().map(|k| k.preset()).collect()
}

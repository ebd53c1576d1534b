//! How each provider's instance is powered off for real: the command to run on the instance over
//! SSH (what the watchdog and "Stop now" run), and the provider API that can stop it from here.
//!
//! An inherent method of the presets' [`ProviderKey`], kept with Stop, the one module that powers
//! instances off. A `shutdown` inside a container does not stop billing on most GPU-rental
//! platforms, so each entry says what actually stops the meter.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::account::Provider;
use crate::billing::ProviderKey;

/// How to power one provider's instance off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PowerOff {
    pub provider: ProviderKey,
    /// The command to run on the instance; `null` when powering off from inside does not stop
    /// the billing (use the API, or the provider's console).
    pub command: Option<String>,
    /// The provider whose API stops the instance from this computer with a saved id and key,
    /// when it has one (a linked provider account can power more).
    pub api: Option<Provider>,
    /// Where the command or API comes from; `null` when it is our best reading.
    pub source: Option<String>,
}

/// The command a Linux machine powers off with when nothing better is known.
pub const GENERIC_POWER_OFF: &str = "shutdown -h now";

impl ProviderKey {
    /// How to power this provider's instance off (see [`PowerOff`]).
    pub fn power_off(self) -> PowerOff {
        let entry = |command: Option<&str>, api: Option<Provider>, source: Option<&str>| PowerOff {
            provider: self,
            command: command.map(str::to_owned),
            api,
            source: source.map(str::to_owned),
        };
        match self {
            // AutoDL containers have a `shutdown` of the platform's own that stops the instance
            // (what the community idle guards call); no public API for renters.
            Self::Autodl => entry(Some("/usr/bin/shutdown"), None, None),
            // A pod stops itself with the preinstalled runpodctl and its own id.
            Self::Runpod => entry(
                Some("runpodctl stop pod \"$RUNPOD_POD_ID\""),
                Some(Provider::Runpod),
                Some("https://docs.runpod.io/api-reference/pods/POST/pods/podId/stop"),
            ),
            // A `shutdown` inside a Vast.ai container does not stop the contract: use the API.
            Self::Vast => entry(
                None,
                Some(Provider::Vast),
                Some("https://docs.vast.ai/api-reference/instances/manage-instance"),
            ),
            // Lambda instances cannot be stopped, only terminated in the console: powering the
            // OS off does not end the billing.
            Self::Lambda => entry(None, None, None),
            // Virtual machines stop when their OS powers off (the stopped-billing rule of the
            // preset says what still bills); other platforms: the generic command.
            Self::Bingxing
            | Self::Hengyuan
            | Self::Kuhu
            | Self::Aliyun
            | Self::Tencent
            | Self::Huawei
            | Self::Aws
            | Self::Gcp
            | Self::Custom => entry(Some(GENERIC_POWER_OFF), None, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::Provider;

    #[test]
    fn autodl_powers_off_with_its_own_shutdown_and_vast_only_through_the_api() {
        assert_eq!(
            ProviderKey::Autodl.power_off().command.as_deref(),
            Some("/usr/bin/shutdown"),
            "the community guards call AutoDL's /usr/bin/shutdown"
        );
        let vast = ProviderKey::Vast.power_off();
        assert_eq!(
            vast.command, None,
            "a shutdown inside Vast does not stop billing"
        );
        assert_eq!(vast.api, Some(Provider::Vast));
        assert_eq!(ProviderKey::Runpod.power_off().api, Some(Provider::Runpod));
        assert_eq!(
            ProviderKey::Custom.power_off().command.as_deref(),
            Some(GENERIC_POWER_OFF)
        );
    }
}

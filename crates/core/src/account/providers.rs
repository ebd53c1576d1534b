//! What tells the providers apart, one row each: names, the ledger preset, currency, how the
//! API authenticates, which power verbs it offers, how it bills, its console and base URL,
//! whether its listing is complete and its ids numeric, where its market offers come from.
//!
//! Adding a provider touches its client file (`account/<provider>.rs`, dispatched in
//! `client.rs`), its row here and its variant in [`Provider`] (and `Provider::ALL`), its stand-in
//! in `tests/provider-standin`, and its two texts (`accounts.providers.<key>` in the UI's
//! locales). Where the market reads its offers or rents from it, its catalog request and
//! parser (`market::snapshot::read_catalog`, `market/parse.rs`) and its create call
//! (`market::rent`) are its arms there. `Endpoints` needs nothing. Every other rule that differs
//! reads a field of its row; no `match` on the provider has a wildcard arm, so the compiler lists
//! each place to fill.

use super::remote::PowerVerb;
use super::Provider;
use crate::billing::ProviderKey;

/// How the API expects the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer KEY`.
    Bearer,
    /// `Authorization: KEY` (AutoDL's documented header).
    Bare,
}

/// What the API says about money, which decides how a reconcile compares the bill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charges {
    /// Billing records per instance and day (RunPod `/v2/billing/pods`, Vast.ai charges).
    PerInstance,
    /// Only the account's total spend (AutoDL's wallet `accumulate`).
    AccountTotal,
    /// Nothing (Lambda).
    None,
}

/// Where the market's offers of a provider come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offers {
    /// A public search anyone may run (Vast.ai's bundles).
    Public,
    /// The catalog, read with the account's key (RunPod, Lambda): none without an account.
    WithAccountKey,
    /// No published prices: the user's own last rentals there stand in (AutoDL).
    YourLastPrices,
}

/// One provider, described once.
#[derive(Debug)]
pub struct ProviderRow {
    /// The stable key: CLI arguments, JSON, the UI's text keys.
    pub key: &'static str,
    pub display: &'static str,
    /// The ledger's provider preset of its instances.
    pub preset: ProviderKey,
    /// What its prices and charges are in.
    pub currency: &'static str,
    pub key_header: KeyHeader,
    /// The power changes its API offers at all (Lambda has no stop).
    pub verbs: &'static [PowerVerb],
    pub charges: Charges,
    /// Its console, for what the API cannot do.
    pub console: &'static str,
    pub default_base: &'static str,
    /// The variable that points its API elsewhere (a proxy, a test's stand-in).
    pub base_var: &'static str,
    /// Whether its instance listing holds every instance (AutoDL's holds Pro API ones only).
    pub lists_everything: bool,
    /// Whether its instance ids are numbers (Vast.ai): anything else is refused before a URL.
    pub numeric_ids: bool,
    pub offers: Offers,
}

const ALL_VERBS: &[PowerVerb] = &[PowerVerb::On, PowerVerb::Off, PowerVerb::Release];

pub const RUNPOD: ProviderRow = ProviderRow {
    key: "runpod",
    display: "RunPod",
    preset: ProviderKey::Runpod,
    currency: "USD",
    key_header: KeyHeader::Bearer,
    verbs: ALL_VERBS,
    charges: Charges::PerInstance,
    console: "https://console.runpod.io/pods",
    default_base: "https://api.runpod.io",
    base_var: "LEASEHOLD_RUNPOD_API_URL",
    lists_everything: true,
    numeric_ids: false,
    offers: Offers::WithAccountKey,
};

pub const VAST: ProviderRow = ProviderRow {
    key: "vast",
    display: "Vast.ai",
    preset: ProviderKey::Vast,
    currency: "USD",
    key_header: KeyHeader::Bearer,
    verbs: ALL_VERBS,
    charges: Charges::PerInstance,
    console: "https://cloud.vast.ai/instances/",
    default_base: "https://console.vast.ai",
    base_var: "LEASEHOLD_VAST_API_URL",
    lists_everything: true,
    numeric_ids: true,
    offers: Offers::Public,
};

pub const LAMBDA: ProviderRow = ProviderRow {
    key: "lambda",
    display: "Lambda",
    preset: ProviderKey::Lambda,
    currency: "USD",
    key_header: KeyHeader::Bearer,
    verbs: &[PowerVerb::Release],
    charges: Charges::None,
    console: "https://cloud.lambda.ai/instances",
    default_base: "https://cloud.lambda.ai",
    base_var: "LEASEHOLD_LAMBDA_API_URL",
    lists_everything: true,
    numeric_ids: false,
    offers: Offers::WithAccountKey,
};

pub const AUTODL: ProviderRow = ProviderRow {
    key: "autodl",
    display: "AutoDL",
    preset: ProviderKey::Autodl,
    currency: "CNY",
    key_header: KeyHeader::Bare,
    verbs: ALL_VERBS,
    charges: Charges::AccountTotal,
    console: "https://www.autodl.com/console/instance/list",
    default_base: "https://api.autodl.com",
    base_var: "LEASEHOLD_AUTODL_API_URL",
    lists_everything: false,
    numeric_ids: false,
    offers: Offers::YourLastPrices,
};

impl Provider {
    /// Its row: the one `match` on the provider outside the client dispatch.
    pub const fn row(self) -> &'static ProviderRow {
        match self {
            Self::Runpod => &RUNPOD,
            Self::Vast => &VAST,
            Self::Lambda => &LAMBDA,
            Self::Autodl => &AUTODL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The providers as a list for the UI (`ui/src/lib/bindings/providers.ts`): ts-rs exports
    /// the `Provider` type, not its values. Regenerated with the other bindings, checked by
    /// `make bindings-check`.
    #[test]
    fn export_bindings_provider_list() {
        let dir = std::env::var("TS_RS_EXPORT_DIR").expect("set in .cargo/config.toml");
        let keys: Vec<String> = Provider::ALL
            .iter()
            .map(|p| format!("'{}'", p.as_str()))
            .collect();
        let text = format!(
            "// Generated from crates/core/src/account/providers.rs (`make bindings`). Do not edit.\n\n\
             import type {{ Provider }} from './Provider'\n\n\
             /** Every provider whose API Leasehold syncs, in the order the screens list them. */\n\
             export const PROVIDERS: readonly Provider[] = [{}]\n",
            keys.join(", ")
        );
        std::fs::create_dir_all(&dir).expect("bindings folder");
        std::fs::write(std::path::Path::new(&dir).join("providers.ts"), text)
            .expect("writes providers.ts");
    }

    #[test]
    fn every_row_is_its_own_and_distinct() {
        let rows: Vec<&ProviderRow> = Provider::ALL.iter().map(|p| p.row()).collect();
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(Provider::ALL[i].as_str(), row.key);
            assert!(
                row.base_var.contains(&row.key.to_ascii_uppercase()),
                "{}",
                row.key
            );
            assert!(row.default_base.starts_with("https://"), "{}", row.key);
            assert!(row.verbs.contains(&PowerVerb::Release), "{}", row.key);
            for other in &rows[i + 1..] {
                assert_ne!(row.key, other.key);
                assert_ne!(row.preset, other.preset);
                assert_ne!(row.base_var, other.base_var);
            }
        }
    }
}

//! What the tray says of the keeper: each hunt under way, a hunt's success for a while after
//! it (the instance's line reads "your 4090 is on — billing … since 14:03"), and each stopped
//! instance a hunt could power on through its linked account, so one can start from the tray.

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;

use crate::account::{link_of, PowerVerb};
use crate::billing::{ledger, InstanceState};
use crate::store::Store;

use super::KeeperError;

/// How long after a hunt's success the tray still says so.
pub const SUCCESS_SHOWN_FOR: Duration = Duration::hours(2);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrayKeep {
    /// A hunt asks the provider again and again; `tries` so far.
    Hunting { instance: String, tries: u32 },
    /// A hunt powered it on at `since`; it bills `price_per_hour` now.
    On {
        instance: String,
        gpu_model: String,
        since: DateTime<Utc>,
        price_per_hour: Decimal,
        currency: String,
    },
    /// Stopped, linked to an account that can power it on: a hunt can start from the tray.
    CanHunt { instance: String },
}

/// The keeper's lines for the tray at `now`, in the ledger's order.
pub async fn entries(store: &Store, now: DateTime<Utc>) -> Result<Vec<TrayKeep>, KeeperError> {
    let summaries = ledger::list(store, now).await?;
    let kept = super::list(store, now).await?;
    let mut lines = Vec::new();
    for row in kept {
        let Some(summary) = summaries.iter().find(|s| s.name == row.instance) else {
            continue;
        };
        let hunt = row.hunt.as_ref();
        match (row.state, hunt.map(|h| h.state.as_str())) {
            (_, Some("hunting")) => lines.push(TrayKeep::Hunting {
                instance: row.instance,
                tries: hunt.map_or(0, |h| h.report.tries),
            }),
            (Some(InstanceState::Running), Some("on")) => {
                let since = hunt.and_then(|h| h.report.powered_on_at);
                if let Some(since) = since.filter(|at| now - *at <= SUCCESS_SHOWN_FOR) {
                    lines.push(TrayKeep::On {
                        instance: row.instance,
                        gpu_model: summary.gpu_model.clone(),
                        since,
                        price_per_hour: summary.burn_rate_per_hour,
                        currency: summary.currency.code().to_owned(),
                    });
                }
            }
            (Some(InstanceState::Stopped), _) => {
                // A link that cannot be read only leaves the line out.
                let can_power_on = link_of(store, &row.instance)
                    .await
                    .ok()
                    .flatten()
                    .is_some_and(|link| link.verbs.contains(&PowerVerb::On));
                if can_power_on {
                    lines.push(TrayKeep::CanHunt {
                        instance: row.instance,
                    });
                }
            }
            _ => {}
        }
    }
    Ok(lines)
}

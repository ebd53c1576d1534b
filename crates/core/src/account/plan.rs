//! The pure half of a sync: from the provider's listing, the direct looks at what it left out,
//! what the last sync saw and the ledger, to the changes to write — each one tied to its
//! instance, so one instance whose change cannot be written is skipped with a warning and the
//! others are recorded.
//!
//! What no single answer decides: an instance the listing leaves out is released only when a
//! direct look at its id says so (and then dated when it was first missed); a listing that drops
//! more than half of the linked instances at once, or that does not say it is complete, releases
//! nothing; a price 3× or more away from the rules is held for the renter; a price in another
//! currency never enters the rules; nothing is written after a release.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::client::Look;
use super::remote::{name_key, Listing, RemoteInstance, RemoteState, SshEndpoint};
use super::Provider;
use crate::billing::events::{EventKind, LedgerEvent};
use crate::billing::{BillingRules, InstanceState, NewInstance, StoppedBilling};

/// What the ledger and the last sync know of one linked instance.
#[derive(Debug, Clone)]
pub struct Known {
    pub instance_id: i64,
    pub name: String,
    pub remote_id: String,
    pub link_state: Option<RemoteState>,
    pub seen_at: DateTime<Utc>,
    pub ledger_state: Option<InstanceState>,
    pub last_event_at: Option<DateTime<Utc>>,
    pub rules: BillingRules,
    /// The rental's currency (ISO code).
    pub currency: String,
    pub saved_ssh: Option<SshEndpoint>,
    /// The first sync that missed it in the listing, if it is missing.
    pub missing_since: Option<DateTime<Utc>>,
    /// A price change held from an earlier sync.
    pub held: Option<Held>,
    /// The provider's own price in another currency, as the last sync kept it.
    pub provider_price: Option<(Decimal, String)>,
}

/// A provider price change held until the renter accepts it: the whole instance per hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub price_per_hour: Decimal,
    pub gpu_count: u32,
    pub currency: String,
    pub since: DateTime<Utc>,
}

/// What the sync keeps on a link beside the provider's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFacts {
    pub missing_since: Option<DateTime<Utc>>,
    pub held: Option<Held>,
    pub provider_price: Option<(Decimal, String)>,
    /// Set on import only (`None` leaves what is kept).
    pub import_warning: Option<String>,
}

/// A change to write.
#[derive(Debug, Clone)]
pub enum Change {
    Import {
        remote: usize,
        name: String,
        new: Box<NewInstance>,
        created_at: DateTime<Utc>,
        then: Vec<LedgerEvent>,
        import_warning: Option<String>,
    },
    Event {
        instance: String,
        event: LedgerEvent,
    },
    Endpoint {
        instance: String,
        endpoint: SshEndpoint,
    },
    Seen {
        instance_id: i64,
        remote_id: String,
        /// When the provider last listed it: now, or kept while it is missing.
        seen_at: DateTime<Utc>,
        state: RemoteState,
        note: Option<String>,
        facts: LinkFacts,
    },
}

/// The changes of one instance: written together or not at all.
#[derive(Debug, Clone)]
pub struct Group {
    /// The ledger name (or the name an import would get), for the warning when it is skipped.
    pub instance: String,
    pub changes: Vec<Change>,
}

/// A held price change as the sync reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct HeldPrice {
    pub instance: String,
    /// The rules' price for the whole instance per hour.
    #[ts(type = "string")]
    pub from: Decimal,
    /// The provider's new price for the whole instance per hour.
    #[ts(type = "string")]
    pub to: Decimal,
    pub currency: String,
}

/// The changes, and the warnings for what could not be brought in line.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub groups: Vec<Group>,
    pub warnings: Vec<String>,
    pub unchanged: u64,
    pub held: Vec<HeldPrice>,
}

impl Plan {
    /// Every change, in order (tests and callers that do not care about groups).
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        self.groups.iter().flat_map(|g| g.changes.iter())
    }
}

/// Hand-recorded instances of this provider that carry a provider id (saved for `stop --api`),
/// by that id: the sync links them instead of importing a second copy.
pub type Unlinked = HashMap<String, Known>;

/// What a direct look at a missing instance gave: the provider's answer, or why there is none.
pub type Looks = HashMap<String, Result<Look, String>>;

/// Everything [`plan`] reads besides the listing.
pub struct Context<'a> {
    pub provider: Provider,
    pub known: &'a [Known],
    pub unlinked: &'a Unlinked,
    pub taken_names: &'a HashSet<String>,
    pub looks: &'a Looks,
    /// When the account was added: an import that starts long before it needs a look.
    pub account_added_at: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// An import that starts this long before the account was added needs a look.
const IMPORT_BEFORE_ACCOUNT_DAYS: i64 = 7;
/// An import whose bill at import is above this many days at its hourly price needs a look.
const IMPORT_BILL_DAYS: i64 = 10;

fn clamp(at: DateTime<Utc>, floor: &[Option<DateTime<Utc>>], now: DateTime<Utc>) -> DateTime<Utc> {
    floor.iter().flatten().fold(at, |t, f| t.max(*f)).min(now)
}

/// The ledger event that brings `ledger` in line with `remote`, if any.
fn event_for(remote: RemoteState, ledger: Option<InstanceState>) -> Option<EventKind> {
    use InstanceState as L;
    match (remote, ledger?) {
        (_, L::Released) => None,
        (RemoteState::Running, L::Created | L::Stopped | L::NoGpu) => Some(EventKind::Started),
        (RemoteState::Stopped, L::Created | L::Running | L::NoGpu) => Some(EventKind::Stopped),
        (RemoteState::Gone, _) => Some(EventKind::Released),
        _ => None,
    }
}

/// The whole instance's price per GPU, as the ledger keeps it (six decimals, so the same
/// provider price always gives the same figure and a second sync sees no change).
pub fn per_gpu_price(price: Decimal, gpus: u32) -> Decimal {
    (price / Decimal::from(gpus.max(1))).round_dp(6).normalize()
}

/// Whether `new` is 3× `old` or more, or a third of it or less: the rule
/// [`crate::price_check`] asks a question at.
pub fn far_apart(new: Decimal, old: Decimal) -> bool {
    crate::price_check::far_from(new, old)
}

/// The rules an imported instance starts with: the preset's, the provider's price.
fn import_rules(provider: Provider, remote: &RemoteInstance, price: Decimal) -> BillingRules {
    let preset = provider.preset().preset();
    BillingRules {
        billing_starts: preset.billing_starts,
        granularity: preset.granularity,
        wipe_after_stopped_days: preset.wipe_after_stopped_days,
        // A stopped-storage rate is the renter's to fill in; reconcile suggests one when the
        // provider charges while stopped.
        stopped_billing: match remote.stopped_per_hour {
            Some(rate) if !rate.is_zero() => StoppedBilling::Storage { rate },
            _ => StoppedBilling::None,
        },
        ..BillingRules::simple(per_gpu_price(price, remote.gpu_count), remote.gpu_count)
    }
}

/// A ledger name from the provider's: its name (or provider and id), made unique against
/// `taken` — keys of [`name_key`], so `ＭＹＢＯＸ` does not sit beside `mybox`.
pub fn unique_name(provider: Provider, remote: &RemoteInstance, taken: &HashSet<String>) -> String {
    let base = if remote.name.is_empty() {
        format!("{}-{}", provider.as_str(), remote.id)
    } else {
        remote.name.clone()
    };
    let base: String = base.chars().take(90).collect::<String>().trim().to_owned();
    let free = |candidate: &str| !taken.contains(&name_key(candidate));
    if free(&base) {
        return base;
    }
    let with_id = format!(
        "{base} ({})",
        remote.id.chars().take(12).collect::<String>()
    );
    if free(&with_id) {
        return with_id;
    }
    (2..)
        .map(|n| format!("{with_id} {n}"))
        .find(|candidate| free(candidate))
        .unwrap_or(with_id)
}

fn display_name(remote: &RemoteInstance) -> &str {
    if remote.name.is_empty() {
        "no name"
    } else {
        &remote.name
    }
}

/// The changes that bring the ledger in line with `listing`.
pub fn plan(listing: &Listing, cx: &Context<'_>) -> Plan {
    let provider = cx.provider;
    let mut plan = Plan {
        warnings: listing.warnings.clone(),
        ..Plan::default()
    };
    let by_id: HashMap<&str, (usize, &RemoteInstance)> = listing
        .instances
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), (i, r)))
        .collect();
    let skipped: HashSet<&str> = listing.skipped.iter().map(String::as_str).collect();
    let mut handled: HashSet<&str> = skipped.clone();
    let mut taken: HashSet<String> = cx.taken_names.iter().map(|n| name_key(n)).collect();

    // How many linked instances this listing drops for the first time: more than half of them
    // at once (two or more) is the provider's hiccup, not a mass release.
    let active: Vec<&Known> = cx
        .known
        .iter()
        .filter(|k| {
            k.link_state != Some(RemoteState::Gone)
                && k.ledger_state != Some(InstanceState::Released)
        })
        .collect();
    let newly_missing = active
        .iter()
        .filter(|k| {
            !by_id.contains_key(k.remote_id.as_str())
                && !skipped.contains(k.remote_id.as_str())
                && k.missing_since.is_none()
        })
        .count();
    let mass_drop = newly_missing >= 2 && newly_missing * 2 > active.len();
    let trust_absence = listing.complete && !mass_drop;
    if mass_drop {
        plan.warnings.push(format!(
            "{} left out {newly_missing} of {} linked instances at once; none is taken as released until a later sync still misses it",
            provider.display(),
            active.len()
        ));
    }

    let linked = cx.known.iter().map(|k| (k, true));
    let newly_linked = cx
        .unlinked
        .values()
        .filter(|k| by_id.contains_key(k.remote_id.as_str()))
        .map(|k| (k, false));
    for (k, was_linked) in linked.chain(newly_linked) {
        if skipped.contains(k.remote_id.as_str()) {
            if was_linked {
                plan.unchanged += 1;
            }
            continue;
        }
        handled.insert(k.remote_id.as_str());
        let listed = by_id.get(k.remote_id.as_str()).map(|(_, r)| *r);
        let group = match listed {
            Some(remote) => plan_listed(&mut plan, cx, k, remote, was_linked),
            None => plan_missing(&mut plan, cx, k, trust_absence),
        };
        let Some(group) = group else { continue };
        let seen_only = group
            .changes
            .iter()
            .all(|c| matches!(c, Change::Seen { .. }));
        if seen_only && was_linked {
            plan.unchanged += 1;
        }
        plan.groups.push(group);
    }

    for (index, remote) in listing.instances.iter().enumerate() {
        if handled.contains(remote.id.as_str()) || remote.state == RemoteState::Gone {
            continue;
        }
        if let Some(group) = plan_import(&mut plan, cx, index, remote, &mut taken) {
            plan.groups.push(group);
        }
    }
    plan
}

/// A linked (or newly linked) instance the listing shows.
fn plan_listed(
    plan: &mut Plan,
    cx: &Context<'_>,
    k: &Known,
    remote: &RemoteInstance,
    was_linked: bool,
) -> Option<Group> {
    let provider = cx.provider;
    let now = cx.now;
    let mut changes = Vec::new();
    let mut note = None;
    let mut facts = LinkFacts {
        missing_since: None,
        held: k.held.clone(),
        provider_price: k.provider_price.clone(),
        import_warning: None,
    };
    if k.ledger_state == Some(InstanceState::Released) {
        if remote.state != RemoteState::Gone {
            let bills = remote.price_per_hour.map_or_else(String::new, |p| {
                format!(" — it may still bill {p} {}/h", provider.currency())
            });
            plan.warnings.push(format!(
                "{}: released in the ledger, but {} still lists it ({}){bills}",
                k.name,
                provider.display(),
                remote.provider_word
            ));
            note = Some(format!(
                "released in the ledger, still listed by {}",
                provider.display()
            ));
        }
        // Nothing is written after a release: no event, no price, no SSH target.
        changes.push(Change::Seen {
            instance_id: k.instance_id,
            remote_id: k.remote_id.clone(),
            seen_at: cx.now,
            state: remote.state,
            note,
            facts,
        });
        return Some(Group {
            instance: k.name.clone(),
            changes,
        });
    }
    let mut event_at = None;
    if let Some(kind) = event_for(remote.state, k.ledger_state) {
        let stamp = match &kind {
            EventKind::Started => remote.started_at.unwrap_or(now),
            _ => now,
        };
        let at = clamp(stamp, &[Some(k.seen_at), k.last_event_at], now);
        event_at = Some(at);
        if !was_linked && k.ledger_state.is_some() {
            note = Some(format!(
                "the ledger said {}, {} said {}",
                k.ledger_state.map_or("unknown", InstanceState::as_str),
                provider.display(),
                remote.provider_word
            ));
        }
        changes.push(Change::Event {
            instance: k.name.clone(),
            event: LedgerEvent::new(at, kind),
        });
    }
    price_changes(plan, cx, k, remote, event_at, &mut changes, &mut facts);
    if let Some(endpoint) = &remote.ssh {
        match &k.saved_ssh {
            Some(saved) if saved == endpoint => {}
            None => changes.push(Change::Endpoint {
                instance: k.name.clone(),
                endpoint: endpoint.clone(),
            }),
            Some(saved) if saved.host == endpoint.host => changes.push(Change::Endpoint {
                instance: k.name.clone(),
                endpoint: endpoint.clone(),
            }),
            Some(saved) => plan.warnings.push(format!(
                "{}: {} now gives {}@{}:{} for SSH; the saved target ({}:{}) was left as it is",
                k.name,
                provider.display(),
                endpoint.user,
                endpoint.host,
                endpoint.port,
                saved.host,
                saved.port
            )),
        }
    }
    changes.push(Change::Seen {
        instance_id: k.instance_id,
        remote_id: k.remote_id.clone(),
        seen_at: now,
        state: remote.state,
        note,
        facts,
    });
    Some(Group {
        instance: k.name.clone(),
        changes,
    })
}

/// The provider's price against the rules: applied, held (3× or more), kept aside (another
/// currency) or refused (it cannot be billed).
fn price_changes(
    plan: &mut Plan,
    cx: &Context<'_>,
    k: &Known,
    remote: &RemoteInstance,
    event_at: Option<DateTime<Utc>>,
    changes: &mut Vec<Change>,
    facts: &mut LinkFacts,
) {
    let provider = cx.provider;
    if let Some(text) = &remote.refused_price {
        plan.warnings.push(format!(
            "{}: {} gives a price Leasehold does not believe ({text} per hour); the rules were left as they are",
            k.name,
            provider.display()
        ));
    }
    if remote.state != RemoteState::Running {
        return;
    }
    let Some(price) = remote.price_per_hour else {
        return;
    };
    let currency = provider.currency();
    if !k.currency.eq_ignore_ascii_case(currency) {
        let kept = Some((price, currency.to_owned()));
        if facts.provider_price != kept {
            plan.warnings.push(format!(
                "{}: {} bills it {price} {currency}/h, but the rental is kept in {}; its rules were not changed — check them",
                k.name,
                provider.display(),
                k.currency
            ));
        }
        facts.provider_price = kept;
        return;
    }
    facts.provider_price = None;
    let per_gpu = per_gpu_price(price, remote.gpu_count);
    if per_gpu == k.rules.price_per_gpu_hour && remote.gpu_count == k.rules.gpu_count {
        facts.held = None;
        return;
    }
    let old_total = k.rules.price_per_gpu_hour * Decimal::from(k.rules.gpu_count.max(1));
    if far_apart(price, old_total) {
        let since = k.held.as_ref().map_or(cx.now, |h| h.since.min(cx.now));
        let held = Held {
            price_per_hour: price,
            gpu_count: remote.gpu_count,
            currency: currency.to_owned(),
            since,
        };
        if k.held.as_ref().map(|h| (h.price_per_hour, h.gpu_count))
            != Some((price, remote.gpu_count))
        {
            plan.warnings.push(format!(
                "{}: {} now bills {price} {currency}/h, {} the {} {currency}/h of its rules; held until you accept it (leasehold account accept {:?})",
                k.name,
                provider.display(),
                if price > old_total { "3× or more" } else { "a third or less of" },
                old_total.normalize(),
                k.name
            ));
        }
        plan.held.push(HeldPrice {
            instance: k.name.clone(),
            from: old_total.normalize(),
            to: price,
            currency: currency.to_owned(),
        });
        facts.held = Some(held);
        return;
    }
    let rules = BillingRules {
        price_per_gpu_hour: per_gpu,
        gpu_count: remote.gpu_count,
        ..k.rules.clone()
    };
    if let Err(err) = rules.validate() {
        plan.warnings.push(format!(
            "{}: {} gives {price} {currency}/h for {} GPUs, which cannot be billed ({err}); the rules were left as they are",
            k.name,
            provider.display(),
            remote.gpu_count
        ));
        return;
    }
    facts.held = None;
    let at = clamp(cx.now, &[event_at, k.last_event_at], cx.now);
    changes.push(Change::Event {
        instance: k.name.clone(),
        event: LedgerEvent::new(at, EventKind::RuleChanged(Box::new(rules))),
    });
}

/// A linked instance the listing leaves out: what the direct look said decides.
fn plan_missing(
    plan: &mut Plan,
    cx: &Context<'_>,
    k: &Known,
    trust_absence: bool,
) -> Option<Group> {
    let provider = cx.provider;
    let now = cx.now;
    let seen = |state, note, missing_since| Change::Seen {
        instance_id: k.instance_id,
        remote_id: k.remote_id.clone(),
        // A missing instance was last listed when it was last listed.
        seen_at: if state == RemoteState::Gone {
            now
        } else {
            k.seen_at
        },
        state,
        note,
        facts: LinkFacts {
            missing_since,
            held: k.held.clone(),
            provider_price: k.provider_price.clone(),
            import_warning: None,
        },
    };
    // Released in the ledger or already gone: nothing to ask, nothing to write.
    if k.ledger_state == Some(InstanceState::Released) || k.link_state == Some(RemoteState::Gone) {
        return Some(Group {
            instance: k.name.clone(),
            changes: vec![seen(RemoteState::Gone, None, None)],
        });
    }
    let since = k.missing_since.unwrap_or(now).min(now);
    let look = cx.looks.get(&k.remote_id);
    let gone = match look {
        Some(Ok(Look::NotFound)) => Some("no such instance".to_owned()),
        Some(Ok(Look::Found(r))) if r.state == RemoteState::Gone => Some(r.provider_word.clone()),
        _ => None,
    };
    if let Some(word) = gone {
        if !trust_absence {
            plan.warnings.push(format!(
                "{}: not in {}'s listing, and a direct look says {word}; not taken as released from this listing",
                k.name,
                provider.display()
            ));
            return Some(Group {
                instance: k.name.clone(),
                changes: vec![seen(RemoteState::Missing, None, Some(since))],
            });
        }
        let at = clamp(since, &[Some(k.seen_at), k.last_event_at], now);
        return Some(Group {
            instance: k.name.clone(),
            changes: vec![
                Change::Event {
                    instance: k.name.clone(),
                    event: LedgerEvent::new(at, EventKind::Released),
                },
                seen(
                    RemoteState::Gone,
                    Some(format!("{} says {word}", provider.display())),
                    None,
                ),
            ],
        });
    }
    let mut changes = Vec::new();
    let note = match look {
        Some(Ok(Look::Found(r))) => {
            // The answer is about this very id: its state counts, its absence from the
            // listing does not.
            if let Some(kind) = event_for(r.state, k.ledger_state) {
                let stamp = match &kind {
                    EventKind::Started => r.started_at.unwrap_or(now),
                    _ => now,
                };
                changes.push(Change::Event {
                    instance: k.name.clone(),
                    event: LedgerEvent::new(
                        clamp(stamp, &[Some(k.seen_at), k.last_event_at], now),
                        kind,
                    ),
                });
            }
            format!(
                "not in {}'s listing; a direct look says {}",
                provider.display(),
                r.provider_word
            )
        }
        Some(Err(why)) => format!(
            "not in {}'s listing; the direct look failed ({why})",
            provider.display()
        ),
        _ => format!("not in {}'s listing", provider.display()),
    };
    if k.missing_since.is_none() {
        plan.warnings
            .push(format!("{}: {note}; kept as missing, not released", k.name));
    }
    changes.push(seen(RemoteState::Missing, Some(note), Some(since)));
    Some(Group {
        instance: k.name.clone(),
        changes,
    })
}

/// An instance nobody recorded: imported with the provider's price, or a warning why not.
fn plan_import(
    plan: &mut Plan,
    cx: &Context<'_>,
    index: usize,
    remote: &RemoteInstance,
    taken: &mut HashSet<String>,
) -> Option<Group> {
    let provider = cx.provider;
    let now = cx.now;
    let Some(price) = remote.price_per_hour else {
        let why = remote.refused_price.as_ref().map_or_else(
            || {
                format!(
                    "{} gives no price for it while it is {}",
                    provider.display(),
                    remote.provider_word
                )
            },
            |text| {
                format!(
                    "{} gives a price Leasehold does not believe ({text} per hour)",
                    provider.display()
                )
            },
        );
        plan.warnings.push(format!(
            "{} instance {} ({}) is not recorded yet: {why}",
            provider.display(),
            remote.id,
            display_name(remote),
        ));
        return None;
    };
    let name = unique_name(provider, remote, taken);
    let created_at = remote.created_at.unwrap_or(now).min(now);
    let mut then = Vec::new();
    match remote.state {
        RemoteState::Running => then.push(LedgerEvent::new(
            clamp(
                remote.started_at.unwrap_or(created_at),
                &[Some(created_at)],
                now,
            ),
            EventKind::Started,
        )),
        RemoteState::Stopped => {
            plan.warnings.push(format!(
                "{name}: already stopped when first seen; the ledger counts it as billing from its creation until now (check it with reconcile)"
            ));
            then.push(LedgerEvent::new(now, EventKind::Stopped));
        }
        _ => {}
    }
    let new = NewInstance {
        name: name.clone(),
        provider: provider.preset().as_str().to_owned(),
        region: remote.region.clone(),
        gpu_model: remote
            .gpu_model
            .clone()
            .unwrap_or_else(|| "unknown GPU".to_owned()),
        currency: provider.currency().to_owned(),
        notes: Some(format!(
            "Imported from {} (instance {})",
            provider.display(),
            remote.id
        )),
        planned_hours: None,
        budget: None,
        rules: import_rules(provider, remote, price),
    };
    if let Err(err) = new.validate() {
        plan.warnings.push(format!(
            "{} instance {} ({}) is not recorded: {price} {}/h for {} GPUs cannot be billed ({err})",
            provider.display(),
            remote.id,
            display_name(remote),
            provider.currency(),
            remote.gpu_count
        ));
        return None;
    }
    taken.insert(name_key(&name));
    let import_warning = import_warning(cx, created_at, price);
    if let Some(words) = &import_warning {
        plan.warnings.push(format!("{name}: {words}"));
    }
    Some(Group {
        instance: name.clone(),
        changes: vec![Change::Import {
            remote: index,
            name,
            new: Box::new(new),
            created_at,
            then,
            import_warning,
        }],
    })
}

/// Why an import needs a look: it starts long before the account was added, or its bill at
/// import is out of proportion to its hourly price.
fn import_warning(cx: &Context<'_>, created_at: DateTime<Utc>, price: Decimal) -> Option<String> {
    let mut why = Vec::new();
    if created_at < cx.account_added_at - chrono::Duration::days(IMPORT_BEFORE_ACCOUNT_DAYS) {
        why.push(format!(
            "{} says it was created {}, more than {IMPORT_BEFORE_ACCOUNT_DAYS} days before the account was added",
            cx.provider.display(),
            created_at.format("%Y-%m-%d")
        ));
    }
    let hours = Decimal::from((cx.now - created_at).num_minutes().max(0)) / Decimal::from(60);
    let bill = (price * hours).round_dp(2);
    if bill > price * Decimal::from(IMPORT_BILL_DAYS * 24) {
        why.push(format!(
            "the ledger would bill about {bill} {} at import ({} h at {price}/h)",
            cx.provider.currency(),
            hours.round_dp(0)
        ));
    }
    (!why.is_empty()).then(|| {
        format!(
            "{}; check the start before trusting the bill",
            why.join(", and ")
        )
    })
}

//! The tray icon: the instances that cost or may cost money now (core `status`: a stop not
//! confirmed, a release the provider never made) with their rate and the total, a budget running
//! out first with its minutes (core's `BudgetUse`: "⚠ a100 · budget gone in 12 min"); the keeper's
//! lines (core `keeper::tray`: a hunt's success on its instance's line, each hunt under way,
//! "Power on … when a GPU frees up" for a stopped instance an account can power on); "Open" and
//! "Quit". The app keeps running here when its window is closed, so reminders still fire. Where the desktop
//! has no tray (a bare X server, GNOME without the indicator extension) building it may fail or
//! show nothing: the app then quits when its window closes, as before.

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use leasehold_core::account::Endpoints;
use leasehold_core::billing::report::BudgetUrgency;
use leasehold_core::billing::{ledger, BudgetUse};
use leasehold_core::keeper::{self, tray::TrayKeep, HuntLimits};
use leasehold_core::status::{self, InstanceStatus, StatusState};
use rust_decimal::Decimal;
use serde::Serialize;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter, Manager, Wry};

use crate::board::{ReminderBoard, TrayLabels};
use crate::state::AppState;

const TRAY_ID: &str = "leasehold";
/// Events the window listens to.
pub const OPEN_INSTANCE_EVENT: &str = "open-instance";
pub const QUIT_REQUESTED_EVENT: &str = "quit-requested";

/// Build the tray; a desktop without one only costs a log line.
pub fn build(app: &AppHandle) {
    let board = app.state::<ReminderBoard>();
    let Some(icon) = app.default_window_icon().cloned() else {
        tracing::warn!("no window icon for the tray");
        return;
    };
    let menu = match menu(app, &board.labels(), &[], &[], &Default::default()) {
        Ok(menu) => menu,
        Err(err) => {
            tracing::warn!(%err, "could not build the tray menu");
            return;
        }
    };
    // libappindicator panics when the indicator library is missing; a tray is a convenience,
    // so that must not take the app down.
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        TrayIconBuilder::with_id(TRAY_ID)
            .icon(icon)
            .tooltip("Leasehold")
            .menu(&menu)
            .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
            .build(app)
    }));
    match built {
        Ok(Ok(_)) => board.tray_ready.store(true, Ordering::Relaxed),
        Ok(Err(err)) => tracing::warn!(%err, "no tray on this desktop"),
        Err(_) => tracing::warn!("no tray on this desktop (the indicator library is missing)"),
    }
}

/// "Your 4090 is on — billing ¥2.28/h since 14:03" at this computer's local time: a hunt's
/// success, in the tray and in the desktop notice.
pub fn keeper_on_text(
    labels: &TrayLabels,
    gpu: &str,
    price_per_hour: Decimal,
    currency: &str,
    since: DateTime<Utc>,
) -> String {
    let rate = labels
        .per_hour
        .replace("{rate}", &price_per_hour.normalize().to_string())
        .replace("{currency}", currency);
    let since = since
        .with_timezone(&chrono::Local)
        .format("%H:%M")
        .to_string();
    labels
        .keeper_on
        .replace("{gpu}", gpu)
        .replace("{rate}", &rate)
        .replace("{since}", &since)
}

/// What a budget that is running out adds to its instance's line (core decided the urgency and
/// the minutes): "⚠ … · budget gone in 17 min", "⚠ … · budget spent".
fn budget_note(budget: Option<&BudgetUse>, labels: &TrayLabels) -> Option<String> {
    let budget = budget.filter(|b| b.urgency != BudgetUrgency::Calm)?;
    match budget.minutes_left {
        Some(minutes) => Some(
            labels
                .budget_minutes_left
                .replace("{minutes}", &minutes.to_string()),
        ),
        None if budget.threshold_reached == Some(100) => Some(labels.budget_spent.clone()),
        None => None,
    }
}

/// One line per instance that costs or may cost money now (id and text; a hunt's recent success
/// said on its line; a budget running out first and marked), and the total of what the ledger
/// bills, per currency.
fn lines(
    statuses: &[InstanceStatus],
    keeps: &[TrayKeep],
    budgets: &std::collections::HashMap<String, BudgetUse>,
    labels: &TrayLabels,
) -> (Vec<(String, String)>, Option<String>) {
    let rate = |pattern: &str, amount: &str, currency: &str| {
        pattern
            .replace("{rate}", amount)
            .replace("{currency}", currency)
    };
    let mut totals = std::collections::BTreeMap::<String, rust_decimal::Decimal>::new();
    let mut items: Vec<(String, String)> = statuses
        .iter()
        .filter(|s| s.may_be_billing() && s.state != StatusState::Released)
        .map(|s| {
            let currency = s.currency.code();
            *totals.entry(currency.to_owned()).or_default() += s.cost_per_hour;
            let on = keeps.iter().find_map(|keep| match keep {
                TrayKeep::On {
                    instance,
                    gpu_model,
                    since,
                    price_per_hour,
                    currency,
                } if *instance == s.instance => Some(keeper_on_text(
                    labels,
                    gpu_model,
                    *price_per_hour,
                    currency,
                    *since,
                )),
                _ => None,
            });
            let text = if let Some(on) = on {
                on
            } else if s.may_cost_per_hour > s.cost_per_hour {
                rate(&labels.may_cost, &s.may_cost_per_hour.to_string(), currency)
            } else {
                rate(&labels.per_hour, &s.cost_per_hour.to_string(), currency)
            };
            let budget = budgets.get(&s.instance);
            let line = match budget_note(budget, labels) {
                Some(note) => {
                    let loud = budget.is_some_and(|b| b.urgency == BudgetUrgency::Critical);
                    let mark = if loud { "⚠ " } else { "" };
                    format!("{mark}{} · {note} · {text}", s.instance)
                }
                None => format!("{} · {text}", s.instance),
            };
            (format!("instance:{}", s.instance), line)
        })
        .collect();
    // The most urgent first: a budget that runs out soonest at the top.
    items.sort_by_key(|(id, _)| {
        let name = id.trim_start_matches("instance:");
        let budget = budgets.get(name);
        match budget.map(|b| b.urgency) {
            Some(BudgetUrgency::Critical) => (0, budget.and_then(|b| b.minutes_left).unwrap_or(0)),
            Some(BudgetUrgency::Warning) => (1, budget.and_then(|b| b.minutes_left).unwrap_or(0)),
            _ => (2, 0),
        }
    });
    totals.retain(|_, sum| !sum.is_zero());
    let total = (!totals.is_empty()).then(|| {
        let sums: Vec<String> = totals
            .iter()
            .map(|(currency, sum)| rate(&labels.per_hour, &sum.round_dp(2).to_string(), currency))
            .collect();
        labels.total.replace("{rate}", &sums.join(" · "))
    });
    (items, total)
}

/// The hunts under way (open the instance) and the hunts one can start, with their menu ids.
fn keeper_items(keeps: &[TrayKeep], labels: &TrayLabels) -> Vec<(String, String)> {
    keeps
        .iter()
        .filter_map(|keep| match keep {
            TrayKeep::Hunting { instance, tries } => Some((
                format!("instance:{instance}"),
                labels
                    .keeper_hunting
                    .replace("{name}", instance)
                    .replace("{tries}", &tries.to_string()),
            )),
            TrayKeep::CanHunt { instance } => Some((
                format!("hunt:{instance}"),
                labels.keeper_hunt_start.replace("{name}", instance),
            )),
            TrayKeep::On { .. } => None,
        })
        .collect()
}

fn menu(
    app: &AppHandle,
    labels: &TrayLabels,
    statuses: &[InstanceStatus],
    keeps: &[TrayKeep],
    budgets: &std::collections::HashMap<String, BudgetUse>,
) -> tauri::Result<Menu<Wry>> {
    let menu = Menu::new(app)?;
    let (items, total) = lines(statuses, keeps, budgets, labels);
    if items.is_empty() {
        menu.append(&MenuItem::with_id(
            app,
            "nothing",
            &labels.nothing_billing,
            false,
            None::<&str>,
        )?)?;
    }
    for (id, text) in items {
        menu.append(&MenuItem::with_id(app, id, text, true, None::<&str>)?)?;
    }
    if let Some(total) = total {
        menu.append(&MenuItem::with_id(
            app,
            "total",
            total,
            false,
            None::<&str>,
        )?)?;
    }
    let keeper = keeper_items(keeps, labels);
    if !keeper.is_empty() {
        menu.append(&PredefinedMenuItem::separator(app)?)?;
        for (id, text) in keeper {
            menu.append(&MenuItem::with_id(app, id, text, true, None::<&str>)?)?;
        }
    }
    menu.append(&PredefinedMenuItem::separator(app)?)?;
    menu.append(&MenuItem::with_id(
        app,
        "open",
        &labels.open,
        true,
        None::<&str>,
    )?)?;
    menu.append(&MenuItem::with_id(
        app,
        "quit",
        &labels.quit,
        true,
        None::<&str>,
    )?)?;
    Ok(menu)
}

/// Redraw the tray's menu from the statuses at `now`.
pub async fn refresh(app: &AppHandle, state: &AppState, board: &ReminderBoard, now: DateTime<Utc>) {
    if !board.has_tray() {
        return;
    }
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let statuses = status::all(&state.store, now).await.unwrap_or_default();
    let keeps = keeper::tray::entries(&state.store, now)
        .await
        .unwrap_or_default();
    let budgets: std::collections::HashMap<String, BudgetUse> = ledger::list(&state.store, now)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter_map(|summary| Some((summary.name, summary.budget?)))
        .collect();
    let labels = board.labels();
    let (_, total) = lines(&statuses, &keeps, &budgets, &labels);
    match menu(app, &labels, &statuses, &keeps, &budgets) {
        Ok(menu) => {
            if let Err(err) = tray.set_menu(Some(menu)) {
                tracing::warn!(%err, "could not update the tray menu");
            }
            let _ = tray.set_tooltip(Some(
                total.unwrap_or_else(|| labels.nothing_billing.clone()),
            ));
        }
        Err(err) => tracing::warn!(%err, "could not build the tray menu"),
    }
}

pub fn show_window(app: &AppHandle) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

#[derive(Clone, Serialize)]
struct QuitRequest {
    billing: usize,
}

fn on_menu(app: &AppHandle, id: &str) {
    if let Some(name) = id.strip_prefix("instance:") {
        show_window(app);
        let _ = app.emit(OPEN_INSTANCE_EVENT, name.to_owned());
        return;
    }
    if let Some(name) = id.strip_prefix("hunt:") {
        let (app, name) = (app.clone(), name.to_owned());
        tauri::async_runtime::spawn(async move { start_hunt(&app, name).await });
        return;
    }
    match id {
        "open" => show_window(app),
        "quit" => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move { quit_or_ask(&app).await });
        }
        _ => {}
    }
}

/// Start a power-on hunt with the default limits, as the instance page's button does; what
/// went wrong opens the instance, where the Keeper card says why.
async fn start_hunt(app: &AppHandle, name: String) {
    let Some(state) = app.try_state::<AppState>() else {
        return;
    };
    let started = match Endpoints::checked_from_env() {
        Ok(endpoints) => keeper::start(&state.store, &name, HuntLimits::default(), state.now())
            .await
            .map(|_| endpoints)
            .map_err(|err| err.to_string()),
        Err(err) => Err(err.to_string()),
    };
    match started {
        Ok(endpoints) => {
            state.hunts.spawn(
                state.store.clone(),
                state.clock.clone(),
                endpoints,
                name.clone(),
            );
            let board = app.state::<ReminderBoard>();
            refresh(app, &state, &board, state.now()).await;
        }
        Err(err) => {
            tracing::warn!(%err, instance = name, "the hunt could not start from the tray");
            show_window(app);
            let _ = app.emit(OPEN_INSTANCE_EVENT, name);
        }
    }
}

/// Quit at once when nothing bills; otherwise show the window and let it ask.
async fn quit_or_ask(app: &AppHandle) {
    let billing = match app.try_state::<AppState>() {
        None => 0,
        Some(state) => status::all(&state.store, state.now())
            .await
            .unwrap_or_default()
            .iter()
            .filter(|s| s.may_be_billing() && s.state != StatusState::Released)
            .count(),
    };
    if billing == 0 {
        app.exit(0);
        return;
    }
    show_window(app);
    let _ = app.emit(QUIT_REQUESTED_EVENT, QuitRequest { billing });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(
        minutes_left: Option<i64>,
        threshold: Option<u32>,
        urgency: BudgetUrgency,
    ) -> BudgetUse {
        BudgetUse {
            amount: Decimal::from(100),
            used: Decimal::from(90),
            percent_used: Decimal::from(90),
            threshold_reached: threshold,
            exhausted_at: None,
            minutes_left,
            urgency,
        }
    }

    #[test]
    fn a_budget_running_out_is_said_on_its_line_and_a_calm_one_is_not() {
        let labels = TrayLabels::default();
        let soon = budget(Some(12), Some(80), BudgetUrgency::Critical);
        assert_eq!(
            budget_note(Some(&soon), &labels).as_deref(),
            Some("budget gone in 12 min")
        );
        let spent = budget(None, Some(100), BudgetUrgency::Critical);
        assert_eq!(
            budget_note(Some(&spent), &labels).as_deref(),
            Some("budget spent")
        );
        let calm = budget(Some(600), None, BudgetUrgency::Calm);
        assert_eq!(budget_note(Some(&calm), &labels), None);
        assert_eq!(budget_note(None, &labels), None);
    }
}

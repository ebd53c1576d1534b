// Team mode (src-tauri/src/commands/team.rs): the shared ledger on PostgreSQL.
import type { Conflict } from '../bindings/Conflict'
import type { ReminderKind } from '../bindings/ReminderKind'
import type { Snooze } from '../bindings/Snooze'
import type { SyncReport } from '../bindings/SyncReport'
import type { TeamLink } from '../bindings/TeamLink'
import type { TeamStatus } from '../bindings/TeamStatus'
import { call } from './ipc'

export function teamLink(): Promise<TeamLink | null> {
  return call<TeamLink | null>('team_link')
}

/** `password` empty: use the one kept in the keychain, PGPASSWORD or ~/.pgpass. */
export function teamConnect(url: string, member: string, team: string, password: string): Promise<TeamLink> {
  return call<TeamLink>('team_connect', { url, member, team, password: password === '' ? null : password })
}

export function teamSync(): Promise<SyncReport> {
  return call<SyncReport>('team_sync')
}

export function teamStatus(): Promise<TeamStatus> {
  return call<TeamStatus>('team_status')
}

export function teamConflicts(): Promise<Conflict[]> {
  return call<Conflict[]>('team_conflicts')
}

export function teamDisconnect(): Promise<TeamLink | null> {
  return call<TeamLink | null>('team_disconnect')
}

/** Keep `keepUid` (the refused event or the one standing in its place); answers the conflicts left. */
export function teamResolveConflict(eventUid: string, keepUid: string): Promise<Conflict[]> {
  return call<Conflict[]>('team_resolve_conflict', { eventUid, keepUid })
}

/** Dismiss a notice a pull stored (name kept under another name, unreadable row) once read. */
export function teamDismissConflict(key: string): Promise<Conflict[]> {
  return call<Conflict[]>('team_dismiss_conflict', { key })
}

/** Set the team's monthly budget in `currency`; answers the team status with it. */
export function teamSetBudget(currency: string, amount: string): Promise<TeamStatus> {
  return call<TeamStatus>('team_set_budget', { currency, amount })
}

/** The project `instance` is rented for (null: none). */
export function instanceProject(instance: string): Promise<string | null> {
  return call<string | null>('instance_project', { instance })
}

/** Set or clear (null) the project of `instance`; answers it as saved. */
export function instanceSetProject(instance: string, project: string | null): Promise<string | null> {
  return call<string | null>('instance_set_project', { instance, project })
}

/** Name who is told about any member's instance left running, and after how many idle minutes
 * (the instance's own member always is); answers the team status with them. */
export function teamSetAlerts(recipients: string[], afterMinutes: number): Promise<TeamStatus> {
  return call<TeamStatus>('team_set_alerts', { recipients, afterMinutes })
}

/** Close a team reminder (a team budget's threshold, a left-running alert) in the popup. */
export function teamDismissReminder(kind: ReminderKind, occurrence: string): Promise<void> {
  return call<void>('team_dismiss_reminder', { kind, occurrence })
}

/** Put off a team reminder for an hour or until tomorrow morning. */
export function teamSnoozeReminder(kind: ReminderKind, occurrence: string, snooze: Snooze): Promise<void> {
  return call<void>('team_snooze_reminder', { kind, occurrence, snooze })
}

/** Share (or stop sharing) this laptop's last Verify results with the team; answers the status. */
export function teamShareVerify(share: boolean): Promise<TeamStatus> {
  return call<TeamStatus>('team_share_verify', { share })
}

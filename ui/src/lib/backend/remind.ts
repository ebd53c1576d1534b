// Reminders, webhooks and the tray (src-tauri/src/commands/remind.rs), and the events the
// scheduler and the tray send to the window.
import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import type { Board } from '../bindings/Board'
import type { Delivery } from '../bindings/Delivery'
import type { ReminderKind } from '../bindings/ReminderKind'
import type { ReminderRules } from '../bindings/ReminderRules'
import type { Snooze } from '../bindings/Snooze'
import type { TrayLabels } from '../bindings/TrayLabels'
import type { WebhookView } from '../bindings/WebhookView'
import { call } from './ipc'

/** What the popup shows now. */
export function remindBoard(): Promise<Board> {
  return call<Board>('remind_board')
}

/** Every tick of the scheduler sends the popup's list. */
export function onRemindBoard(handler: (board: Board) => void): Promise<UnlistenFn> {
  return listen<Board>('reminders', (event) => handler(event.payload))
}

export function remindSnooze(instanceId: number, kind: ReminderKind, occurrence: string, snooze: Snooze): Promise<void> {
  return call<void>('remind_snooze', { instanceId, kind, occurrence, snooze })
}

export function remindDismiss(instanceId: number, kind: ReminderKind, occurrence: string): Promise<void> {
  return call<void>('remind_dismiss', { instanceId, kind, occurrence })
}

export function remindRulesLoad(): Promise<ReminderRules> {
  return call<ReminderRules>('remind_rules_load')
}

export function remindRulesSave(rules: ReminderRules): Promise<void> {
  return call<void>('remind_rules_save', { rules })
}

export function webhookList(): Promise<WebhookView[]> {
  return call<WebhookView[]>('webhook_list')
}

/** The URL and the secret go to the OS keychain; they never come back. */
export function webhookAdd(kind: string, label: string, url: string, secret: string | null): Promise<WebhookView> {
  return call<WebhookView>('webhook_add', { kind, label, url, secret })
}

export function webhookRemove(id: number): Promise<void> {
  return call<void>('webhook_remove', { id })
}

export function webhookTest(id: number): Promise<Delivery> {
  return call<Delivery>('webhook_test', { id })
}

export function trayLabels(labels: TrayLabels): Promise<void> {
  return call<void>('tray_labels', { labels })
}

export function autostartEnabled(): Promise<boolean> {
  return call<boolean>('autostart_enabled')
}

export function autostartSet(enabled: boolean): Promise<void> {
  return call<void>('autostart_set', { enabled })
}

/** The tray's menu asked to show an instance. */
export function onOpenInstance(handler: (name: string) => void): Promise<UnlistenFn> {
  return listen<string>('open-instance', (event) => handler(event.payload))
}

/** The tray's Quit while instances bill: the window asks first. */
export function onQuitRequested(handler: (billing: number) => void): Promise<UnlistenFn> {
  return listen<{ billing: number }>('quit-requested', (event) => handler(event.payload.billing))
}

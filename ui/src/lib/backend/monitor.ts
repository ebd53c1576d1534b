// The GPU monitor (src-tauri/src/commands/monitor.rs): a live stream per instance on a channel,
// stopped when the page closes, and what the minute history says.
import { Channel } from '@tauri-apps/api/core'
import type { BusyHours } from '../bindings/BusyHours'
import type { GpuMinute } from '../bindings/GpuMinute'
import type { Lang } from '../bindings/Lang'
import type { MonitorEvent } from '../bindings/MonitorEvent'
import { call } from './ipc'

/** Stream `instance`'s GPUs to `onEvent`; resolves when `monitorStop` ends it. */
export function monitorStart(instance: string, lang: Lang, onEvent: (event: MonitorEvent) => void): Promise<void> {
  return call<void>('monitor_start', { instance, intervalMs: null, lang, onEvent: new Channel<MonitorEvent>(onEvent) })
}

/** Word the findings of `instance`'s open stream in `lang` from now on (sent again at once). */
export function monitorLanguage(instance: string, lang: Lang): Promise<void> {
  return call<void>('monitor_language', { instance, lang })
}

export function monitorStop(instance: string): Promise<void> {
  return call<void>('monitor_stop', { instance })
}

/** The last day of `instance`'s GPU minutes. */
export function monitorHistory(instance: string): Promise<GpuMinute[]> {
  return call<GpuMinute[]>('monitor_history', { instance })
}

/** GPU-busy hours and what the idle time cost. */
export function monitorBusyHours(instance: string): Promise<BusyHours> {
  return call<BusyHours>('monitor_busy_hours', { instance })
}

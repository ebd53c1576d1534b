// The watchdog card (src-tauri/src/commands/watchdog.rs): the idle guard on the instance.
import type { InstallReport } from '../bindings/InstallReport'
import type { RemoveReport } from '../bindings/RemoveReport'
import type { WatchdogOptions } from '../bindings/WatchdogOptions'
import type { WatchdogRequest } from '../bindings/WatchdogRequest'
import type { WatchdogStatus } from '../bindings/WatchdogStatus'
import { call } from './ipc'

/** The watchdog's defaults for `instance`, with its provider's power-off command. */
export function watchdogDefaults(instance: string): Promise<WatchdogOptions> {
  return call<WatchdogOptions>('watchdog_defaults', { instance })
}

/** Install (or replace) the watchdog; fields left out take the instance's defaults. */
export function watchdogInstall(instance: string, request: WatchdogRequest): Promise<InstallReport> {
  return call<InstallReport>('watchdog_install', { instance, request })
}

export function watchdogStatus(instance: string, stateDir: string | null = null): Promise<WatchdogStatus> {
  return call<WatchdogStatus>('watchdog_status', { instance, stateDir })
}

export function watchdogRemove(instance: string, stateDir: string | null = null): Promise<RemoveReport> {
  return call<RemoveReport>('watchdog_remove', { instance, stateDir })
}

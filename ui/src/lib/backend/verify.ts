// Verify (src-tauri/src/commands/verify.rs): the probe battery with progress on a channel, and
// the instance's stored runs.
import { Channel } from '@tauri-apps/api/core'
import type { Lang } from '../bindings/Lang'
import type { ProbeEvent } from '../bindings/ProbeEvent'
import type { RunSummary } from '../bindings/RunSummary'
import type { VerifyOutcome } from '../bindings/VerifyOutcome'
import { call } from './ipc'

/** Run the checks on `instance` (the run is stored); `onProgress` hears each probe start and finish. */
export function verifyRun(
  instance: string,
  options: { stress: boolean; lang: Lang },
  onProgress: (event: ProbeEvent) => void,
): Promise<VerifyOutcome> {
  return call<VerifyOutcome>('verify_run', { instance, ...options, onProgress: new Channel<ProbeEvent>(onProgress) })
}

/** Stop the checks running on `instance`; `verifyRun` then fails with `verify.cancelled`. */
export function verifyCancel(instance: string): Promise<void> {
  return call<void>('verify_cancel', { instance })
}

/** Earlier runs of `instance`, newest first. */
export function verifyHistory(instance: string): Promise<RunSummary[]> {
  return call<RunSummary[]>('verify_history', { instance })
}

/** One stored run with what changed since the run before it. */
export function verifyLoad(id: number): Promise<VerifyOutcome> {
  return call<VerifyOutcome>('verify_load', { id })
}

// Verify (src-tauri/src/commands/verify.rs): the probe battery with progress on a channel.
import { Channel } from '@tauri-apps/api/core'
import type { Lang } from '../bindings/Lang'
import type { ProbeEvent } from '../bindings/ProbeEvent'
import type { VerifyReport } from '../bindings/VerifyReport'
import { call } from './ipc'

/** Run the checks on `instance`; `onProgress` hears each probe start and finish. */
export function verifyRun(
  instance: string,
  options: { stress: boolean; lang: Lang },
  onProgress: (event: ProbeEvent) => void,
): Promise<VerifyReport> {
  return call<VerifyReport>('verify_run', { instance, ...options, onProgress: new Channel<ProbeEvent>(onProgress) })
}

/** Stop the checks running on `instance`; `verifyRun` then fails with `verify.cancelled`. */
export function verifyCancel(instance: string): Promise<void> {
  return call<void>('verify_cancel', { instance })
}

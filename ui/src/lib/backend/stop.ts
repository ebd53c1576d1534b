// "Stop now" (src-tauri/src/commands/stop.rs): power the instance off, over SSH or through the
// provider's API, with `stopped` recorded once confirmed.
import type { HandCheck } from '../bindings/HandCheck'
import type { HandStop } from '../bindings/HandStop'
import type { Provider } from '../bindings/Provider'
import type { StopPlan } from '../bindings/StopPlan'
import type { StopReport } from '../bindings/StopReport'
import type { StopVia } from '../bindings/StopVia'
import { call } from './ipc'

/** How "Stop now" would go for `instance`. */
export function stopPlan(instance: string): Promise<StopPlan> {
  return call<StopPlan>('stop_plan', { instance })
}

/** Keep a provider's API key in the OS keychain. */
export function stopSaveApiKey(api: Provider, apiKey: string): Promise<void> {
  return call<void>('stop_save_api_key', { api, apiKey })
}

/** Power `instance` off; resolves once the stop is confirmed and recorded. */
export function stopNow(instance: string, via: StopVia, command: string | null, providerId: string | null): Promise<StopReport> {
  return call<StopReport>('stop_now', { instance, via, command, providerId })
}

/** "Already stopped at the provider — record it": records the stop, then looks whether it still answers. */
export function stopRecordByHand(instance: string): Promise<HandStop> {
  return call<HandStop>('stop_record_by_hand', { instance })
}

/** Look again whether a stop recorded by hand holds; `null` when there is no way to look. */
export function stopCheckAgain(instance: string): Promise<HandCheck | null> {
  return call<HandCheck | null>('stop_check_again', { instance })
}

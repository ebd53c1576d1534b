// The only module that talks to the Rust side; components import from here, never `invoke`.
// Each function mirrors one Tauri command in src-tauri/src/commands/.
import type { AppInfo } from '../bindings/AppInfo'
import type { Preferences } from '../bindings/Preferences'
import type { EstimateRequest } from '../bindings/EstimateRequest'
import type { LocalGpuReport } from '../bindings/LocalGpuReport'
import type { ModelShape } from '../bindings/ModelShape'
import type { PriceEntry } from '../bindings/PriceEntry'
import type { RecommendRequest } from '../bindings/RecommendRequest'
import type { Recommendation } from '../bindings/Recommendation'
import { call } from './ipc'

export { BackendError, toApiError, UNEXPECTED_CODE } from './ipc'

export function appInfo(): Promise<AppInfo> {
  return call<AppInfo>('app_info')
}

export function loadPreferences(): Promise<Preferences> {
  return call<Preferences>('load_preferences')
}

export function savePreferences(preferences: Preferences): Promise<void> {
  return call<void>('save_preferences', { preferences })
}

export function loadDraft(wizard: string): Promise<unknown> {
  return call<unknown>('load_draft', { wizard })
}

export function saveDraft(wizard: string, draft: unknown): Promise<void> {
  return call<void>('save_draft', { wizard, draft })
}

export function clearDraft(wizard: string): Promise<void> {
  return call<void>('clear_draft', { wizard })
}

/** ISO 4217 codes core accepts for a rental. */
export function currencies(): Promise<string[]> {
  return call<string[]>('currencies')
}

export * from './connect'
export * from './verify'
// Choose GPU (core `catalog`).

export function recommendGpus(request: RecommendRequest): Promise<Recommendation> {
  return call<Recommendation>('recommend_gpus', { request })
}

/** This computer's NVIDIA GPUs; with a request, also whether the task fits the largest one. */
export function localGpus(request: EstimateRequest | null): Promise<LocalGpuReport> {
  return call<LocalGpuReport>('local_gpus', { request })
}

export function modelPresets(): Promise<ModelShape[]> {
  return call<ModelShape[]>('model_presets')
}

/** The price paid per GPU for the newest earlier rental of each GPU, in that rental's currency. */
export function earlierPrices(): Promise<PriceEntry[]> {
  return call<PriceEntry[]>('earlier_prices')
}

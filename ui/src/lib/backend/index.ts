// The only module that talks to the Rust side; components import from here, never `invoke`.
// One file per area, mirroring src-tauri/src/commands/.
import type { AppInfo } from '../bindings/AppInfo'
import type { EstimateRequest } from '../bindings/EstimateRequest'
import type { LocalGpuReport } from '../bindings/LocalGpuReport'
import type { ModelShape } from '../bindings/ModelShape'
import type { PriceEntry } from '../bindings/PriceEntry'
import type { ProblemReport } from '../bindings/ProblemReport'
import type { RecommendRequest } from '../bindings/RecommendRequest'
import type { Recommendation } from '../bindings/Recommendation'
import { call } from './ipc'

export { BackendError, fieldOf, toApiError, UNEXPECTED_CODE } from './ipc'
export * from './account'
export * from './backup'
export * from './billing'
export * from './connect'
export * from './install'
export * from './market'
export * from './monitor'
export * from './remind'
export * from './explain'
export * from './keeper'
export * from './settings'
export * from './status'
export * from './stop'
export * from './store'
export * from './team'
export * from './verify'
export * from './update'
export * from './watchdog'

export function appInfo(): Promise<AppInfo> {
  return call<AppInfo>('app_info')
}

/** The problem report, redacted by core; shown to the user, copied only by them. */
export function problemReport(): Promise<ProblemReport> {
  return call<ProblemReport>('problem_report')
}

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

// The market (src-tauri/src/commands/market.rs): the kept offers ranked for the task, a refresh,
// the review's defaults and renting. Core decides every figure; the screens only show them.
import type { MarketView } from '../bindings/MarketView'
import type { Provider } from '../bindings/Provider'
import type { RecommendRequest } from '../bindings/RecommendRequest'
import type { Alert } from '../bindings/Alert'
import type { AlertRule } from '../bindings/AlertRule'
import type { RefreshRound } from '../bindings/RefreshRound'
import type { RentDefaults } from '../bindings/RentDefaults'
import type { RentRequest } from '../bindings/RentRequest'
import type { Rented } from '../bindings/Rented'
import { call } from './ipc'

/** The offers for the task Choose GPU describes, with prices also in `currency`. */
export function marketForTask(request: RecommendRequest, currency: string): Promise<MarketView> {
  return call<MarketView>('market_for_task', { request, currency })
}

/** Fetch every provider's offers now (a failed provider keeps its earlier offers) and fire the alerts that now hold. */
export function marketRefresh(): Promise<RefreshRound> {
  return call<RefreshRound>('market_refresh')
}

/** Every price alert, oldest first. */
export function marketAlerts(): Promise<Alert[]> {
  return call<Alert[]>('market_alerts')
}

/** Watch for `gpu` below a price or back in stock. */
export function marketAlertAdd(gpu: string, rule: AlertRule): Promise<Alert> {
  return call<Alert>('market_alert_add', { gpu, rule })
}

export function marketAlertRemove(id: number): Promise<void> {
  return call<void>('market_alert_remove', { id })
}

export function marketRentDefaults(provider: Provider): Promise<RentDefaults> {
  return call<RentDefaults>('market_rent_defaults', { provider })
}

/** Rent through the provider's create call; recorded as created once the provider accepts. */
export function marketRent(request: RentRequest): Promise<Rented> {
  return call<Rented>('market_rent', { request })
}

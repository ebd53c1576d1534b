// The market (src-tauri/src/commands/market.rs): the kept offers ranked for the task, a refresh,
// the review's defaults and renting. Core decides every figure; the screens only show them.
import type { MarketView } from '../bindings/MarketView'
import type { Provider } from '../bindings/Provider'
import type { RecommendRequest } from '../bindings/RecommendRequest'
import type { RefreshReport } from '../bindings/RefreshReport'
import type { RentDefaults } from '../bindings/RentDefaults'
import type { RentRequest } from '../bindings/RentRequest'
import type { Rented } from '../bindings/Rented'
import { call } from './ipc'

/** The offers for the task Choose GPU describes, with prices also in `currency`. */
export function marketForTask(request: RecommendRequest, currency: string): Promise<MarketView> {
  return call<MarketView>('market_for_task', { request, currency })
}

/** Fetch every provider's offers now; a failed provider keeps its earlier offers. */
export function marketRefresh(): Promise<RefreshReport> {
  return call<RefreshReport>('market_refresh')
}

export function marketRentDefaults(provider: Provider): Promise<RentDefaults> {
  return call<RentDefaults>('market_rent_defaults', { provider })
}

/** Rent through the provider's create call; recorded as created once the provider accepts. */
export function marketRent(request: RentRequest): Promise<Rented> {
  return call<Rented>('market_rent', { request })
}

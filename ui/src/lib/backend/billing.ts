// The rental ledger (src-tauri/src/commands/billing.rs). Costs are always computed in core, at the
// moment of the call; the UI only shows them.
import type { PriceCheck } from '../bindings/PriceCheck'
import type { PriceCheckInput } from '../bindings/PriceCheckInput'
import type { CostEstimate } from '../bindings/CostEstimate'
import type { EstimateInput } from '../bindings/EstimateInput'
import type { Forecast } from '../bindings/Forecast'
import type { InstanceDetail } from '../bindings/InstanceDetail'
import type { InstanceSummary } from '../bindings/InstanceSummary'
import type { NewInstance } from '../bindings/NewInstance'
import type { PowerAction } from '../bindings/PowerAction'
import type { ProviderPreset } from '../bindings/ProviderPreset'
import type { RentVsBuy } from '../bindings/RentVsBuy'
import type { RentVsBuyInput } from '../bindings/RentVsBuyInput'
import { call } from './ipc'

export function providerPresets(): Promise<ProviderPreset[]> {
  return call<ProviderPreset[]>('provider_presets')
}

/** ISO 4217 codes core accepts for a rental. */
export function currencies(): Promise<string[]> {
  return call<string[]>('currencies')
}

/** Core's checks of a rental that need no database; rejects with a `BackendError` naming the field. */
export function validateRental(rental: NewInstance): Promise<void> {
  return call<void>('validate_rental', { rental })
}

export function addRental(rental: NewInstance): Promise<InstanceSummary> {
  return call<InstanceSummary>('add_rental', { rental })
}

export function listRentals(): Promise<InstanceSummary[]> {
  return call<InstanceSummary[]>('list_rentals')
}

export function rentalDetail(name: string): Promise<InstanceDetail> {
  return call<InstanceDetail>('rental_detail', { name })
}

export function recordPower(name: string, action: PowerAction): Promise<InstanceSummary> {
  return call<InstanceSummary>('record_power', { name, action })
}

export function forecastRental(name: string, until: Date): Promise<Forecast> {
  return call<Forecast>('forecast_rental', { name, until: until.toISOString() })
}

export function estimateCost(input: EstimateInput): Promise<CostEstimate> {
  return call<CostEstimate>('estimate_cost', { input })
}

export function rentVsBuy(input: RentVsBuyInput): Promise<RentVsBuy> {
  return call<RentVsBuy>('rent_vs_buy', { input })
}

/** A second look at a price before it is recorded: far from earlier ones, pays for the card, wrong currency. */
export function priceCheck(input: PriceCheckInput): Promise<PriceCheck> {
  return call<PriceCheck>('price_check', { input })
}

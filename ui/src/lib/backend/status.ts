// The instance's one status (src-tauri/src/commands/status.rs): decided in core from the ledger,
// the provider, the last looks, the monitor and the watchdog. Screens show it; none works it out.
import type { InstanceStatus } from '../bindings/InstanceStatus'
import type { ListedInstance } from '../bindings/ListedInstance'
import type { Totals } from '../bindings/Totals'
import { call } from './ipc'

export function instanceStatus(instance: string): Promise<InstanceStatus> {
  return call<InstanceStatus>('instance_status', { instance })
}

/** Every rental with its status, for the Rentals page. */
export function instanceStatuses(): Promise<ListedInstance[]> {
  return call<ListedInstance[]>('instance_statuses')
}

/** What every rental together costs an hour now and has cost this month, per currency. */
export function rentalsTotals(): Promise<Totals> {
  return call<Totals>('rentals_totals')
}

/** Update the rules to the GPU count the monitor sees, from now on; the new status. */
export function instanceMatchGpuCount(instance: string): Promise<InstanceStatus> {
  return call<InstanceStatus>('instance_match_gpu_count', { instance })
}

/** The rental's current price is right: its "looks wrong" flag goes until the price changes. */
export function instanceAcknowledgePrice(instance: string): Promise<InstanceStatus> {
  return call<InstanceStatus>('instance_acknowledge_price', { instance })
}

/** "Not now" to connecting and verifying an instance Leasehold brought up (a hunt's success, a rental). */
export function instanceFollowUpDismiss(instance: string): Promise<void> {
  return call<void>('instance_follow_up_dismiss', { instance })
}

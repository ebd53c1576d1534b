// Provider accounts (src-tauri/src/commands/account.rs): the provider's own view of every
// instance it bills, power through its API, and its charges beside the ledger.
import type { AcceptReport } from '../bindings/AcceptReport'
import type { AccountRef } from '../bindings/AccountRef'
import type { AccountRemoved } from '../bindings/AccountRemoved'
import type { AccountSummary } from '../bindings/AccountSummary'
import type { AddReport } from '../bindings/AddReport'
import type { BillingRules } from '../bindings/BillingRules'
import type { InstanceLink } from '../bindings/InstanceLink'
import type { PowerReport } from '../bindings/PowerReport'
import type { PowerVerb } from '../bindings/PowerVerb'
import type { ReconcileRow } from '../bindings/ReconcileRow'
import type { AccountSyncReport } from '../bindings/AccountSyncReport'
import { call } from './ipc'

export function accountList(): Promise<AccountSummary[]> {
  return call<AccountSummary[]>('account_list')
}

/** Check the key with one read-only call and keep it in the keychain. */
export function accountAdd(account: AccountRef, apiKey: string): Promise<AddReport> {
  return call<AddReport>('account_add', { account, apiKey })
}

/** Resolves once the account is removed; says separately what the keychain did with its key. */
export function accountRemove(account: AccountRef): Promise<AccountRemoved> {
  return call<AccountRemoved>('account_remove', { account })
}

/** Apply the provider price change a sync held back, from when it was first seen. */
export function accountAccept(instance: string): Promise<AcceptReport> {
  return call<AcceptReport>('account_accept', { instance })
}

/** Sync one account now, or every account when none is given. */
export function accountSync(account: AccountRef | null): Promise<AccountSyncReport[]> {
  return call<AccountSyncReport[]>('account_sync', { account })
}

export function accountLink(instance: string): Promise<InstanceLink | null> {
  return call<InstanceLink | null>('account_link', { instance })
}

/** Power on, off or release through the provider; resolves once the provider confirms. */
export function accountPower(instance: string, verb: PowerVerb): Promise<PowerReport> {
  return call<PowerReport>('account_power', { instance, verb })
}

export function accountAcknowledge(instance: string): Promise<void> {
  return call<void>('account_acknowledge', { instance })
}

export function accountReconcile(instance: string, days: number): Promise<ReconcileRow[]> {
  return call<ReconcileRow[]>('account_reconcile', { instance, days })
}

export function accountApplyRule(instance: string, rules: BillingRules): Promise<void> {
  return call<void>('account_apply_rule', { instance, rules })
}

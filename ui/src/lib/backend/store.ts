// The database at start and the recovery screen's ways out (src-tauri/src/commands/store.rs).
// These work whether or not the database could be opened.
import type { StoreStatus } from '../bindings/StoreStatus'
import { call } from './ipc'

/** Asked before anything else: whether the database opened, and on what the app runs. */
export function storeStatus(): Promise<StoreStatus> {
  return call<StoreStatus>('store_status')
}

export function storeRetry(): Promise<StoreStatus> {
  return call<StoreStatus>('store_retry')
}

export function storeOpenCopy(): Promise<StoreStatus> {
  return call<StoreStatus>('store_open_copy')
}

export function storeStartFresh(): Promise<StoreStatus> {
  return call<StoreStatus>('store_start_fresh')
}

export function appQuit(): Promise<void> {
  return call<void>('app_quit')
}

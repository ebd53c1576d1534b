// The only module that talks to the Rust side; components import from here, never `invoke`.
// One file per area, mirroring src-tauri/src/commands/.
import type { AppInfo } from '../bindings/AppInfo'
import { call } from './ipc'

export { BackendError, fieldOf, toApiError, UNEXPECTED_CODE } from './ipc'
export * from './billing'
export * from './settings'

export function appInfo(): Promise<AppInfo> {
  return call<AppInfo>('app_info')
}

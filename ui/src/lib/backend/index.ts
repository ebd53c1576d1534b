// The only module that talks to the Rust side; components import from here, never `invoke`.
// Each function mirrors one Tauri command in src-tauri/src/commands/.
import type { AppInfo } from '../bindings/AppInfo'
import type { Preferences } from '../bindings/Preferences'
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

// Preferences and wizard drafts (src-tauri/src/commands/settings.rs).
import type { Preferences } from '../bindings/Preferences'
import { call } from './ipc'

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

import { mount } from 'svelte'
import './app.css'
import App from './App.svelte'
import { loadPreferences, savePreferences, storeStatus, toApiError } from './lib/backend'
import type { ApiError } from './lib/bindings/ApiError'
import type { Preferences } from './lib/bindings/Preferences'
import type { StoreStatus } from './lib/bindings/StoreStatus'
import { languageFromSystem, setupI18n } from './lib/i18n'
import { PreferencesState } from './lib/preferences.svelte'
import RecoveryScreen from './lib/screens/recovery/RecoveryScreen.svelte'

const target = document.getElementById('app')!
let startupError: ApiError | null = null

// First: did the database open? If not, the recovery screen replaces the app (in the system's
// language: the saved preference lives in that database); once a way out worked, start over.
let status: StoreStatus = { failure: null, read_only_copy: null, kept_as: null }
try {
  status = await storeStatus()
} catch (thrown) {
  startupError = toApiError(thrown)
}

async function start() {
  if (status.failure) {
    await setupI18n(languageFromSystem(navigator.language))
    return mount(RecoveryScreen, { target, props: { failure: status.failure, onrecovered: () => location.reload() } })
  }
  return mount(App, { target, props: { preferences, startupError, storeStatus: status } })
}

// Preferences decide the language, so they are read before the first paint.
let stored: Preferences = { language: null, currency: null, onboarded: false, theme: 'system' }
if (!status.failure && !startupError) {
  try {
    stored = await loadPreferences()
  } catch (thrown) {
    startupError = toApiError(thrown)
  }
  // A read-only copy is for looking at what it holds: first run could not be saved there.
  if (status.read_only_copy) stored = { ...stored, onboarded: true }
}
const preferences = new PreferencesState(stored, navigator.language, (saved) => savePreferences({ preferences: saved }))
if (!status.failure) await setupI18n(preferences.language)

export default await start()

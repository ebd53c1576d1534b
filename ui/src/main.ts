import { mount } from 'svelte'
import './app.css'
import App from './App.svelte'
import { loadPreferences, savePreferences, toApiError } from './lib/backend'
import type { ApiError } from './lib/bindings/ApiError'
import type { Preferences } from './lib/bindings/Preferences'
import { setupI18n } from './lib/i18n'
import { PreferencesState } from './lib/preferences.svelte'

// Preferences decide the language, so they are read before the first paint.
let stored: Preferences = { language: null, currency: null, onboarded: false }
let startupError: ApiError | null = null
try {
  stored = await loadPreferences()
} catch (thrown) {
  startupError = toApiError(thrown)
}
const preferences = new PreferencesState(stored, navigator.language, savePreferences)
setupI18n(preferences.language)

export default mount(App, {
  target: document.getElementById('app')!,
  props: { preferences, startupError },
})

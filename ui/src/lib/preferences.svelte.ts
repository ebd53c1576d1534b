// What the user chose on first run and in Settings (language, default currency, light or dark),
// as runes state.
// Saved through the backend so it survives restarts; the UI never keeps its own copy on disk.
import { readOnly } from './readOnly.svelte'
import { createContext } from 'svelte'
import type { Preferences } from './bindings/Preferences'
import type { Theme } from './bindings/Theme'
import { isLanguage, languageFromSystem, switchLanguage, type Language } from './i18n'

export type SavePreferences = (preferences: Preferences) => Promise<void>

export class PreferencesState {
  language = $state<Language>('en')
  currency = $state('CNY')
  onboarded = $state(false)
  theme = $state<Theme>('system')
  /** Until the user picks a currency, it follows the language (CNY for Chinese, else USD). */
  #currencyChosen: boolean
  #save: SavePreferences

  constructor(stored: Preferences, systemLocale: string | null | undefined, save: SavePreferences) {
    this.language = isLanguage(stored.language) ? stored.language : languageFromSystem(systemLocale)
    this.#currencyChosen = stored.currency !== null
    this.currency = stored.currency ?? defaultCurrency(this.language)
    this.onboarded = stored.onboarded
    this.theme = stored.theme ?? 'system'
    this.#save = save
    applyTheme(this.theme)
  }

  snapshot(): Preferences {
    return {
      language: this.language,
      currency: this.#currencyChosen ? this.currency : null,
      onboarded: this.onboarded,
      theme: this.theme,
    }
  }

  /** Write the choices, except on a read-only copy: there they hold for this run only. */
  async #keep(): Promise<void> {
    if (readOnly.on) return
    await this.#save(this.snapshot())
  }

  async setLanguage(language: Language): Promise<void> {
    this.language = language
    if (!this.#currencyChosen) this.currency = defaultCurrency(language)
    await switchLanguage(language)
    await this.#keep()
  }

  async setCurrency(currency: string): Promise<void> {
    this.currency = currency
    this.#currencyChosen = true
    await this.#keep()
  }

  async setTheme(theme: Theme): Promise<void> {
    this.theme = theme
    applyTheme(theme)
    await this.#keep()
  }

  /** Finishing first run confirms the currency shown, even if the user left it as proposed. */
  async finishOnboarding(): Promise<void> {
    this.onboarded = true
    this.#currencyChosen = true
    await this.#keep()
  }
}

/** The stylesheet's dark tokens follow `data-theme` on <html>; none means the system's. */
export function applyTheme(theme: Theme): void {
  if (typeof document === 'undefined') return
  if (theme === 'system') delete document.documentElement.dataset.theme
  else document.documentElement.dataset.theme = theme
}

function defaultCurrency(language: Language): string {
  return language === 'zh-CN' ? 'CNY' : 'USD'
}

export const [getPreferences, setPreferences] = createContext<PreferencesState>()

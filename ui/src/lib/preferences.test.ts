import { describe, expect, it } from 'vitest'
import type { Preferences } from './bindings/Preferences'
import { PreferencesState } from './preferences.svelte'

function state(stored: Preferences, system = 'en-US') {
  const saved: Preferences[] = []
  const preferences = new PreferencesState(stored, system, async (p) => {
    saved.push(p)
  })
  return { preferences, saved }
}

describe('PreferencesState', () => {
  it('starts in the system language when nothing was chosen', () => {
    expect(state({ language: null, currency: null, onboarded: false }, 'zh-CN').preferences.language).toBe('zh-CN')
    expect(state({ language: null, currency: null, onboarded: false }, 'fr-FR').preferences.language).toBe('en')
  })

  it('lets a saved language win over the system locale', () => {
    expect(state({ language: 'zh-CN', currency: 'CNY', onboarded: true }, 'en-US').preferences.language).toBe('zh-CN')
  })

  it('proposes the currency of the chosen language until the user picks one', async () => {
    const { preferences, saved } = state({ language: null, currency: null, onboarded: false }, 'en-US')
    expect(preferences.currency).toBe('USD')
    await preferences.setLanguage('zh-CN')
    expect(preferences.currency).toBe('CNY')
    expect(saved.at(-1)?.currency, 'a proposal is not a choice: nothing is saved for it').toBeNull()

    await preferences.setCurrency('EUR')
    await preferences.setLanguage('en')
    expect(preferences.currency, 'a picked currency stays when the language changes').toBe('EUR')
    expect(saved.at(-1)).toEqual({ language: 'en', currency: 'EUR', onboarded: false })
  })

  it('saves the proposed currency as chosen when first run is finished', async () => {
    const { preferences, saved } = state({ language: null, currency: null, onboarded: false }, 'zh-CN')
    await preferences.finishOnboarding()
    expect(saved.at(-1)).toEqual({ language: 'zh-CN', currency: 'CNY', onboarded: true })
  })
})

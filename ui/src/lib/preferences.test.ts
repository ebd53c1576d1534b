import { describe, expect, it } from 'vitest'
import type { Preferences } from './bindings/Preferences'
import css from '../app.css?raw'
import { applyTheme, PreferencesState } from './preferences.svelte'

function state(stored: Preferences, system = 'en-US') {
  const saved: Preferences[] = []
  const preferences = new PreferencesState(stored, system, async (p) => {
    saved.push(p)
  })
  return { preferences, saved }
}

describe('PreferencesState', () => {
  it('starts in the system language when nothing was chosen', () => {
    expect(state({ language: null, currency: null, onboarded: false, theme: 'system' }, 'zh-CN').preferences.language).toBe('zh-CN')
    expect(state({ language: null, currency: null, onboarded: false, theme: 'system' }, 'fr-FR').preferences.language).toBe('en')
  })

  it('lets a saved language win over the system locale', () => {
    expect(state({ language: 'zh-CN', currency: 'CNY', onboarded: true, theme: 'system' }, 'en-US').preferences.language).toBe('zh-CN')
  })

  it('proposes the currency of the chosen language until the user picks one', async () => {
    const { preferences, saved } = state({ language: null, currency: null, onboarded: false, theme: 'system' }, 'en-US')
    expect(preferences.currency).toBe('USD')
    await preferences.setLanguage('zh-CN')
    expect(preferences.currency).toBe('CNY')
    expect(saved.at(-1)?.currency, 'a proposal is not a choice: nothing is saved for it').toBeNull()

    await preferences.setCurrency('EUR')
    await preferences.setLanguage('en')
    expect(preferences.currency, 'a picked currency stays when the language changes').toBe('EUR')
    expect(saved.at(-1)).toEqual({ language: 'en', currency: 'EUR', onboarded: false, theme: 'system' })
  })

  it('saves the proposed currency as chosen when first run is finished', async () => {
    const { preferences, saved } = state({ language: null, currency: null, onboarded: false, theme: 'system' }, 'zh-CN')
    await preferences.finishOnboarding()
    expect(saved.at(-1)).toEqual({ language: 'zh-CN', currency: 'CNY', onboarded: true, theme: 'system' })
  })

  it("keeps the chosen theme, marks it on the page, and drops the mark for the system's", async () => {
    const { preferences, saved } = state({ language: 'en', currency: 'USD', onboarded: true, theme: 'dark' })
    expect(document.documentElement.dataset.theme).toBe('dark')
    await preferences.setTheme('light')
    expect(document.documentElement.dataset.theme).toBe('light')
    expect(saved.at(-1)?.theme).toBe('light')
    await preferences.setTheme('system')
    expect(document.documentElement.dataset.theme).toBeUndefined()
    applyTheme('system')
  })
})

describe('the stylesheet', () => {
  // Dark is written twice (system dark unless light was chosen; dark chosen): the same tokens.
  it('has the same dark tokens for the system and for a chosen dark', () => {
    const tokens = (block: string) => [...block.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => `${m[1]}: ${m[2]}`).sort()
    const system = css.match(/:root:not\(\[data-theme='light'\]\) \{([^}]*)\}/)?.[1] ?? ''
    const chosen = css.match(/:root\[data-theme='dark'\] \{([^}]*)\}/)?.[1] ?? ''
    expect(tokens(system).length).toBeGreaterThan(10)
    expect(tokens(chosen)).toEqual(tokens(system))
  })
})

import { describe, expect, it } from 'vitest'
import type { Kept } from '../../bindings/Kept'
import { isHunting, moneyInput, rowFor, secondsToDays, secondsToMinutes } from './keeper'

describe('the policy in minutes and days', () => {
  it('turns seconds into the units the card asks for', () => {
    expect(secondsToMinutes(1800)).toBe(30)
    expect(secondsToMinutes(null)).toBeNull()
    expect(secondsToDays(7 * 86_400)).toBe(7)
    expect(secondsToDays(3600)).toBe(1)
    expect(secondsToDays(null)).toBeNull()
  })
})

describe('moneyInput', () => {
  it('takes a decimal above zero, with a comma or a dot', () => {
    expect(moneyInput(' 12 ')).toBe('12')
    expect(moneyInput('0,35')).toBe('0.35')
  })
  it('refuses anything else', () => {
    for (const bad of ['', '0', '0.00', '-1', 'abc', '1e3', '1.2.3']) expect(moneyInput(bad)).toBeNull()
  })
})

describe('rowFor and isHunting', () => {
  const row = (instance: string, state: string | null): Kept => ({
    instance,
    state: 'stopped',
    hunt: state
      ? { state, deadline: '', next_try_at: '', instance, tries: 1, powered_on_at: null, gave_up: null, last_answer: '' }
      : null,
    wipe_at: null,
    policy: { stop_after_idle_s: null, release_after_stopped_s: null, auto_release: false, off: false, bid_cap: null },
    own_policy: false,
    next: { action: 'nothing', at: null, due: false, why: '' },
  })
  it('finds the instance and tells a running hunt', () => {
    const rows = [row('a', 'hunting'), row('b', 'on'), row('c', null)]
    expect(rowFor(rows, 'b')?.instance).toBe('b')
    expect(rowFor(rows, 'z')).toBeNull()
    expect(isHunting(rowFor(rows, 'a'))).toBe(true)
    expect(isHunting(rowFor(rows, 'b'))).toBe(false)
    expect(isHunting(rowFor(rows, 'c'))).toBe(false)
    expect(isHunting(null)).toBe(false)
  })
})

import { describe, expect, it } from 'vitest'
import { clockChoices } from './clock'

describe('clockChoices', () => {
  it('offers every half hour of the day on a 24-hour clock', () => {
    const times = clockChoices('23:00')
    expect(times).toHaveLength(48)
    expect(times[0]).toBe('00:00')
    expect(times[47]).toBe('23:30')
  })

  it('keeps a saved time that is not on the half hour, in its place', () => {
    const times = clockChoices('22:15')
    expect(times).toHaveLength(49)
    expect(times.indexOf('22:15')).toBe(times.indexOf('22:00') + 1)
  })
})

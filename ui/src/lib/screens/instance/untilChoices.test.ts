import { describe, expect, it } from 'vitest'
import { dayChoices, joinLocal, splitLocal, timeChoices } from './untilChoices'

describe('the forecast until choices', () => {
  const today = new Date(2026, 11, 6, 14, 17)

  it('split a moment into a local day and time and join them back', () => {
    expect(splitLocal(today)).toEqual({ day: '2026-12-06', time: '14:17' })
    expect(joinLocal('2026-12-06', '14:17').getTime()).toBe(today.getTime())
    expect(Number.isNaN(joinLocal('', '14:17').getTime())).toBe(true)
  })

  it('name the days in the app language, today and tomorrow first', () => {
    const zh = dayChoices(today, '2026-12-06', 'zh-CN')
    expect(zh).toHaveLength(14)
    expect(zh[0]).toEqual({ value: '2026-12-06', label: '今天 · 12月6日周日' })
    expect(zh[1].label).toBe('明天 · 12月7日周一')
    expect(zh[2].label).toBe('12月8日周二')
    const en = dayChoices(today, '2026-12-06', 'en')
    expect(en[0].label).toBe('today · Sun, Dec 6')
    expect(en[13].value).toBe('2026-12-19')
  })

  it('keep a day further out (a long plan) in order, and cross the year', () => {
    const far = dayChoices(today, '2027-01-30', 'en')
    expect(far.at(-1)).toEqual({ value: '2027-01-30', label: 'Sat, Jan 30' })
    const newYear = dayChoices(new Date(2026, 11, 30), '2026-12-30', 'en', 3)
    expect(newYear.map((c) => c.value)).toEqual(['2026-12-30', '2026-12-31', '2027-01-01'])
  })

  it('offer half hours on a 24-hour clock and the current time between them', () => {
    const times = timeChoices('14:17').map((c) => c.value)
    expect(times).toContain('23:30')
    expect(times.indexOf('14:17')).toBe(times.indexOf('14:00') + 1)
  })
})

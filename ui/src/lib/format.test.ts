import { describe, expect, it } from 'vitest'
import { daysLeft, formatClock, formatDuration, formatClockTime, formatKeptFor, formatList, formatMoney, formatMoneyTicks } from './format'

describe('formatClock', () => {
  it('shows hours, minutes and seconds of a running instance', () => {
    expect(formatClock(0, 'd')).toBe('0:00:00')
    expect(formatClock(7509, 'd')).toBe('2:05:09')
  })

  it('adds days past 24 hours, in the given unit', () => {
    expect(formatClock(3 * 86_400 + 7509, 'd')).toBe('3d 02:05:09')
    expect(formatClock(86_400, '天')).toBe('1天 00:00:00')
  })

  it('never shows a negative time', () => {
    expect(formatClock(-5, 'd')).toBe('0:00:00')
  })
})

describe('formatMoney', () => {
  it('formats the decimal string core sends with its currency', () => {
    expect(formatMoney('25', 'CNY', 'zh-CN')).toBe('¥25.00')
    expect(formatMoney('1234.5', 'USD', 'en')).toBe('$1,234.50')
  })

  it('formats a plan cost from the decimal string without losing digits to floating point', () => {
    expect(formatMoney('22.50', 'CNY', 'zh-CN')).toBe('¥22.50')
    expect(formatMoney('0.1', 'USD', 'en')).toBe('$0.10')
    expect(formatMoney('12345678901234.57', 'USD', 'en')).toBe('$12,345,678,901,234.57')
  })

  it('keeps more digits of a small rate instead of rounding it away', () => {
    expect(formatMoney('0.0042', 'USD', 'en')).toBe('$0.0042')
  })
})

describe('formatMoneyTicks', () => {
  it('puts every tick of a Chinese axis in 万 once the largest reaches ten thousand', () => {
    expect(formatMoneyTicks([0, 5000, 10000, 15000], 'CNY', 'zh-CN')).toEqual(['¥0', '¥0.5万', '¥1.0万', '¥1.5万'])
  })

  it('keeps small Chinese amounts in yuan with one number of decimals for the whole axis', () => {
    expect(formatMoneyTicks([0, 2.5, 5, 7.5], 'CNY', 'zh-CN')).toEqual(['¥0', '¥2.5', '¥5.0', '¥7.5'])
    expect(formatMoneyTicks([0, 1000, 2000], 'CNY', 'zh-CN')).toEqual(['¥0', '¥1,000', '¥2,000'])
  })

  it('uses K in English for the same axis, never mixing scales', () => {
    expect(formatMoneyTicks([0, 5000, 10000, 15000], 'USD', 'en')).toEqual(['$0', '$5K', '$10K', '$15K'])
  })
})

describe('formatList', () => {
  it('joins a list the way each language writes it', () => {
    expect(formatList(['GPU', 'CPU', 'Disk'], 'en')).toBe('GPU, CPU, and Disk')
    expect(formatList(['GPU', 'CPU', '磁盘'], 'zh-CN')).toBe('GPU、CPU和磁盘')
  })
})

describe('formatClockTime', () => {
  it('shows hours and minutes only, on a 24-hour clock', () => {
    const at = new Date(2026, 11, 3, 22, 35, 59)
    expect(formatClockTime(at, 'zh-CN')).toBe('22:35')
    expect(formatClockTime(at, 'en')).toBe('22:35')
  })
})

describe('daysLeft', () => {
  it('counts whole days, rounded down', () => {
    expect(daysLeft('2026-12-20T06:00:00Z', Date.parse('2026-12-05T06:00:00Z'))).toBe(15)
    expect(daysLeft('2026-12-08T05:59:00Z', Date.parse('2026-12-05T06:00:00Z'))).toBe(2)
    expect(daysLeft('2026-12-06T05:00:00Z', Date.parse('2026-12-05T06:00:00Z'))).toBe(0)
  })
  it('is 0 once the deadline passed or cannot be read', () => {
    expect(daysLeft('2026-12-01T00:00:00Z', Date.parse('2026-12-05T06:00:00Z'))).toBe(0)
    expect(daysLeft('not a time', Date.parse('2026-12-05T06:00:00Z'))).toBe(0)
  })
})

describe('formatKeptFor', () => {
  it('leads with days, then hours, then minutes, in either language', () => {
    const day = 86_400
    expect(formatKeptFor(3 * day + 4 * 3600 + 12 * 60, 'en')).toBe('3 days 4 hr')
    expect(formatKeptFor(day, 'en')).toBe('1 day')
    expect(formatKeptFor(5 * 3600 + 12 * 60 + 30, 'en')).toBe('5 hr 12 min')
    expect(formatKeptFor(40 * 60, 'en')).toBe('40 min')
    expect(formatKeptFor(5, 'en')).toBe('1 min')
    expect(formatKeptFor(3 * day + 4 * 3600, 'zh-CN')).toBe('3天 4小时')
    expect(formatKeptFor(5 * 3600 + 12 * 60, 'zh-CN')).toBe('5小时 12分钟')
  })
})

describe('formatDuration', () => {
  it('writes time in the reader’s units, hours and minutes together', () => {
    expect(formatDuration(12, 'en')).toBe('12 sec')
    expect(formatDuration(240, 'en')).toBe('4 min')
    expect(formatDuration(3900, 'en')).toBe('1 hr 5 min')
    expect(formatDuration(7200, 'en')).toBe('2 hr')
    expect(formatDuration(240, 'zh-CN')).toBe('4分钟')
    expect(formatDuration(3900, 'zh-CN')).toBe('1小时5分钟')
    expect(formatDuration(-5, 'zh-CN')).toBe('0秒')
  })
})

import { describe, expect, it } from 'vitest'
import { formatClock, formatMoney } from './format'

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

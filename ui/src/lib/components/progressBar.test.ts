// Progress bars are full at done, and a percentage reads the same everywhere in one language.
import { describe, expect, it } from 'vitest'
import { formatPercent } from '../format'
import { barWidth } from './ProgressBar.svelte'

describe('barWidth', () => {
  it('is full once done, whatever was last reported', () => {
    expect(barWidth(98, true)).toBe(100)
    expect(barWidth(null, true)).toBe(100)
  })
  it('follows the figure while running, kept within the bar', () => {
    expect(barWidth(42.5, false)).toBe(42.5)
    expect(barWidth(null, false)).toBe(0)
    expect(barWidth(130, false)).toBe(100)
    expect(barWidth(-3, false)).toBe(0)
    expect(barWidth(Number.NaN, false)).toBe(0)
  })
})

describe('formatPercent', () => {
  it('writes one style per language', () => {
    expect(formatPercent(98, 'en')).toBe('98%')
    expect(formatPercent(98, 'zh-CN')).toBe('98%')
    expect(formatPercent('88.6', 'en', 1)).toBe('88.6%')
    expect(formatPercent('88.0', 'zh-CN', 1)).toBe('88%')
    expect(formatPercent(97.6, 'en')).toBe('98%')
  })
})

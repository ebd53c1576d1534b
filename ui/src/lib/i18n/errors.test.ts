import { describe, expect, it } from 'vitest'
import en from '../../locales/en.json'
import zhCN from '../../locales/zh-CN.json'
import { toApiError, UNEXPECTED_CODE } from '../backend/ipc'
import { errorKey, localizeError } from './errors'
import { flattenKeys } from '.'

function translator(tree: Record<string, unknown>) {
  const flat = new Map<string, string>()
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string') flat.set(prefix + key, value)
      else walk(value as Record<string, unknown>, `${prefix}${key}.`)
    }
  }
  walk(tree, '')
  return { t: (key: string) => flat.get(key) ?? key, has: (key: string) => flat.has(key) }
}

describe('localizeError', () => {
  it('shows the text kept for a known code in the chosen language, not the backend text', () => {
    const error = { code: 'settings.unknown_language', message: '"fr" is not a language Leasehold speaks' }
    const chinese = translator(zhCN)
    expect(localizeError(error, chinese.t, chinese.has)).toBe(zhCN.errors.settings.unknown_language)
    const english = translator(en)
    expect(localizeError(error, english.t, english.has)).toBe(en.errors.settings.unknown_language)
  })

  it("falls back to the backend's message for a code the UI has no text for", () => {
    const error = { code: 'ssh.some_future_code', message: 'the host refused the key' }
    const chinese = translator(zhCN)
    expect(localizeError(error, chinese.t, chinese.has)).toBe('the host refused the key')
  })

  it('has a localized text for the code used when IPC itself fails', () => {
    expect(flattenKeys(en)).toContain(errorKey(UNEXPECTED_CODE))
  })
})

describe('toApiError', () => {
  it('keeps the code and message of an error that crossed IPC', () => {
    expect(toApiError({ code: 'billing.unknown_instance', message: 'no such rental' })).toEqual({
      code: 'billing.unknown_instance',
      message: 'no such rental',
    })
  })

  it('wraps anything else under the unexpected code with its text', () => {
    expect(toApiError('window closed')).toEqual({ code: UNEXPECTED_CODE, message: 'window closed' })
    expect(toApiError(new TypeError('x is undefined'))).toEqual({
      code: UNEXPECTED_CODE,
      message: 'x is undefined',
    })
  })
})

describe('localizeError next to a form field', () => {
  it("explains the field's rule for a refused value, in the chosen language", () => {
    const chinese = translator(zhCN)
    const error = { code: 'billing.invalid_price', message: 'price_per_gpu_hour must be greater than zero (got 0)' }
    expect(localizeError(error, chinese.t, chinese.has, 'price_per_gpu_hour')).toBe(
      zhCN.field_rules.price_per_gpu_hour,
    )
  })

  it('keeps the specific text of codes that are not about the value (a taken name)', () => {
    const english = translator(en)
    const error = { code: 'billing.duplicate_name', message: 'an instance named "a" already exists' }
    expect(localizeError(error, english.t, english.has, 'name')).toBe(en.errors.billing.duplicate_name)
  })
})

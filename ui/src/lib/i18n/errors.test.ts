import { describe, expect, it } from 'vitest'
import en from '../../locales/en.json'
import zhCN from '../../locales/zh-CN.json'
import type { ApiError } from '../bindings/ApiError'
import { BackendError, toApiError, UNEXPECTED_CODE } from '../backend/ipc'
import { errorKey, localizeError } from './errors'
import { flattenKeys } from '.'

/** Fills `{name}` placeholders like svelte-i18n does, and throws like it when a value is missing. */
function fill(text: string, values?: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (values?.[name] === undefined) throw new Error(`no value for ${name}`)
    return String(values[name])
  })
}

function translator(tree: Record<string, unknown>) {
  const flat = new Map<string, string>()
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string') flat.set(prefix + key, value)
      else walk(value as Record<string, unknown>, `${prefix}${key}.`)
    }
  }
  walk(tree, '')
  return {
    t: (key: string, values?: Record<string, string | number>) => fill(flat.get(key) ?? key, values),
    has: (key: string) => flat.has(key),
  }
}

describe('localizeError', () => {
  it('shows the text kept for a known code in the chosen language, not the backend text', () => {
    const error: ApiError = { code: 'settings.unknown_language', message: '"fr" is not a language Leasehold speaks' }
    const chinese = translator(zhCN)
    expect(localizeError(error, chinese.t, chinese.has)).toBe(zhCN.errors.settings.unknown_language)
    const english = translator(en)
    expect(localizeError(error, english.t, english.has)).toBe(en.errors.settings.unknown_language)
  })

  it("falls back to the backend's message for a code the UI has no text for", () => {
    // A code from a newer backend than this UI knows.
    const error = { code: 'ssh.some_future_code', message: 'the host refused the key' } as unknown as ApiError
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

  it('keeps the field and the params of a refused form, and adds no empty ones', () => {
    const refused: ApiError = { code: 'billing.unknown_currency', message: 'unknown currency "CYN"', field: 'currency', params: { currency: 'CYN' } }
    expect(toApiError(refused)).toEqual(refused)
    expect(toApiError(new BackendError(refused))).toEqual(refused)
    expect(Object.keys(toApiError(new BackendError({ code: 'x.y', message: 'm' } as unknown as ApiError)))).toEqual(['code', 'message'])
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
    const error: ApiError = { code: 'billing.invalid_price', message: 'price_per_gpu_hour must be greater than zero (got 0)' }
    expect(localizeError(error, chinese.t, chinese.has, 'price_per_gpu_hour')).toBe(
      zhCN.field_rules.price_per_gpu_hour,
    )
  })

  it('keeps the specific text of codes that are not about the value, naming the taken name', () => {
    const error: ApiError = {
      code: 'billing.duplicate_name',
      message: 'an instance named "gpu-a" already exists',
      field: 'name',
      params: { name: 'gpu-a' },
    }
    for (const tree of [en, zhCN]) {
      const { t, has } = translator(tree)
      const text = localizeError(error, t, has, 'name')
      expect(text).toContain('gpu-a')
      expect(text).toBe(fill(tree.errors.billing.duplicate_name, { name: 'gpu-a' }))
    }
  })

  it("falls back to the backend's message when the error lacks a value its text names", () => {
    const english = translator(en)
    const error: ApiError = { code: 'billing.duplicate_name', message: 'an instance named "a" already exists' }
    expect(localizeError(error, english.t, english.has)).toBe(error.message)
  })
})

// Backend errors arrive as `{code, message}`, plus the form field for refused forms and `params`
// for texts that name a value. The UI shows the text kept for the code in the user's language,
// with the params filled in, and falls back to the backend's (English) message for codes it does
// not know.
import type { ApiError } from '../bindings/ApiError'

export type Translate = (key: string, values?: Record<string, string | number>) => string
export type HasKey = (key: string) => boolean

/** Codes meaning "this value is not acceptable": next to a field, the field's own rule is clearer. */
const VALUE_CODES = new Set([
  'billing.invalid_input',
  'billing.invalid_price',
  'billing.negative_amount',
  'billing.too_large',
  'billing.unknown_currency',
  'billing.unknown_provider',
  'form.whole_number',
  'form.not_a_number',
])

export function errorKey(code: string): string {
  return `errors.${code}`
}

export function fieldRuleKey(field: string): string {
  return `field_rules.${field}`
}

export function localizeError(error: ApiError, t: Translate, has: HasKey, field?: string): string {
  if (field && VALUE_CODES.has(error.code) && has(fieldRuleKey(field))) return t(fieldRuleKey(field))
  const key = errorKey(error.code)
  if (!has(key)) return error.message
  try {
    return t(key, error.params as Record<string, string> | undefined)
  } catch {
    // A text naming a value the error did not carry: the backend's message still says what happened.
    return error.message
  }
}

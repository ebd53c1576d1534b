// Backend errors arrive as `{code, message}`. The UI shows the text kept for the code in the
// user's language and falls back to the backend's (English) message for codes it does not know.
import type { ApiError } from '../bindings/ApiError'

export type Translate = (key: string, values?: Record<string, string | number>) => string
export type HasKey = (key: string) => boolean

export function errorKey(code: string): string {
  return `errors.${code}`
}

export function localizeError(error: ApiError, t: Translate, has: HasKey): string {
  const key = errorKey(error.code)
  return has(key) ? t(key) : error.message
}

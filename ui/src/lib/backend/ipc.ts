// The single place that calls Tauri's `invoke`. Every failure is turned into a `BackendError`
// carrying the boundary's stable `{code, message}`, so components only ever match on codes.
import { invoke } from '@tauri-apps/api/core'
import type { ApiError } from '../bindings/ApiError'
import type { ErrorCode } from '../bindings/ErrorCode'
import type { Command } from '../bindings/commands'

/** Used when something other than an `ApiError` failed (IPC broken, a panic's text). */
export const UNEXPECTED_CODE: ErrorCode = 'app.unexpected'

export class BackendError extends Error {
  readonly code: ErrorCode
  /** Set when a form was refused: the field the message belongs next to. */
  readonly field: string | null
  /** Values the localized text names (`{name}`). */
  readonly params: ApiError['params']

  constructor(error: ApiError) {
    super(error.message)
    this.name = 'BackendError'
    this.code = error.code
    this.field = error.field ?? null
    this.params = error.params
  }

  toApiError(): ApiError {
    return withExtras({ code: this.code, message: this.message }, this.field, this.params)
  }
}

/** `{code, message}` plus `field` and `params` only when there are any, as the backend sends it. */
function withExtras(error: ApiError, field: unknown, params: unknown): ApiError {
  if (typeof field === 'string') error.field = field
  if (typeof params === 'object' && params !== null) error.params = params as ApiError['params']
  return error
}

function isApiError(value: unknown): value is ApiError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ApiError).code === 'string' &&
    typeof (value as ApiError).message === 'string'
  )
}

/** Whatever was thrown, as `{code, message}`. */
export function toApiError(thrown: unknown): ApiError {
  if (thrown instanceof BackendError) return thrown.toApiError()
  if (isApiError(thrown)) return withExtras({ code: thrown.code, message: thrown.message }, thrown.field, thrown.params)
  if (thrown instanceof Error) return { code: UNEXPECTED_CODE, message: thrown.message }
  return { code: UNEXPECTED_CODE, message: String(thrown) }
}

/** The field a refused form names (`ApiError.field`), if any. */
export function fieldOf(thrown: unknown): string | null {
  return toApiError(thrown).field ?? null
}

/** Call a registered command; `Command` is generated from the Rust list, so a renamed one fails tsc. */
export async function call<T>(command: Command, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args)
  } catch (thrown) {
    throw new BackendError(toApiError(thrown))
  }
}

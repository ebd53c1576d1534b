// The single place that calls Tauri's `invoke`. Every failure is turned into a `BackendError`
// carrying the boundary's stable `{code, message}`, so components only ever match on codes.
import { invoke } from '@tauri-apps/api/core'
import type { ApiError } from '../bindings/ApiError'

/** Used when something other than an `ApiError` failed (IPC broken, a panic's text). */
export const UNEXPECTED_CODE = 'app.unexpected'

export class BackendError extends Error {
  readonly code: string

  constructor(error: ApiError) {
    super(error.message)
    this.name = 'BackendError'
    this.code = error.code
  }

  toApiError(): ApiError {
    return { code: this.code, message: this.message }
  }
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
  if (isApiError(thrown)) return { code: thrown.code, message: thrown.message }
  if (thrown instanceof Error) return { code: UNEXPECTED_CODE, message: thrown.message }
  return { code: UNEXPECTED_CODE, message: String(thrown) }
}

export async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args)
  } catch (thrown) {
    throw new BackendError(toApiError(thrown))
  }
}

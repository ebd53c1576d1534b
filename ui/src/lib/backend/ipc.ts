// The single place that calls Tauri's `invoke`. Every failure is turned into a `BackendError`
// carrying the boundary's stable `{code, message}`, so components only ever match on codes.
import { invoke } from '@tauri-apps/api/core'
import type { ApiError } from '../bindings/ApiError'

/** Used when something other than an `ApiError` failed (IPC broken, a panic's text). */
export const UNEXPECTED_CODE = 'app.unexpected'

export class BackendError extends Error {
  readonly code: string
  /** Set when a form was refused: the field the message belongs next to. */
  readonly field: string | null

  constructor(error: ApiError & { field?: string | null }) {
    super(error.message)
    this.name = 'BackendError'
    this.code = error.code
    this.field = error.field ?? null
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

/** The field a refused form names (see `FormError`), if any. */
export function fieldOf(thrown: unknown): string | null {
  if (thrown instanceof BackendError) return thrown.field
  const field = (thrown as { field?: unknown } | null)?.field
  return typeof field === 'string' ? field : null
}

export async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args)
  } catch (thrown) {
    throw new BackendError({ ...toApiError(thrown), field: fieldOf(thrown) })
  }
}

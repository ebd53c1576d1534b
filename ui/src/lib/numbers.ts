// Number fields as typed: only their shape is checked here (so they can cross IPC as decimals
// or integers); every rule about their values lives in core.
import type { ApiError } from './bindings/ApiError'

/** A decimal as Rust's `Decimal` reads it; the sign is kept so core can name a negative value. */
const DECIMAL = /^-?(\d+\.?\d*|\.\d+)$/
const WHOLE = /^\d+$/

export type ShapeErrors = Record<string, ApiError>

/** Collects shape errors while a form is converted, one per field. */
export class NumberShapes {
  errors: ShapeErrors = {}

  /** Trimmed decimal text, `null` when empty or malformed (malformed is recorded). */
  decimal(field: string, text: string): string | null {
    const trimmed = text.trim()
    if (trimmed === '') return null
    if (DECIMAL.test(trimmed)) return trimmed
    this.errors[field] = { code: 'form.not_a_number', message: `${field}: ${JSON.stringify(text)} is not a number` }
    return null
  }

  /** Like `decimal`, but empty means zero (an optional fee not charged). */
  fee(field: string, text: string): string {
    return this.decimal(field, text) ?? '0'
  }

  whole(field: string, text: string): number | null {
    const trimmed = text.trim()
    if (trimmed === '') return null
    if (WHOLE.test(trimmed)) return Number(trimmed)
    this.errors[field] = { code: 'form.whole_number', message: `${field} must be a whole number` }
    return null
  }

  get ok(): boolean {
    return Object.keys(this.errors).length === 0
  }
}

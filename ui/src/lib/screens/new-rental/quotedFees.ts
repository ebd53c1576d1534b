// The new-rental extras quoted per day, month or GB: each one goes to core's `fee_per_hour`, which
// answers the hourly fee the rules keep (or refuses it, naming the field). Nothing is worked out
// here; this only gathers the questions and files the answers and refusals by form field.
import type { ApiError } from '../../bindings/ApiError'
import type { FeePer } from '../../bindings/FeePer'
import type { HourlyExtra } from '../../bindings/HourlyExtra'
import type { QuotedFee } from '../../bindings/QuotedFee'
import { NumberShapes } from '../../numbers'
import type { HourlyFees, RentalDraft } from './draft'

export interface QuotedExtra {
  extra: HourlyExtra
  amount: keyof HourlyFees
  per: 'data_disk_per' | 'snapshot_per' | 'public_ip_per'
  /** The size field a per-GB quote needs; the public IP has none. */
  size: 'data_disk_size_gb' | 'snapshot_size_gb' | null
}

export const QUOTED_EXTRAS: readonly QuotedExtra[] = [
  { extra: 'data_disk', amount: 'data_disk_per_hour', per: 'data_disk_per', size: 'data_disk_size_gb' },
  { extra: 'snapshot', amount: 'snapshot_per_hour', per: 'snapshot_per', size: 'snapshot_size_gb' },
  { extra: 'public_ip', amount: 'public_ip_per_hour', per: 'public_ip_per', size: null },
]

/** The locale key of each unit's label ("元/GB·天"), given `currency`. */
export const UNIT_KEYS: Record<FeePer, string> = {
  hour: 'units.per_instance_hour_unit',
  day: 'units.per_day_unit',
  month: 'units.per_month_unit',
  gb_day: 'units.per_gb_day_unit',
  gb_month: 'units.per_gb_month_unit',
}

/** Whether a quote in `per` is multiplied by a size in GB. */
export const isPerGb = (per: FeePer): boolean => per === 'gb_day' || per === 'gb_month'

/** Whether a quote in `per` is spread over a (30-day) month. */
export const isMonthly = (per: FeePer): boolean => per === 'month' || per === 'gb_month'

/** The units each extra may be quoted in: per GB only where there is a size to multiply by. */
export function unitsFor(extra: QuotedExtra): FeePer[] {
  return extra.size ? ['hour', 'day', 'month', 'gb_day', 'gb_month'] : ['hour', 'day', 'month']
}

export type AskCore = (args: { extra: HourlyExtra; fee: QuotedFee }) => Promise<string>

/**
 * The quote of one extra as core reads it, or null when it is hourly, empty, or not shaped like a
 * number (recorded in `shapes`). An empty size goes as null: core says a per-GB quote needs one.
 */
export function quoteOf(draft: RentalDraft, extra: QuotedExtra, shapes = new NumberShapes()): QuotedFee | null {
  const per = draft[extra.per] ?? 'hour'
  if (per === 'hour') return null
  const amount = shapes.decimal(extra.amount, draft[extra.amount])
  if (amount === null) return null
  let size: string | null = null
  if (extra.size && isPerGb(per) && draft[extra.size].trim() !== '') {
    // A size that is not a number is recorded in `shapes`; no question goes to core for it.
    size = shapes.decimal(extra.size, draft[extra.size])
    if (size === null) return null
  }
  return { amount, per, size_gb: size }
}

/**
 * Core's hourly fee for every extra quoted in another unit. Refusals (and numbers not shaped like
 * numbers) come back by the form field they belong next to.
 */
export async function hourlyFees(
  draft: RentalDraft,
  ask: AskCore,
  fieldOf: (thrown: unknown) => string | null,
  toApiError: (thrown: unknown) => ApiError,
): Promise<{ hourly: HourlyFees; errors: Record<string, ApiError> }> {
  const hourly: HourlyFees = {}
  const shapes = new NumberShapes()
  const errors: Record<string, ApiError> = {}
  for (const extra of QUOTED_EXTRAS) {
    const fee = quoteOf(draft, extra, shapes)
    if (!fee) continue
    try {
      hourly[extra.amount] = await ask({ extra: extra.extra, fee })
    } catch (thrown) {
      errors[fieldOf(thrown) ?? extra.amount] = toApiError(thrown)
    }
  }
  return { hourly, errors: { ...shapes.errors, ...errors } }
}

// The "New rental" form as typed (all text, as inputs hold it) and its conversion into core's
// `NewInstance`. Only the shape is handled here (empty optional → null, fees default to 0);
// whether a value is acceptable is decided by core's `validate_rental`.
import type { ApiError } from '../../bindings/ApiError'
import { NumberShapes } from '../../numbers'
import type { BillingStart } from '../../bindings/BillingStart'
import type { FeePer } from '../../bindings/FeePer'
import type { Granularity } from '../../bindings/Granularity'
import type { NewInstance } from '../../bindings/NewInstance'
import type { ProviderPreset } from '../../bindings/ProviderPreset'
import type { StoppedBilling } from '../../bindings/StoppedBilling'

export type StoppedKind = StoppedBilling['kind']

export interface RentalDraft {
  provider: string
  name: string
  gpu_model: string
  gpu_count: string
  price_per_gpu_hour: string
  currency: string
  region: string
  billing_starts: BillingStart
  granularity: Granularity
  stopped_kind: StoppedKind
  stopped_rate: string
  no_gpu_mode: boolean
  no_gpu_rate: string
  wipe_after_stopped_days: string
  /** The three hourly extras hold the amount as quoted, in the unit beside it (`…_per`); core
      turns a daily, monthly or per-GB quote into the hourly fee (see `quotedFees.ts`). */
  data_disk_per_hour: string
  data_disk_per: FeePer
  data_disk_size_gb: string
  snapshot_per_hour: string
  snapshot_per: FeePer
  snapshot_size_gb: string
  public_ip_per_hour: string
  public_ip_per: FeePer
  traffic_per_gb: string
  budget: string
  planned_hours: string
  notes: string
  /** Record a power-on right after creating (most providers hand over a running instance). */
  power_on_now: boolean
}

export const GPU_COUNTS = ['1', '2', '3', '4', '5', '6', '7', '8', '10', '16'] as const

export function emptyDraft(currency: string): RentalDraft {
  return {
    provider: 'custom',
    name: '',
    gpu_model: '',
    gpu_count: '1',
    price_per_gpu_hour: '',
    currency,
    region: '',
    billing_starts: 'created',
    granularity: 'second',
    stopped_kind: 'none',
    stopped_rate: '',
    no_gpu_mode: false,
    no_gpu_rate: '',
    wipe_after_stopped_days: '',
    data_disk_per_hour: '',
    data_disk_per: 'hour',
    data_disk_size_gb: '',
    snapshot_per_hour: '',
    snapshot_per: 'hour',
    snapshot_size_gb: '',
    public_ip_per_hour: '',
    public_ip_per: 'hour',
    traffic_per_gb: '',
    budget: '',
    planned_hours: '',
    notes: '',
    power_on_now: true,
  }
}

/** Fill the rule fields and the currency a provider preset knows; prices and everything else stay as typed. */
export function applyPreset(draft: RentalDraft, preset: ProviderPreset): void {
  draft.provider = preset.key
  draft.billing_starts = preset.billing_starts
  draft.granularity = preset.granularity
  draft.stopped_kind = preset.stopped_billing_kind as StoppedKind
  draft.wipe_after_stopped_days =
    preset.wipe_after_stopped_days === null ? '' : String(preset.wipe_after_stopped_days)
  draft.no_gpu_mode = preset.no_gpu_mode
  // The provider bills in its own currency (USD on RunPod, Vast.ai, Lambda, AWS, GCP).
  draft.currency = preset.currency
}

/** Core's field names where they differ from the form's. */
export const CORE_FIELD_TO_FORM: Record<string, string> = { stopped_billing: 'stopped_rate' }


export type Converted = { rental: NewInstance; errors: null } | { rental: null; errors: Record<string, ApiError> }

/** Hourly fees core worked out from quotes in another unit, by form field. */
export type HourlyFees = Partial<Record<'data_disk_per_hour' | 'snapshot_per_hour' | 'public_ip_per_hour', string>>

/**
 * The draft as core's `NewInstance`. Numbers must have a number's shape to cross IPC at all, so
 * that alone is checked here (`form.not_a_number`, `form.whole_number`); every rule about their
 * values (above zero, not negative, at most …) is core's. `hourly` holds core's hourly figure for
 * an extra quoted per day, month or GB (`quotedFees.ts`); the others are already hourly.
 */
export function toNewInstance(draft: RentalDraft, hourly: HourlyFees = {}): Converted {
  const shapes = new NumberShapes()
  const decimal = shapes.decimal.bind(shapes)
  const fee = shapes.fee.bind(shapes)
  const whole = shapes.whole.bind(shapes)
  const optional = (text: string): string | null => (text.trim() === '' ? null : text.trim())
  const gpuCount = whole('gpu_count', draft.gpu_count)
  const wipeDays = whole('wipe_after_stopped_days', draft.wipe_after_stopped_days)
  const stopped_billing: StoppedBilling =
    draft.stopped_kind === 'none'
      ? { kind: 'none' }
      : { kind: draft.stopped_kind, rate: fee('stopped_rate', draft.stopped_rate) }
  const rental: NewInstance = {
    name: draft.name,
    provider: draft.provider,
    region: optional(draft.region),
    gpu_model: draft.gpu_model,
    currency: draft.currency,
    notes: optional(draft.notes),
    planned_hours: decimal('planned_hours', draft.planned_hours),
    budget: decimal('budget', draft.budget),
    rules: {
      // An empty price goes to core as "0" so core's own rule ("greater than zero") answers.
      price_per_gpu_hour: fee('price_per_gpu_hour', draft.price_per_gpu_hour),
      gpu_count: gpuCount ?? 0,
      billing_starts: draft.billing_starts,
      stopped_billing,
      no_gpu_rate: draft.no_gpu_mode ? fee('no_gpu_rate', draft.no_gpu_rate) : null,
      data_disk_per_hour: fee('data_disk_per_hour', hourly.data_disk_per_hour ?? draft.data_disk_per_hour),
      snapshot_per_hour: fee('snapshot_per_hour', hourly.snapshot_per_hour ?? draft.snapshot_per_hour),
      public_ip_per_hour: fee('public_ip_per_hour', hourly.public_ip_per_hour ?? draft.public_ip_per_hour),
      traffic_per_gb: fee('traffic_per_gb', draft.traffic_per_gb),
      granularity: draft.granularity,
      wipe_after_stopped_days: wipeDays,
    },
  }
  return shapes.ok ? { rental, errors: null } : { rental: null, errors: shapes.errors }
}

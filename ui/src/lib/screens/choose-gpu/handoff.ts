// "Rent this": the chosen GPU goes into the New rental wizard's draft, the same draft that wizard
// restores when it opens, so the form starts filled in (GPU, count, planned hours, and the price
// when one is known) without the two screens knowing each other.
import type { Candidate } from '../../bindings/Candidate'
import { DRAFT_VERSION } from '../../wizard/wizard.svelte'
import { shortGpuName } from './format'

export const NEW_RENTAL_WIZARD = 'new_rental'

/** The New rental fields this screen fills, as that form keeps them (text, as typed). */
export interface RentalChoice {
  gpu_model: string
  gpu_count: string
  planned_hours: string
  /** Per card per hour; only when the user gave one. */
  price_per_gpu_hour?: string
  currency?: string
}

export function choiceFor(candidate: Candidate, plannedHours: string | null): RentalChoice {
  const choice: RentalChoice = {
    gpu_model: shortGpuName(candidate.gpu),
    gpu_count: String(candidate.count),
    planned_hours: plannedHours ?? '',
  }
  if (candidate.price_per_hour !== null && candidate.currency !== null) {
    choice.price_per_gpu_hour = candidate.price_per_hour
    choice.currency = candidate.currency
  }
  return choice
}

interface Draft {
  version: number
  step: string | null
  furthest: number
  values: Record<string, unknown>
}

/**
 * The New rental draft with the choice written in. What the user already typed there (name,
 * provider, billing rules) is kept; the wizard reopens at its first step (`step: null`) so the
 * new GPU is seen before anything is saved.
 */
export function draftWithChoice(existing: unknown, choice: RentalChoice): Draft {
  const usable =
    typeof existing === 'object' &&
    existing !== null &&
    (existing as Draft).version === DRAFT_VERSION &&
    typeof (existing as Draft).values === 'object' &&
    (existing as Draft).values !== null
  const previous = usable ? (existing as Draft) : null
  return {
    version: DRAFT_VERSION,
    step: null,
    furthest: previous ? Number(previous.furthest) || 0 : 0,
    values: { ...(previous?.values ?? {}), ...choice },
  }
}

// The price list handed to the recommender: what the user typed on this screen first (it wins),
// then what they paid for earlier rentals (core reads those from the ledger). Nothing else:
// Leasehold knows no provider's prices.
import type { Candidate } from '../../bindings/Candidate'
import type { EarlierPrice } from '../../bindings/EarlierPrice'
import type { PriceEntry } from '../../bindings/PriceEntry'
import { positiveDecimal } from './inputs'

/** A price typed next to a candidate, per card per hour. */
export interface TypedPrice {
  gpu_id: string
  /** The catalog name, which core resolves back to `gpu_id`. */
  gpu: string
  price_per_hour: string
  currency: string
}

/** Typed prices first: the recommender takes the first entry it finds for a card. */
export function priceList(typed: readonly TypedPrice[], earlier: readonly EarlierPrice[], currency: string): PriceEntry[] {
  const entries: PriceEntry[] = []
  for (const price of typed) {
    if (price.currency === currency) {
      entries.push({ gpu: price.gpu, price_per_hour: price.price_per_hour, currency, origin: 'entered' })
    }
  }
  for (const price of earlier) {
    if (price.currency === currency && !typed.some((t) => t.gpu_id === price.gpu_id && t.currency === currency)) {
      entries.push({ gpu: price.gpu, price_per_hour: price.price_per_hour, currency, origin: 'earlier_rental' })
    }
  }
  return entries
}

export type PriceSource = { kind: 'typed' } | { kind: 'earlier'; instance: string } | { kind: 'none' }

export function priceSource(
  candidate: Candidate,
  typed: readonly TypedPrice[],
  earlier: readonly EarlierPrice[],
): PriceSource {
  if (candidate.price_per_hour === null) return { kind: 'none' }
  if (typed.some((t) => t.gpu_id === candidate.gpu_id)) return { kind: 'typed' }
  const paid = earlier.find((e) => e.gpu_id === candidate.gpu_id)
  return paid ? { kind: 'earlier', instance: paid.instance } : { kind: 'none' }
}

/**
 * Add or replace the typed price for a card. Returns the new list, or null when the text is not
 * a price (empty text removes the card's typed price instead).
 */
export function setTypedPrice(
  typed: readonly TypedPrice[],
  candidate: Pick<Candidate, 'gpu_id' | 'gpu'>,
  text: string,
  currency: string,
): TypedPrice[] | null {
  const others = typed.filter((t) => t.gpu_id !== candidate.gpu_id)
  if (text.trim() === '') return others
  const price = positiveDecimal(text)
  if (price === null) return null
  return [...others, { gpu_id: candidate.gpu_id, gpu: candidate.gpu, price_per_hour: price, currency }]
}

/** Typed prices read back from a draft, anything malformed dropped. */
export function typedPricesFromDraft(saved: unknown): TypedPrice[] {
  if (!Array.isArray(saved)) return []
  return saved.filter(
    (entry): entry is TypedPrice =>
      typeof entry === 'object' &&
      entry !== null &&
      ['gpu_id', 'gpu', 'price_per_hour', 'currency'].every((key) => typeof entry[key] === 'string') &&
      positiveDecimal(entry.price_per_hour) !== null,
  )
}

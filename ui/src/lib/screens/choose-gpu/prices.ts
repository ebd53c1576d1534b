// The price list handed to the recommender: what the user typed on this screen first (core takes
// the first price it finds for a card, so a typed price wins), then what they paid for earlier
// rentals (core reads those from the ledger). Nothing else: Leasehold knows no provider's prices.
import type { Candidate } from '../../bindings/Candidate'
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

/** Only prices in `currency`: core compares plans in one currency. */
export function priceList(typed: readonly TypedPrice[], earlier: readonly PriceEntry[], currency: string): PriceEntry[] {
  const same = (code: string) => code.toUpperCase() === currency.toUpperCase()
  return [
    ...typed
      .filter((price) => same(price.currency))
      .map((price): PriceEntry => ({ gpu: price.gpu, price_per_hour: price.price_per_hour, currency, origin: 'entered' })),
    ...earlier.filter((price) => same(price.currency)).map((price): PriceEntry => ({ ...price, origin: 'earlier_rental' })),
  ]
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

import { describe, expect, it } from 'vitest'
import type { PriceEntry } from '../../bindings/PriceEntry'
import { priceList, setTypedPrice, typedPricesFromDraft, type TypedPrice } from './prices'

const rtx4090 = { gpu_id: 'rtx-4090', gpu: 'NVIDIA GeForce RTX 4090' }
const paid4090: PriceEntry = { gpu: 'RTX 4090', price_per_hour: '1.98', currency: 'CNY', origin: 'earlier_rental' }
const paidA100: PriceEntry = { gpu: 'A100 80GB', price_per_hour: '6.68', currency: 'CNY', origin: 'earlier_rental' }

describe('the price list for the recommender', () => {
  it('puts a price typed here before the price paid earlier, so the typed one wins for that card', () => {
    const typed = setTypedPrice([], rtx4090, '2.20', 'CNY')!
    expect(priceList(typed, [paid4090, paidA100], 'CNY')).toEqual([
      { gpu: 'NVIDIA GeForce RTX 4090', price_per_hour: '2.2', currency: 'CNY', origin: 'entered' },
      paid4090,
      paidA100,
    ])
  })

  it('leaves out prices in another currency, which core could not compare', () => {
    const typed: TypedPrice[] = [{ ...rtx4090, price_per_hour: '0.69', currency: 'USD' }]
    const paidInDollars: PriceEntry = { ...paidA100, currency: 'USD' }
    expect(priceList(typed, [paid4090, paidInDollars], 'cny')).toEqual([paid4090])
  })

  it('refuses a typed price that is not a positive number and removes it when emptied', () => {
    const typed = setTypedPrice([], rtx4090, '2.5', 'CNY')!
    expect(setTypedPrice(typed, rtx4090, 'abc', 'CNY')).toBeNull()
    expect(setTypedPrice(typed, rtx4090, '-1', 'CNY')).toBeNull()
    expect(setTypedPrice(typed, rtx4090, '', 'CNY')).toEqual([])
    expect(setTypedPrice(typed, rtx4090, '3', 'CNY')).toEqual([{ ...rtx4090, price_per_hour: '3', currency: 'CNY' }])
  })

  it('reads typed prices back from a draft, dropping malformed ones', () => {
    const good = { ...rtx4090, price_per_hour: '2.5', currency: 'CNY' }
    expect(typedPricesFromDraft([good, { gpu_id: 'x' }, null, { ...good, price_per_hour: '-2' }])).toEqual([good])
    expect(typedPricesFromDraft('nope')).toEqual([])
  })
})

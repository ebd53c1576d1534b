import { describe, expect, it } from 'vitest'
import type { Candidate } from '../../bindings/Candidate'
import type { EarlierPrice } from '../../bindings/EarlierPrice'
import { priceList, priceSource, setTypedPrice, typedPricesFromDraft, type TypedPrice } from './prices'

const rtx4090 = { gpu_id: 'rtx-4090', gpu: 'NVIDIA GeForce RTX 4090' }
const earlier4090: EarlierPrice = {
  gpu: 'RTX 4090',
  gpu_id: 'rtx-4090',
  price_per_hour: '1.98',
  currency: 'CNY',
  instance: 'lora-run',
  since: '2026-03-01T09:00:00Z',
}
const earlierA100: EarlierPrice = { ...earlier4090, gpu: 'A100 80GB', gpu_id: 'a100-pcie-80gb', price_per_hour: '6.68' }

function candidate(overrides: Partial<Candidate>): Candidate {
  return {
    gpu: 'NVIDIA GeForce RTX 4090',
    gpu_id: 'rtx-4090',
    count: 1,
    vram_gib: 24,
    need_gib: 21.1,
    fits: true,
    headroom_pct: 12,
    class: 'consumer',
    price_per_hour: null,
    plan_cost: null,
    currency: null,
    price_origin: null,
    fp16_tensor_tflops: 165,
    notes: [],
    ...overrides,
  }
}

describe('the price list for the recommender', () => {
  it('puts a price typed here before the price paid earlier for the same card, so the typed one wins', () => {
    const typed = setTypedPrice([], rtx4090, '2.20', 'CNY')!
    expect(priceList(typed, [earlier4090, earlierA100], 'CNY')).toEqual([
      { gpu: 'NVIDIA GeForce RTX 4090', price_per_hour: '2.2', currency: 'CNY', origin: 'entered' },
      { gpu: 'A100 80GB', price_per_hour: '6.68', currency: 'CNY', origin: 'earlier_rental' },
    ])
  })

  it('leaves out prices in another currency, which core could not compare', () => {
    const typed: TypedPrice[] = [{ ...rtx4090, price_per_hour: '0.69', currency: 'USD' }]
    expect(priceList(typed, [earlier4090], 'CNY')).toEqual([
      { gpu: 'RTX 4090', price_per_hour: '1.98', currency: 'CNY', origin: 'earlier_rental' },
    ])
  })

  it('refuses a typed price that is not a positive number and removes it when emptied', () => {
    const typed = setTypedPrice([], rtx4090, '2.5', 'CNY')!
    expect(setTypedPrice(typed, rtx4090, 'abc', 'CNY')).toBeNull()
    expect(setTypedPrice(typed, rtx4090, '-1', 'CNY')).toBeNull()
    expect(setTypedPrice(typed, rtx4090, '', 'CNY')).toEqual([])
    expect(setTypedPrice(typed, rtx4090, '3', 'CNY')).toEqual([{ ...rtx4090, price_per_hour: '3', currency: 'CNY' }])
  })

  it('says where a shown price came from', () => {
    const typed = setTypedPrice([], rtx4090, '2.5', 'CNY')!
    expect(priceSource(candidate({ price_per_hour: '2.5' }), typed, [earlier4090])).toEqual({ kind: 'typed' })
    expect(priceSource(candidate({ price_per_hour: '1.98' }), [], [earlier4090])).toEqual({
      kind: 'earlier',
      instance: 'lora-run',
    })
    expect(priceSource(candidate({}), typed, [earlier4090]), 'no price shown, no source').toEqual({ kind: 'none' })
  })

  it('reads typed prices back from a draft, dropping malformed ones', () => {
    const good = { ...rtx4090, price_per_hour: '2.5', currency: 'CNY' }
    expect(typedPricesFromDraft([good, { gpu_id: 'x' }, null, { ...good, price_per_hour: '-2' }])).toEqual([good])
    expect(typedPricesFromDraft('nope')).toEqual([])
  })
})

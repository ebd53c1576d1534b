import { describe, expect, it } from 'vitest'
import type { MemoryParts } from '../../bindings/MemoryParts'
import { segments } from './parts'

const parts = (overrides: Partial<MemoryParts>): MemoryParts => ({
  weights_gib: 0,
  kv_cache_gib: 0,
  activations_gib: 0,
  gradients_gib: 0,
  optimizer_gib: 0,
  overhead_gib: 0,
  ...overrides,
})

const total = (list: { width: number }[]) => list.reduce((sum, s) => sum + s.width, 0)

describe('segments of the memory bar', () => {
  it('are as wide as their share of the total when every part is large enough to see', () => {
    const bar = segments(parts({ weights_gib: 14, kv_cache_gib: 2, overhead_gib: 4 }))
    expect(bar.map((s) => s.key)).toEqual(['weights', 'kv_cache', 'overhead'])
    expect(bar.map((s) => Math.round(s.width * 10) / 10)).toEqual([70, 10, 20])
  })

  it('leave out parts that are zero (inference has no gradients or optimizer states)', () => {
    const bar = segments(parts({ weights_gib: 14.2, kv_cache_gib: 0.5, activations_gib: 0.3, overhead_gib: 1.1 }))
    expect(bar.map((s) => s.key)).not.toContain('gradients')
    expect(bar.map((s) => s.key)).not.toContain('optimizer')
  })

  it('give a tiny part a visible sliver taken from the big parts, still adding up to the whole bar', () => {
    // LoRA on 7B: 0.15 GiB of gradients next to 14 GiB of weights is 0.7 % of the bar.
    const bar = segments(
      parts({ weights_gib: 14.34, activations_gib: 5.02, gradients_gib: 0.15, optimizer_gib: 0.3, overhead_gib: 1.29 }),
      1.5,
    )
    const gradients = bar.find((s) => s.key === 'gradients')!
    expect(gradients.width).toBeCloseTo(1.5, 5)
    expect(total(bar)).toBeCloseTo(100, 6)
    const weights = bar.find((s) => s.key === 'weights')!
    const activations = bar.find((s) => s.key === 'activations')!
    expect(weights.width / activations.width, 'big parts keep roughly their proportion').toBeGreaterThan(2.6)
    expect(weights.width).toBeLessThan((14.34 / 21.1) * 100)
  })

  it('draw nothing for an empty estimate instead of dividing by zero', () => {
    expect(segments(parts({}))).toEqual([])
  })
})

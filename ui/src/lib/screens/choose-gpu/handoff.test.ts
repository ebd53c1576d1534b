import { describe, expect, it } from 'vitest'
import type { Candidate } from '../../bindings/Candidate'
import { DRAFT_VERSION } from '../../wizard/wizard.svelte'
import { choiceFor, draftWithChoice } from './handoff'

const twoA100: Candidate = {
  gpu: 'NVIDIA A100-SXM4-80GB',
  gpu_id: 'a100-sxm4-80gb',
  count: 2,
  vram_gib: 80,
  need_gib: 60,
  fits: true,
  headroom_pct: 25,
  class: 'datacenter',
  price_per_hour: '6.5',
  plan_cost: '130',
  currency: 'CNY',
  price_origin: 'entered',
  fp16_tensor_tflops: 312,
  notes: [],
}

describe('"Rent this"', () => {
  it('fills the GPU, the count, the planned hours and the known price', () => {
    expect(choiceFor(twoA100, '10')).toEqual({
      gpu_model: 'A100-SXM4-80GB',
      gpu_count: '2',
      planned_hours: '10',
      price_per_gpu_hour: '6.5',
      currency: 'CNY',
    })
  })

  it('leaves the price to the form when none is known', () => {
    const choice = choiceFor({ ...twoA100, price_per_hour: null, plan_cost: null, currency: null, price_origin: null }, null)
    expect(choice).toEqual({ gpu_model: 'A100-SXM4-80GB', gpu_count: '2', planned_hours: '' })
  })

  it("keeps what was already typed in New rental and reopens it at the first step", () => {
    const existing = { version: DRAFT_VERSION, step: 'billing', furthest: 2, values: { name: 'my-run', gpu_model: 'T4' } }
    const draft = draftWithChoice(existing, choiceFor(twoA100, '10'))
    expect(draft.step).toBeNull()
    expect(draft.furthest).toBe(2)
    expect(draft.values).toMatchObject({ name: 'my-run', gpu_model: 'A100-SXM4-80GB', gpu_count: '2' })
  })

  it('starts a fresh draft when there is none or it is from another format', () => {
    for (const existing of [null, 'garbage', { version: DRAFT_VERSION + 1, values: { name: 'old' } }]) {
      const draft = draftWithChoice(existing, choiceFor(twoA100, '10'))
      expect(draft).toEqual({ version: DRAFT_VERSION, step: null, furthest: 0, values: choiceFor(twoA100, '10') })
    }
  })
})

import { describe, expect, it } from 'vitest'
import type { ProviderPreset } from '../../bindings/ProviderPreset'
import { applyPreset, emptyDraft, toNewInstance } from './draft'

const autodl: ProviderPreset = {
  key: 'autodl',
  display_name: 'AutoDL',
  billing_starts: 'running',
  stopped_billing_kind: 'none',
  granularity: 'second',
  wipe_after_stopped_days: 15,
  no_gpu_mode: true,
  machine: 'container',
  source: null,
  currency: 'CNY',
  region_example: '西北B区',
}

describe('applyPreset', () => {
  it('fills the rule fields and leaves the price and name as typed', () => {
    const draft = emptyDraft('CNY')
    draft.name = 'lora-4090'
    draft.price_per_gpu_hour = '2.50'
    applyPreset(draft, autodl)
    expect(draft).toMatchObject({
      provider: 'autodl',
      billing_starts: 'running',
      wipe_after_stopped_days: '15',
      no_gpu_mode: true,
      name: 'lora-4090',
      price_per_gpu_hour: '2.50',
    })
  })

  it('takes the currency the provider bills in', () => {
    const draft = emptyDraft('CNY')
    applyPreset(draft, { ...autodl, key: 'runpod', display_name: 'RunPod', currency: 'USD' })
    expect(draft.currency).toBe('USD')
  })
})

describe('toNewInstance', () => {
  it('turns the typed form into the NewInstance core expects', () => {
    const draft = emptyDraft('CNY')
    applyPreset(draft, autodl)
    Object.assign(draft, {
      name: 'lora-4090',
      gpu_model: 'RTX 4090',
      gpu_count: '2',
      price_per_gpu_hour: '2.50',
      stopped_kind: 'storage',
      stopped_rate: '0.10',
      no_gpu_rate: '0.10',
      data_disk_per_hour: '0.01',
      budget: '100',
      planned_hours: '',
    })
    const { rental, errors } = toNewInstance(draft)
    expect(errors).toBeNull()
    expect(rental).toMatchObject({
      name: 'lora-4090',
      provider: 'autodl',
      currency: 'CNY',
      planned_hours: null,
      budget: '100',
      region: null,
      rules: {
        price_per_gpu_hour: '2.50',
        gpu_count: 2,
        billing_starts: 'running',
        stopped_billing: { kind: 'storage', rate: '0.10' },
        no_gpu_rate: '0.10',
        data_disk_per_hour: '0.01',
        snapshot_per_hour: '0',
        wipe_after_stopped_days: 15,
      },
    })
  })

  it('sends no no-GPU rate when the provider has no such mode', () => {
    const draft = emptyDraft('USD')
    draft.no_gpu_rate = '0.5'
    expect(toNewInstance(draft).rental?.rules.no_gpu_rate).toBeNull()
  })

  it('names a number field holding text instead of sending it (core checks values, not shapes)', () => {
    const draft = emptyDraft('USD')
    draft.price_per_gpu_hour = '2,5元'
    draft.data_disk_per_hour = '-1'
    const { rental, errors } = toNewInstance(draft)
    expect(rental).toBeNull()
    expect(errors?.price_per_gpu_hour?.code).toBe('form.not_a_number')
    expect(errors?.data_disk_per_hour, 'a negative number is left for core to refuse').toBeUndefined()
  })

  it('names a count that is not a whole number instead of sending it', () => {
    const draft = emptyDraft('USD')
    draft.wipe_after_stopped_days = '1.5'
    const { rental, errors } = toNewInstance(draft)
    expect(rental).toBeNull()
    expect(errors?.wipe_after_stopped_days?.code).toBe('form.whole_number')
  })
})

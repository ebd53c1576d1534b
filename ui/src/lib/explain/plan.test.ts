import { describe, expect, it } from 'vitest'
import { emptyPlan, fieldsFrom, requestFrom } from './plan'

describe('plan fields', () => {
  it('make no request until the size is a positive number and the counts are whole', () => {
    expect(requestFrom(emptyPlan())).toBeNull()
    expect(requestFrom({ ...emptyPlan(), params_b: 'seven' })).toBeNull()
    expect(requestFrom({ ...emptyPlan(), params_b: '7', batch: '2.5' })).toBeNull()
  })

  it('round-trip a saved plan and keep the settings the box does not show', () => {
    const saved = { params_b: 7, task: 'full' as const, precision: 'bf16' as const, context: 2048, batch: 8, optimizer: 'adamw8bit' as const, grad_checkpointing: true, lora_rank: 32 }
    const fields = fieldsFrom(saved)
    expect(fields).toEqual({ task: 'full', params_b: '7', precision: 'bf16', context: '2048', batch: '8' })
    expect(requestFrom({ ...fields, batch: '4' }, saved)).toEqual({ ...saved, model: undefined, batch: 4 })
  })
})

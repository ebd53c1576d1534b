import { describe, expect, it } from 'vitest'
import {
  CUSTOM_MODEL,
  DEFAULT_INPUTS,
  inputsFromDraft,
  plannedHours,
  positiveDecimal,
  precisionsFor,
  problems,
  toEstimateRequest,
  withTask,
} from './inputs'

describe('the Choose GPU form', () => {
  it('sends a preset by name and a custom size as billions, never both', () => {
    const preset = toEstimateRequest({ ...DEFAULT_INPUTS, model: 'llama3.1-70b' })
    expect(preset).toMatchObject({ model: 'llama3.1-70b', context: 4096, batch: 1 })
    expect(preset).not.toHaveProperty('params_b')
    const custom = toEstimateRequest({ ...DEFAULT_INPUTS, model: CUSTOM_MODEL, params_b: '13' })
    expect(custom).toMatchObject({ params_b: 13 })
    expect(custom).not.toHaveProperty('model')
  })

  it('does not ask core while a number the estimate needs is half-typed', () => {
    expect(toEstimateRequest({ ...DEFAULT_INPUTS, context: '' })).toBeNull()
    expect(toEstimateRequest({ ...DEFAULT_INPUTS, batch: '0' })).toBeNull()
    expect(toEstimateRequest({ ...DEFAULT_INPUTS, model: CUSTOM_MODEL, params_b: 'abc' })).toBeNull()
    expect(problems({ ...DEFAULT_INPUTS, context: '4k' })).toEqual(['context'])
  })

  it('lets a bad planned-hours value drop the plan cost without blocking the estimate', () => {
    const inputs = { ...DEFAULT_INPUTS, hours: 'ten' }
    expect(problems(inputs)).toEqual(['hours'])
    expect(toEstimateRequest(inputs)).not.toBeNull()
    expect(plannedHours(inputs)).toBeNull()
    expect(plannedHours({ ...DEFAULT_INPUTS, hours: '' }), 'empty hours means no plan cost, not an error').toBeNull()
    expect(problems({ ...DEFAULT_INPUTS, hours: '' })).toEqual([])
  })

  it('only checks the LoRA rank when the task trains adapters', () => {
    expect(problems({ ...DEFAULT_INPUTS, task: 'inference', lora_rank: '' })).toEqual([])
    expect(problems({ ...DEFAULT_INPUTS, task: 'lora', lora_rank: '' })).toEqual(['lora_rank'])
  })

  it('moves a quantized precision to bf16 when switching to a task that trains every weight', () => {
    const serving = { ...DEFAULT_INPUTS, task: 'inference' as const, precision: 'q4_k_m' as const }
    expect(withTask(serving, 'full').precision).toBe('bf16')
    expect(withTask({ ...serving, precision: 'fp16' }, 'full').precision, 'fp16 suits a full fine-tune').toBe('fp16')
    expect(precisionsFor('full')).not.toContain('int4')
    expect(precisionsFor('inference')).toContain('q4_k_m')
  })

  it('reads numbers the way people type them', () => {
    expect(positiveDecimal('2.50')).toBe('2.5')
    expect(positiveDecimal(' 010 ')).toBe('10')
    expect(positiveDecimal('.75')).toBe('0.75')
    expect(positiveDecimal('0')).toBeNull()
    expect(positiveDecimal('-3')).toBeNull()
    expect(positiveDecimal('1e3')).toBeNull()
  })

  it('restores a saved draft field by field, replacing anything malformed by the default', () => {
    const restored = inputsFromDraft({
      task: 'qlora',
      model: 'qwen2.5-14b',
      precision: 'int4',
      context: 8192,
      grad_checkpointing: false,
      optimizer: 'sgd',
    })
    expect(restored.task).toBe('qlora')
    expect(restored.model).toBe('qwen2.5-14b')
    expect(restored.precision, 'int4 is not a compute precision for QLoRA').toBe('bf16')
    expect(restored.context, 'a number where text is kept is ignored').toBe(DEFAULT_INPUTS.context)
    expect(restored.grad_checkpointing).toBe(false)
    expect(restored.optimizer).toBe('adamw')
    expect(inputsFromDraft('garbage')).toEqual(DEFAULT_INPUTS)
  })
})

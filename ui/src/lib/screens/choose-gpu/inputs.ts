// What the user says they want to run, as the form holds it, and how it becomes the core's
// EstimateRequest. The rules of the estimate live in core; here only what the form must know to
// offer sensible choices (which precisions make sense for a task) and to not send half-typed
// numbers.
import type { EstimateRequest } from '../../bindings/EstimateRequest'
import type { Optimizer } from '../../bindings/Optimizer'
import type { Precision } from '../../bindings/Precision'
import type { Task } from '../../bindings/Task'

/** The model picker's value for "I'll give the size in billions". */
export const CUSTOM_MODEL = 'custom'

export interface ChooseInputs {
  task: Task
  /** A preset id from core's model_presets, or CUSTOM_MODEL. */
  model: string
  /** Size in billions when `model` is CUSTOM_MODEL (kept as typed). */
  params_b: string
  precision: Precision
  context: string
  batch: string
  optimizer: Optimizer
  grad_checkpointing: boolean
  lora_rank: string
  /** Planned GPU hours, for the plan cost. */
  hours: string
}

export const TASKS: readonly Task[] = ['inference', 'lora', 'qlora', 'full']

/** A 7B chat model served at 4096 tokens: what most renters try first. */
export const DEFAULT_INPUTS: ChooseInputs = {
  task: 'inference',
  model: 'qwen2.5-7b',
  params_b: '7',
  precision: 'bf16',
  context: '4096',
  batch: '1',
  optimizer: 'adamw',
  grad_checkpointing: true,
  lora_rank: '16',
  hours: '10',
}

export const CONTEXT_CHOICES = [2048, 4096, 8192, 16384, 32768, 131072] as const

/**
 * Precisions worth offering per task. GGUF (q4_k_m) is an inference format; a full fine-tune
 * trains every weight in 16/32-bit (core refuses quantized weights); QLoRA's base is always 4-bit,
 * so its choice is the compute precision.
 */
export function precisionsFor(task: Task): readonly Precision[] {
  switch (task) {
    case 'inference':
      return ['bf16', 'fp16', 'fp32', 'int8', 'int4', 'q4_k_m']
    case 'lora':
      return ['bf16', 'fp16', 'fp32', 'int8']
    case 'qlora':
    case 'full':
      return ['bf16', 'fp16', 'fp32']
  }
}

/** Switch task, moving the precision to bf16 when the old one makes no sense for the new task. */
export function withTask(inputs: ChooseInputs, task: Task): ChooseInputs {
  const precision = precisionsFor(task).includes(inputs.precision) ? inputs.precision : 'bf16'
  return { ...inputs, task, precision }
}

export function isTraining(task: Task): boolean {
  return task !== 'inference'
}

export function usesLora(task: Task): boolean {
  return task === 'lora' || task === 'qlora'
}

/** A whole number ≥ 1 as typed, or null. */
export function positiveInteger(text: string): number | null {
  const trimmed = text.trim()
  if (!/^\d+$/.test(trimmed)) return null
  const value = Number(trimmed)
  return value >= 1 && Number.isSafeInteger(value) ? value : null
}

/** A decimal > 0 as typed ("10", "2.5", "0.75"), normalised to a plain decimal string, or null. */
export function positiveDecimal(text: string): string | null {
  const trimmed = text.trim()
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) return null
  if (!/[1-9]/.test(trimmed)) return null
  const [whole, fraction = ''] = trimmed.split('.')
  const intPart = whole.replace(/^0+(?=\d)/, '') || '0'
  const fracPart = fraction.replace(/0+$/, '')
  return fracPart ? `${intPart}.${fracPart}` : intPart
}

/** Fields whose text cannot be sent as it is (empty, not a number, zero). */
export type InputProblem = 'params_b' | 'context' | 'batch' | 'lora_rank' | 'hours'

export function problems(inputs: ChooseInputs): InputProblem[] {
  const found: InputProblem[] = []
  if (inputs.model === CUSTOM_MODEL && positiveDecimal(inputs.params_b) === null) found.push('params_b')
  if (positiveInteger(inputs.context) === null) found.push('context')
  if (positiveInteger(inputs.batch) === null) found.push('batch')
  if (usesLora(inputs.task) && positiveInteger(inputs.lora_rank) === null) found.push('lora_rank')
  if (inputs.hours.trim() !== '' && positiveDecimal(inputs.hours) === null) found.push('hours')
  return found
}

/**
 * The request for core, or null while a field that the estimate needs is unusable. An empty or
 * bad "planned hours" does not block the estimate; it only leaves the plan cost out.
 */
export function toEstimateRequest(inputs: ChooseInputs): EstimateRequest | null {
  const blocking = problems(inputs).filter((problem) => problem !== 'hours')
  if (blocking.length > 0) return null
  const request: EstimateRequest = {
    task: inputs.task,
    precision: inputs.precision,
    context: positiveInteger(inputs.context)!,
    batch: positiveInteger(inputs.batch)!,
    optimizer: inputs.optimizer,
    grad_checkpointing: inputs.grad_checkpointing,
    lora_rank: positiveInteger(inputs.lora_rank) ?? 16,
  }
  if (inputs.model === CUSTOM_MODEL) request.params_b = Number(positiveDecimal(inputs.params_b))
  else request.model = inputs.model
  return request
}

/** Planned hours for core (a decimal string), or null when none or not a number. */
export function plannedHours(inputs: ChooseInputs): string | null {
  return positiveDecimal(inputs.hours)
}

/**
 * Inputs read back from a saved draft: every field checked against its type, anything odd
 * replaced by the default, so an old or hand-edited draft can never break the form.
 */
export function inputsFromDraft(saved: unknown): ChooseInputs {
  const inputs = { ...DEFAULT_INPUTS }
  if (typeof saved !== 'object' || saved === null) return inputs
  const record = saved as Record<string, unknown>
  const text = (key: 'model' | 'params_b' | 'context' | 'batch' | 'lora_rank' | 'hours') => {
    if (typeof record[key] === 'string') inputs[key] = record[key] as string
  }
  for (const key of ['model', 'params_b', 'context', 'batch', 'lora_rank', 'hours'] as const) text(key)
  if (TASKS.includes(record.task as Task)) inputs.task = record.task as Task
  // The default precision (bf16) suits every task, so an unsuitable saved one simply stays out.
  if (precisionsFor(inputs.task).includes(record.precision as Precision)) {
    inputs.precision = record.precision as Precision
  }
  if (record.optimizer === 'adamw' || record.optimizer === 'adamw8bit') inputs.optimizer = record.optimizer
  if (typeof record.grad_checkpointing === 'boolean') inputs.grad_checkpointing = record.grad_checkpointing
  return inputs
}

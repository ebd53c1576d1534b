// The "what were you running?" fields of the Paste-an-error box, as typed, and the estimator
// request they make. Only the shape is handled here; core decides what is acceptable.
import type { EstimateRequest } from '../bindings/EstimateRequest'
import type { Precision } from '../bindings/Precision'
import type { Task } from '../bindings/Task'

export interface PlanFields {
  task: Task
  params_b: string
  precision: Precision
  context: string
  batch: string
}

export const PLAN_TASKS: readonly Task[] = ['inference', 'lora', 'qlora', 'full']
export const PLAN_PRECISIONS: readonly Precision[] = ['bf16', 'fp16', 'fp32', 'int8', 'int4', 'q4_k_m']

export function emptyPlan(): PlanFields {
  return { task: 'lora', params_b: '', precision: 'bf16', context: '4096', batch: '1' }
}

export function fieldsFrom(request: EstimateRequest): PlanFields {
  return {
    task: request.task,
    params_b: request.params_b == null ? '' : String(request.params_b),
    precision: request.precision,
    context: String(request.context),
    batch: String(request.batch),
  }
}

function whole(text: string): number | null {
  const trimmed = text.trim()
  return /^\d+$/.test(trimmed) ? Number(trimmed) : null
}

/** The request, or null while the size is not a positive number or a count is not whole. */
export function requestFrom(fields: PlanFields, base?: EstimateRequest | null): EstimateRequest | null {
  const params = Number(fields.params_b.trim())
  const context = whole(fields.context)
  const batch = whole(fields.batch)
  if (!fields.params_b.trim() || !Number.isFinite(params) || params <= 0 || context === null || batch === null) return null
  return {
    optimizer: 'adamw',
    grad_checkpointing: true,
    lora_rank: 16,
    ...(base ?? {}),
    model: undefined,
    params_b: params,
    task: fields.task,
    precision: fields.precision,
    context,
    batch,
  }
}

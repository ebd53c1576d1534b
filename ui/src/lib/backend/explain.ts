// Explain an error (src-tauri/src/commands/explain.rs): findings for a pasted error text, with
// the instance's latest Verify facts and planned task.
import type { EstimateRequest } from '../bindings/EstimateRequest'
import type { Explanation } from '../bindings/Explanation'
import type { Lang } from '../bindings/Lang'
import { call } from './ipc'

/** What `text` means on `instance`; a `plan` given here becomes the instance's planned task. */
export function explainError(
  instance: string | null,
  text: string,
  lang: Lang,
  plan: EstimateRequest | null,
): Promise<Explanation> {
  return call<Explanation>('explain_error', { instance, text, lang, plan })
}

/** The task planned for `instance`, if one was saved. */
export function explainPlan(instance: string): Promise<EstimateRequest | null> {
  return call<EstimateRequest | null>('explain_plan', { instance })
}

// Recalculate a form's result in core shortly after the user stops typing. Shape errors (text in
// a number field) and core's field errors end up in `errors`, keyed by field.
import type { ApiError } from '../../bindings/ApiError'
import { fieldOf, toApiError } from '../../backend'

export const FORM = '_form'

export class Calculation<R> {
  result = $state<R | null>(null)
  errors = $state<Record<string, ApiError>>({})
  /** A change is waiting for (or being priced by) core; the shown result may be older. */
  pending = $state(false)
  #timer: ReturnType<typeof setTimeout> | undefined
  #generation = 0

  /** `build` returns the request or shape errors; `run` asks core. Only the latest answer counts. */
  schedule<Q>(build: () => { request: Q | null; errors: Record<string, ApiError> }, run: (request: Q) => Promise<R>): void {
    clearTimeout(this.#timer)
    const generation = ++this.#generation
    this.pending = true
    this.#timer = setTimeout(async () => {
      const { request, errors } = build()
      if (request === null) {
        this.errors = errors
        this.result = null
        this.pending = false
        return
      }
      try {
        const result = await run(request)
        if (generation !== this.#generation) return
        this.result = result
        this.errors = {}
      } catch (thrown) {
        if (generation !== this.#generation) return
        this.errors = { [fieldOf(thrown) ?? FORM]: toApiError(thrown) }
        this.result = null
      } finally {
        if (generation === this.#generation) this.pending = false
      }
    }, 200)
  }

  cancel(): void {
    clearTimeout(this.#timer)
  }
}

// Recalculate a form's result in core shortly after the user stops typing. Shape errors (text in
// a number field) and core's field errors end up in `errors`, keyed by field.
import type { ApiError } from '../../bindings/ApiError'
import { fieldOf, toApiError } from '../../backend'
import { Debouncer } from '../../debounce'

export const FORM = '_form'

export class Calculation<R> {
  result = $state<R | null>(null)
  errors = $state<Record<string, ApiError>>({})
  /** A change is waiting for (or being priced by) core; the shown result may be older. */
  pending = $state(false)
  #debouncer = new Debouncer(200)

  /** `build` returns the request or shape errors; `run` asks core. Only the latest answer counts. */
  schedule<Q>(build: () => { request: Q | null; errors: Record<string, ApiError> }, run: (request: Q) => Promise<R>): void {
    this.pending = true
    this.#debouncer.schedule(async (isLatest) => {
      const { request, errors } = build()
      if (request === null) {
        this.errors = errors
        this.result = null
        this.pending = false
        return
      }
      try {
        const result = await run(request)
        if (!isLatest()) return
        this.result = result
        this.errors = {}
      } catch (thrown) {
        if (!isLatest()) return
        this.errors = { [fieldOf(thrown) ?? FORM]: toApiError(thrown) }
        this.result = null
      } finally {
        if (isLatest()) this.pending = false
      }
    })
  }

  cancel(): void {
    this.#debouncer.cancel()
  }
}

// One user action at a time on a card: `busy` while it runs (its buttons disabled), and the
// error it ended with, as the backend's {code, message}, for ErrorText.
import { toApiError } from './backend'
import type { ApiError } from './bindings/ApiError'

export class Task {
  busy = $state(false)
  error = $state<ApiError | null>(null)

  /** Run `action`; true when it succeeded. */
  async run(action: () => Promise<unknown>): Promise<boolean> {
    this.busy = true
    this.error = null
    try {
      await action()
      return true
    } catch (thrown) {
      this.error = toApiError(thrown)
      return false
    } finally {
      this.busy = false
    }
  }
}

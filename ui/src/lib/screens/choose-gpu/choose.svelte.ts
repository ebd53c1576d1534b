// The Choose GPU screen's state: the inputs, the prices, and core's answers, refreshed a moment
// after the user stops typing (so a fast typist does not queue a request per key) and never
// overwritten by the answer to an older question. The inputs and typed prices are kept as a
// draft, so the screen reopens as it was left.
import type { ApiError } from '../../bindings/ApiError'
import type { Candidate } from '../../bindings/Candidate'
import type { EstimateRequest } from '../../bindings/EstimateRequest'
import type { LocalGpuReport } from '../../bindings/LocalGpuReport'
import type { PriceEntry } from '../../bindings/PriceEntry'
import type { RecommendRequest } from '../../bindings/RecommendRequest'
import type { Recommendation } from '../../bindings/Recommendation'
import type { Task } from '../../bindings/Task'
import { toApiError } from '../../backend/ipc'
import { Debouncer, type IsLatest } from '../../debounce'
import {
  DEFAULT_INPUTS,
  inputsFromDraft,
  plannedHours,
  problems,
  toEstimateRequest,
  withTask,
  type ChooseInputs,
  type InputProblem,
} from './inputs'
import { priceList, setTypedPrice, typedPricesFromDraft, type TypedPrice } from './prices'

export interface ChooseBackend {
  recommend(request: RecommendRequest): Promise<Recommendation>
  localGpus(request: EstimateRequest | null): Promise<LocalGpuReport>
  earlierPrices(): Promise<PriceEntry[]>
  loadDraft(): Promise<unknown>
  saveDraft(draft: unknown): Promise<void>
}

/** Long enough to cover a keystroke burst, short enough to feel live. */
export const DEBOUNCE_MS = 250
export const CHOOSE_DRAFT_VERSION = 1

export class ChooseGpuState {
  inputs = $state<ChooseInputs>({ ...DEFAULT_INPUTS })
  typed = $state<TypedPrice[]>([])
  /** Prices paid for earlier rentals (core reads them from the ledger). */
  earlier = $state<PriceEntry[]>([])
  recommendation = $state<Recommendation | null>(null)
  /** The question behind `recommendation`: the market ranks its offers for the same task. */
  request = $state.raw<RecommendRequest | null>(null)
  local = $state<LocalGpuReport | null>(null)
  error = $state<ApiError | null>(null)
  /** A refresh is waiting for the typing to stop or for core to answer. */
  pending = $state(false)
  readonly currency: string
  #backend: ChooseBackend
  #debouncer = new Debouncer(DEBOUNCE_MS)

  constructor(backend: ChooseBackend, currency: string) {
    this.#backend = backend
    this.currency = currency
  }

  get problems(): InputProblem[] {
    return problems(this.inputs)
  }

  get hours(): string | null {
    return plannedHours(this.inputs)
  }

  /** Bring back the draft and the prices paid before, then ask core at once. */
  async start(): Promise<void> {
    const [draft, earlier] = await Promise.allSettled([
      this.#backend.loadDraft(),
      this.#backend.earlierPrices(),
    ])
    if (draft.status === 'fulfilled' && draft.value && typeof draft.value === 'object') {
      const saved = draft.value as { version?: unknown; inputs?: unknown; prices?: unknown }
      if (saved.version === CHOOSE_DRAFT_VERSION) {
        this.inputs = inputsFromDraft(saved.inputs)
        this.typed = typedPricesFromDraft(saved.prices)
      }
    }
    // Without the ledger's prices the screen still works; it ranks by fit.
    if (earlier.status === 'fulfilled') this.earlier = earlier.value
    await this.refresh()
  }

  update(patch: Partial<ChooseInputs>): void {
    this.inputs = { ...this.inputs, ...patch }
    this.schedule()
  }

  setTask(task: Task): void {
    this.inputs = withTask(this.inputs, task)
    this.schedule()
  }

  /** Returns false (and changes nothing) when the text is not a price. */
  setPrice(candidate: Pick<Candidate, 'gpu_id' | 'gpu'>, text: string): boolean {
    const next = setTypedPrice(this.typed, candidate, text, this.currency)
    if (next === null) return false
    this.typed = next
    this.schedule()
    return true
  }

  schedule(): void {
    this.pending = true
    this.#debouncer.schedule((isLatest) => this.#ask(isLatest))
  }

  /** Ask core now (on opening the screen), superseding a scheduled question. */
  refresh(): Promise<void> {
    return this.#debouncer.run((isLatest) => this.#ask(isLatest))
  }

  async #ask(isLatest: IsLatest): Promise<void> {
    const estimate = toEstimateRequest(this.inputs)
    void this.#backend
      .saveDraft({ version: CHOOSE_DRAFT_VERSION, inputs: $state.snapshot(this.inputs), prices: $state.snapshot(this.typed) })
      .catch(() => {})
    if (estimate === null) {
      // Half-typed numbers: keep showing the last answer; the field says what is wrong.
      this.pending = false
      return
    }
    this.pending = true
    const request: RecommendRequest = {
      estimate,
      hours: this.hours,
      prices: priceList(this.typed, this.earlier, this.currency),
    }
    const [recommendation, local] = await Promise.allSettled([
      this.#backend.recommend(request),
      this.#backend.localGpus(estimate),
    ])
    if (!isLatest()) return // a newer question is on its way
    if (recommendation.status === 'fulfilled') {
      this.recommendation = recommendation.value
      this.request = request
      this.error = null
    } else {
      this.error = toApiError(recommendation.reason)
    }
    // This computer's GPU is a bonus: if it cannot be read, say nothing rather than alarm.
    this.local = local.status === 'fulfilled' ? local.value : null
    this.pending = false
  }

  dispose(): void {
    this.#debouncer.cancel()
  }
}

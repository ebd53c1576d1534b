import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { EstimateRequest } from '../../bindings/EstimateRequest'
import type { LocalGpuReport } from '../../bindings/LocalGpuReport'
import type { RecommendRequest } from '../../bindings/RecommendRequest'
import type { Recommendation } from '../../bindings/Recommendation'
import { CHOOSE_DRAFT_VERSION, ChooseGpuState, DEBOUNCE_MS, type ChooseBackend } from './choose.svelte'

/** Core's answer, labelled with the context it was asked for so a test can tell answers apart. */
function answer(request: RecommendRequest): Recommendation {
  return { candidates: [], notes: [], estimate: { total_gib: request.estimate.context } } as unknown as Recommendation
}

const noLocalGpu: LocalGpuReport = {
  available: false,
  reason: 'No local NVIDIA GPU',
  reason_text: { en: 'No local NVIDIA GPU', zh: '本机没有 NVIDIA GPU' },
  driver_version: null,
  gpus: [],
  fit: null,
}

class FakeBackend implements ChooseBackend {
  asked: RecommendRequest[] = []
  saved: unknown[] = []
  draft: unknown = null
  /** Answers held back until released, to reorder them. */
  held: { request: RecommendRequest; release: () => void }[] = []
  hold = false

  recommend(request: RecommendRequest): Promise<Recommendation> {
    this.asked.push(request)
    if (!this.hold) return Promise.resolve(answer(request))
    return new Promise((resolve) => this.held.push({ request, release: () => resolve(answer(request)) }))
  }
  localGpus(_request: EstimateRequest | null) {
    return Promise.resolve(noLocalGpu)
  }
  earlierPrices() {
    return Promise.resolve([
      { gpu: 'RTX 4090', price_per_hour: '1.98', currency: 'CNY', origin: 'earlier_rental' as const },
      { gpu: 'RTX 3090', price_per_hour: '0.79', currency: 'USD', origin: 'earlier_rental' as const },
    ])
  }
  loadDraft() {
    return Promise.resolve(this.draft)
  }
  saveDraft(draft: unknown) {
    this.saved.push(draft)
    return Promise.resolve()
  }
}

describe('ChooseGpuState', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('asks core once after a burst of typing, with the last value typed', async () => {
    const backend = new FakeBackend()
    const state = new ChooseGpuState(backend, 'CNY')
    await state.start()
    expect(backend.asked).toHaveLength(1)
    for (const context of ['8', '81', '819', '8192']) state.update({ context })
    expect(state.pending, 'the screen shows that an update is coming').toBe(true)
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS - 1)
    expect(backend.asked, 'nothing is asked while the user is still typing').toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(backend.asked).toHaveLength(2)
    expect(backend.asked[1].estimate.context).toBe(8192)
    expect(state.recommendation?.estimate.total_gib).toBe(8192)
    expect(state.pending).toBe(false)
  })

  it('never lets a slow answer to an older question replace a newer one', async () => {
    const backend = new FakeBackend()
    const state = new ChooseGpuState(backend, 'CNY')
    backend.hold = true
    const first = state.refresh()
    state.update({ context: '8192' })
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS)
    const [older, newer] = backend.held
    newer.release()
    await vi.advanceTimersByTimeAsync(0)
    older.release()
    await first
    expect(state.recommendation?.estimate.total_gib, 'the answer for 8192 tokens stays').toBe(8192)
  })

  it('sends the prices paid before and the planned hours, and keeps the last answer while a field is half-typed', async () => {
    const backend = new FakeBackend()
    const state = new ChooseGpuState(backend, 'CNY')
    await state.start()
    expect(backend.asked[0].hours).toBe('10')
    expect(backend.asked[0].prices, 'only prices in the chosen currency can be compared').toEqual([
      { gpu: 'RTX 4090', price_per_hour: '1.98', currency: 'CNY', origin: 'earlier_rental' },
    ])
    state.update({ batch: '' })
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS)
    expect(backend.asked, 'an empty batch is not sent').toHaveLength(1)
    expect(state.recommendation, 'the last answer stays on screen').not.toBeNull()
    expect(state.problems).toEqual(['batch'])
  })

  it('reopens with the inputs and typed prices of last time', async () => {
    const backend = new FakeBackend()
    backend.draft = {
      version: CHOOSE_DRAFT_VERSION,
      inputs: { task: 'lora', model: 'qwen2.5-14b', context: '2048' },
      prices: [{ gpu_id: 'l40s', gpu: 'NVIDIA L40S', price_per_hour: '4.2', currency: 'CNY' }],
    }
    const state = new ChooseGpuState(backend, 'CNY')
    await state.start()
    expect(state.inputs.task).toBe('lora')
    expect(backend.asked[0].estimate).toMatchObject({ model: 'qwen2.5-14b', task: 'lora', context: 2048 })
    expect(backend.asked[0].prices[0], 'the typed price comes before the ones paid earlier').toEqual({
      gpu: 'NVIDIA L40S',
      price_per_hour: '4.2',
      currency: 'CNY',
      origin: 'entered',
    })
    expect(backend.saved.at(-1)).toMatchObject({ version: CHOOSE_DRAFT_VERSION, inputs: { task: 'lora' } })
  })

  it("shows core's refusal as an error and clears it with the next good answer", async () => {
    const backend = new FakeBackend()
    const state = new ChooseGpuState(backend, 'CNY')
    const recommend = backend.recommend.bind(backend)
    backend.recommend = (request) =>
      request.estimate.context > 2_097_152
        ? Promise.reject({ code: 'catalog.invalid_input', message: '--context must be between 1 and 2097152' })
        : recommend(request)
    state.update({ context: '9999999' })
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS)
    expect(state.error?.code).toBe('catalog.invalid_input')
    state.update({ context: '4096' })
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS)
    expect(state.error).toBeNull()
  })
})

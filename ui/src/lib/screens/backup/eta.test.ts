import { describe, expect, it } from 'vitest'
import { addTransferSample, rate, secondsLeft } from './eta'

const progress = (done: number, total = 1000) => ({ current: '', bytes_done: done, bytes_total: total, items_done: 0, items_total: 1 })

describe('backup ETA', () => {
  it('measures the rate over recent samples and predicts the time left', () => {
    let samples = addTransferSample([], progress(0), 0)
    samples = addTransferSample(samples, progress(100), 1000)
    samples = addTransferSample(samples, progress(200), 2000)
    expect(rate(samples)).toBe(100)
    expect(secondsLeft(progress(200), rate(samples))).toBe(8)
  })

  it('knows nothing from one sample and drops old ones', () => {
    expect(rate(addTransferSample([], progress(10), 0))).toBe(0)
    const samples = addTransferSample([{ at: 0, bytes: 0 }], progress(500), 10_000)
    expect(samples).toHaveLength(1)
    expect(secondsLeft(progress(1000), 50)).toBeNull()
  })
})

import { describe, expect, it } from 'vitest'
import type { AtRiskReport } from '../../bindings/AtRiskReport'
import type { BackupRecord } from '../../bindings/BackupRecord'
import { addTransferSample, chosenSize, pastRate, rate, secondsLeft } from './eta'

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

  it('weighs the chosen paths the scan measured, and says when a chosen one has no size', () => {
    const weight = (path: string, bytes: number) => ({ path, bytes, folder: false, modified: null, disk: 'system' })
    const report = { weights: [weight('/root/out/model.safetensors', 2_000_000), weight('/root/ckpt', 500)] } as unknown as AtRiskReport
    expect(chosenSize(report, ['/root/out/model.safetensors', '/root/ckpt'])).toEqual({ bytes: 2_000_500, complete: true })
    expect(chosenSize(report, ['/root/out/model.safetensors', '/root/repo'])).toEqual({ bytes: 2_000_000, complete: false })
  })

  it("takes the newest backup's speed for the estimate, skipping ones that moved nothing", () => {
    const record = (started: string, finished: string, bytes: number) =>
      ({ started_at: started, finished_at: finished, bytes }) as unknown as BackupRecord
    expect(pastRate([])).toBe(0)
    expect(
      pastRate([
        record('2026-12-01T10:00:00Z', '2026-12-01T10:00:10Z', 1000),
        record('2026-12-02T10:00:00Z', '2026-12-02T10:00:04Z', 8000),
        record('2026-12-03T10:00:00Z', '2026-12-03T10:00:01Z', 0),
      ]),
    ).toBe(2000)
  })
})

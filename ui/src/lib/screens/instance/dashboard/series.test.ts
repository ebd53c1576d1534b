import { describe, expect, it } from 'vitest'
import type { GpuReading } from '../../../bindings/GpuReading'
import { addGap, addSample, heatCells, minuteAverages, POINTS, type GpuSeries } from './series'

function gpu(index: number, utilization: number): GpuReading {
  return {
    index,
    uuid: null,
    utilization_pct: utilization,
    memory_used_mib: 1000,
    memory_total_mib: 4000,
    temperature_c: 50,
    power_draw_w: 100,
    power_limit_w: 400,
    sm_clock_mhz: 1000,
    throttle: [],
    pcie_rx_kib_s: null,
    pcie_tx_kib_s: null,
  }
}

function at(second: number): string {
  return new Date(Date.UTC(2026, 2, 1, 9, 0, second)).toISOString()
}

describe('live GPU series', () => {
  it('keeps a fixed number of points however long it runs', () => {
    let series: GpuSeries[] = []
    for (let s = 0; s < 3 * POINTS; s++) series = addSample(series, { at: at(s), gpus: [gpu(0, s % 100), gpu(1, 0)] })
    expect(series).toHaveLength(2)
    expect(series[0].x).toHaveLength(POINTS)
    expect(series[0].utilization).toHaveLength(POINTS)
    expect(series[0].latest?.utilization_pct).toBe((3 * POINTS - 1) % 100)
  })

  it('turns memory and power into percentages of their totals', () => {
    const [first] = addSample([], { at: at(0), gpus: [gpu(0, 10)] })
    expect(first.memoryPct).toEqual([25])
    expect(first.powerPct).toEqual([25])
  })

  it('marks a gap with nulls and keeps the last reading for the header', () => {
    let series = addSample([], { at: at(0), gpus: [gpu(0, 80)] })
    series = addGap(series, at(5))
    series = addSample(series, { at: at(9), gpus: [gpu(0, 70)] })
    expect(series[0].utilization).toEqual([80, null, 70])
    expect(series[0].x).toHaveLength(3)
  })

  it('averages the history over the GPUs of each minute, oldest first', () => {
    const row = (minute: string, gpu: number, utilization: number) => ({
      minute,
      gpu_index: gpu,
      samples: 60,
      utilization_avg: utilization,
      utilization_max: utilization,
      memory_used_max_mib: 1,
      memory_total_mib: 2,
      power_avg_w: null,
    })
    const got = minuteAverages([row(at(60), 0, 90), row(at(60), 1, 10), row(at(0), 0, 20), row(at(0), 1, 0)])
    expect(got.utilization).toEqual([10, 50])
    expect(got.x[0]).toBeLessThan(got.x[1])
  })
})

describe('heatCells', () => {
  it('averages each bucket, newest samples in the last cell', () => {
    expect(heatCells([0, 10, 20, 30, 40, 50], 3, 2)).toEqual([5, 25, 45])
  })

  it('leaves cells before the first sample and in a gap empty instead of inventing a value', () => {
    expect(heatCells([80, 90], 3, 2)).toEqual([null, null, 85])
    expect(heatCells([50, 50, null, null, 70, 70], 3, 2)).toEqual([50, null, 70])
  })
})

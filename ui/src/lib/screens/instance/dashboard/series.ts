// The live charts' data: a fixed number of points per GPU, oldest dropped first, so hours of
// 8 GPUs × 1 s take the same memory as five minutes. A gap is a `null` point, which uPlot draws
// as a break in the line: no value is ever made up for the time without samples.
import type { GpuMinute } from '../../../bindings/GpuMinute'
import type { GpuReading } from '../../../bindings/GpuReading'
import type { Sample } from '../../../bindings/Sample'

/** Points kept per chart: five minutes at one sample a second. */
export const POINTS = 300

export interface GpuSeries {
  index: number
  /** Unix seconds. */
  x: number[]
  utilization: (number | null)[]
  memoryPct: (number | null)[]
  temperature: (number | null)[]
  powerPct: (number | null)[]
  latest: GpuReading | null
}

function empty(index: number): GpuSeries {
  return { index, x: [], utilization: [], memoryPct: [], temperature: [], powerPct: [], latest: null }
}

/** Append `value` keeping at most `POINTS` (a new array: charts see the change). */
function pushBounded<T>(values: T[], value: T): T[] {
  const start = values.length >= POINTS ? values.length - POINTS + 1 : 0
  const next = values.slice(start)
  next.push(value)
  return next
}

function percent(part: number | null, whole: number | null): number | null {
  if (part == null || whole == null || whole <= 0) return null
  return Math.round((part / whole) * 1000) / 10
}

function withPoint(series: GpuSeries, at: number, gpu: GpuReading | null): GpuSeries {
  return {
    index: series.index,
    x: pushBounded(series.x, at),
    utilization: pushBounded(series.utilization, gpu?.utilization_pct ?? null),
    memoryPct: pushBounded(series.memoryPct, gpu ? percent(gpu.memory_used_mib, gpu.memory_total_mib) : null),
    temperature: pushBounded(series.temperature, gpu?.temperature_c ?? null),
    powerPct: pushBounded(series.powerPct, gpu ? percent(gpu.power_draw_w, gpu.power_limit_w) : null),
    latest: gpu ?? series.latest,
  }
}

/** The series after one sample (GPUs that appear for the first time get their own). */
export function addSample(all: GpuSeries[], sample: Sample): GpuSeries[] {
  const at = Date.parse(sample.at) / 1000
  const byIndex = new Map(all.map((s) => [s.index, s]))
  for (const gpu of sample.gpus) if (!byIndex.has(gpu.index)) byIndex.set(gpu.index, empty(gpu.index))
  const next = [...byIndex.values()].map((series) =>
    withPoint(series, at, sample.gpus.find((g) => g.index === series.index) ?? null),
  )
  return next.sort((a, b) => a.index - b.index)
}

/** A break in every line at `at`. */
export function addGap(all: GpuSeries[], at: string): GpuSeries[] {
  const seconds = Date.parse(at) / 1000
  return all.map((series) => ({ ...withPoint(series, seconds, null), latest: series.latest }))
}

/** The history chart: the average utilisation over all GPUs, minute by minute (oldest first). */
export function minuteAverages(minutes: GpuMinute[]): { x: number[]; utilization: number[] } {
  const sums = new Map<number, { total: number; count: number }>()
  for (const minute of minutes) {
    const at = Date.parse(minute.minute) / 1000
    const entry = sums.get(at) ?? { total: 0, count: 0 }
    entry.total += minute.utilization_avg
    entry.count += 1
    sums.set(at, entry)
  }
  const x = [...sums.keys()].sort((a, b) => a - b)
  return { x, utilization: x.map((at) => {
    const entry = sums.get(at)
    return entry ? Math.round((entry.total / entry.count) * 10) / 10 : 0
  }) }
}

/** From this many GPUs on, the dashboard shows one compact row per GPU instead of a chart each. */
export const COMPACT_FROM = 4

/**
 * The last `cells` buckets of a series for a heat strip, oldest first: each the mean of its
 * samples, `null` where the stream had nothing (a gap stays a gap). The newest samples always
 * fill the last cell, so the strip moves with the stream.
 */
export function heatCells(values: (number | null)[], cells: number, perCell: number): (number | null)[] {
  const out: (number | null)[] = []
  for (let cell = 0; cell < cells; cell += 1) {
    const end = values.length - (cells - 1 - cell) * perCell
    const bucket = values.slice(Math.max(0, end - perCell), Math.max(0, end)).filter((v): v is number => v != null)
    out.push(bucket.length === 0 ? null : Math.round(bucket.reduce((a, b) => a + b, 0) / bucket.length))
  }
  return out
}

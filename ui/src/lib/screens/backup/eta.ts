// Transfer speed and time left from the progress reports a backup sends, and before it starts,
// what the chosen paths weigh and how long they took at the last backup's speed (pure, tested).
import type { AtRiskReport } from '../../bindings/AtRiskReport'
import type { BackupProgress } from '../../bindings/BackupProgress'
import type { BackupRecord } from '../../bindings/BackupRecord'

export interface Sample {
  at: number
  bytes: number
}

/** Keep the samples of the last `windowMs` and return the new list. */
export function addTransferSample(samples: Sample[], progress: BackupProgress, at: number, windowMs = 5000): Sample[] {
  const kept = samples.filter((s) => at - s.at <= windowMs && s.bytes <= progress.bytes_done)
  return [...kept, { at, bytes: progress.bytes_done }]
}

/** Bytes per second over the samples; 0 until two samples exist. */
export function rate(samples: Sample[]): number {
  if (samples.length < 2) return 0
  const first = samples[0]
  const last = samples[samples.length - 1]
  const seconds = (last.at - first.at) / 1000
  return seconds > 0 ? (last.bytes - first.bytes) / seconds : 0
}

/** Seconds left at the current rate; null when unknown. */
export function secondsLeft(progress: BackupProgress, bytesPerSecond: number): number | null {
  if (bytesPerSecond <= 0 || progress.bytes_total <= progress.bytes_done) return null
  return (progress.bytes_total - progress.bytes_done) / bytesPerSecond
}

/**
 * What the chosen paths weigh, as far as the scan measured them: weights have sizes, a repository
 * or a working folder does not (`complete` is false when one of those is chosen).
 */
export function chosenSize(report: AtRiskReport, chosen: string[]): { bytes: number; complete: boolean } {
  const sizes = new Map(report.weights.map((weight) => [weight.path, weight.bytes]))
  return {
    bytes: chosen.reduce((sum, path) => sum + (sizes.get(path) ?? 0), 0),
    complete: chosen.every((path) => sizes.has(path)),
  }
}

/** The speed of this instance's newest backup that moved bytes (bytes per second), or 0. */
export function pastRate(records: BackupRecord[]): number {
  const newest = records
    .filter((record) => record.bytes > 0)
    .map((record) => ({ record, seconds: (Date.parse(record.finished_at) - Date.parse(record.started_at)) / 1000 }))
    .filter(({ seconds }) => seconds > 0)
    .sort((a, b) => Date.parse(b.record.finished_at) - Date.parse(a.record.finished_at))[0]
  return newest ? newest.record.bytes / newest.seconds : 0
}

// Transfer speed and time left from the progress reports a backup sends (pure, tested).
import type { BackupProgress } from '../../bindings/BackupProgress'

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

// The watchdog card's reading of what the instance reports: durations as an amount and a unit
// (the card shows steppers, the watchdog reads `30m`), the latest sample as one reading per
// signal, and when the instance will power off if it stays quiet. Pure, so it is tested alone.
import type { WatchdogStatus } from '../../bindings/WatchdogStatus'

export type DurationUnit = 's' | 'min' | 'h'

export interface Duration {
  amount: number
  unit: DurationUnit
}

const SECONDS: Record<DurationUnit, number> = { s: 1, min: 60, h: 3600 }

/** Whole seconds in the largest unit that divides them: 1800 → 30 min, 7200 → 2 h, 90 → 90 s. */
export function splitDuration(seconds: number): Duration {
  if (seconds > 0 && seconds % 3600 === 0) return { amount: seconds / 3600, unit: 'h' }
  if (seconds > 0 && seconds % 60 === 0) return { amount: seconds / 60, unit: 'min' }
  return { amount: Math.max(0, Math.round(seconds)), unit: 's' }
}

/** The duration as the watchdog's settings read it (`30m`, `2h`, `90s`). */
export function durationSetting({ amount, unit }: Duration): string {
  return `${Math.round(amount)}${unit === 'min' ? 'm' : unit}`
}

export function durationSeconds({ amount, unit }: Duration): number {
  return Math.round(amount) * SECONDS[unit]
}

export type SignalReading =
  | { signal: string; kind: 'percent'; value: number }
  | { signal: string; kind: 'rate'; kib: number }
  | { signal: string; kind: 'count'; value: number }
  /** No rate yet: the first sample after a start has nothing to compare with. */
  | { signal: string; kind: 'first' }
  /** The watchdog could not read it, so it counts the instance as busy and never powers off. */
  | { signal: string; kind: 'unreadable' }

/** `gpu=0% cpu=first io=12KiB/s net=unreadable ssh=1` → one reading per signal. */
export function parseSample(sample: string | null): SignalReading[] {
  if (!sample) return []
  const readings: SignalReading[] = []
  for (const word of sample.trim().split(/\s+/)) {
    const match = /^([a-z]+)=(.+)$/.exec(word)
    if (!match) continue
    const [, signal, value] = match
    if (value === 'unreadable') readings.push({ signal, kind: 'unreadable' })
    else if (value === 'first') readings.push({ signal, kind: 'first' })
    else if (/^\d+%$/.test(value)) readings.push({ signal, kind: 'percent', value: Number.parseInt(value, 10) })
    else if (/^\d+KiB\/s$/.test(value)) readings.push({ signal, kind: 'rate', kib: Number.parseInt(value, 10) })
    else if (/^\d+$/.test(value)) readings.push({ signal, kind: 'count', value: Number.parseInt(value, 10) })
  }
  return readings
}

/**
 * When the instance powers off if every signal stays quiet: the latest sample's time plus what is
 * left of the idle time. `null` unless the watchdog is running and counting idle time.
 */
export function powerOffAt(status: WatchdogStatus | null): Date | null {
  if (!status?.running || status.phase !== 'idle' || status.idle_seconds === null || !status.updated) return null
  const idleSetting = Number.parseInt(status.settings.idle_s ?? '', 10)
  const updated = Date.parse(status.updated)
  if (!Number.isFinite(idleSetting) || !Number.isFinite(updated)) return null
  const left = Math.max(0, idleSetting - status.idle_seconds)
  return new Date(updated + left * 1000)
}

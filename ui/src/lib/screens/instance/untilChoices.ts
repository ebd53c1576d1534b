// The forecast's "until" as two selects in the app's language — a day and a time on a 24-hour
// clock — instead of the browser's date-time picker, which follows the system's locale (a Chinese
// renter on an English system got mm/dd/yyyy and AM/PM).
import type { InputOption } from '../../components/Input.svelte'
import { clockChoices } from '../settings/clock'

const pad = (n: number) => String(n).padStart(2, '0')

/** A moment as the two select values: the local day (`2026-12-06`) and time (`22:30`). */
export function splitLocal(date: Date): { day: string; time: string } {
  return {
    day: `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`,
    time: `${pad(date.getHours())}:${pad(date.getMinutes())}`,
  }
}

/** The local moment the two values name; an invalid date when they name none. */
export function joinLocal(day: string, time: string): Date {
  const [y, m, d] = day.split('-').map(Number)
  const [hh, mm] = time.split(':').map(Number)
  if (![y, m, d, hh, mm].every(Number.isInteger)) return new Date(NaN)
  return new Date(y, m - 1, d, hh, mm)
}

/**
 * The next `days` days from `today` ("today · Dec 6", "tomorrow · Dec 7", then "Tue, Dec 8" in the
 * app's language), plus `current` when it lies further out, in order.
 */
export function dayChoices(today: Date, current: string, lang: string, days = 14): InputOption[] {
  const dated = new Intl.DateTimeFormat(lang, { month: 'short', day: 'numeric', weekday: 'short' })
  const relative = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' })
  const choices: InputOption[] = []
  for (let i = 0; i < days; i += 1) {
    const date = new Date(today.getFullYear(), today.getMonth(), today.getDate() + i)
    const label = dated.format(date)
    choices.push({ value: splitLocal(date).day, label: i < 2 ? `${relative.format(i, 'day')} · ${label}` : label })
  }
  if (!choices.some((choice) => choice.value === current)) {
    const date = joinLocal(current, '00:00')
    if (!Number.isNaN(date.getTime())) choices.push({ value: current, label: dated.format(date) })
  }
  return choices.sort((a, b) => a.value.localeCompare(b.value))
}

/** Every half hour on a 24-hour clock, plus `current` when it is between them. */
export function timeChoices(current: string): InputOption[] {
  return clockChoices(current).map((time) => ({ value: time, label: time }))
}

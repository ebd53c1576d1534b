// How numbers, money and times look on screen, in the user's language. Amounts arrive from core
// as exact decimal strings and are only formatted here, never computed with.

/** `"12.5"` in `CNY` → `¥12.50` (zh-CN) / `CN¥12.50` (en). */
export function formatMoney(amount: string, currency: string, locale: string, fractionDigits = 2): string {
  try {
    return new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      minimumFractionDigits: fractionDigits,
      maximumFractionDigits: Math.max(fractionDigits, 4),
      // Intl treats a numeric string as an exact decimal (no float rounding on the way).
    }).format(amount as unknown as number)
  } catch {
    return `${amount} ${currency}`
  }
}

/** Elapsed seconds as a ticking clock: `2:05:09`, and `3d 02:05:09` past a day. */
export function formatClock(totalSeconds: number, dayUnit: string): string {
  const seconds = Math.max(0, Math.floor(totalSeconds))
  const days = Math.floor(seconds / 86_400)
  const hours = Math.floor((seconds % 86_400) / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const secs = seconds % 60
  const pad = (n: number) => String(n).padStart(2, '0')
  const clock = `${days > 0 ? pad(hours) : hours}:${pad(minutes)}:${pad(secs)}`
  return days > 0 ? `${days}${dayUnit} ${clock}` : clock
}

export function formatDateTime(iso: string | Date, locale: string): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date)
}

export function formatTime(iso: string, locale: string): string {
  return new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(
    new Date(iso),
  )
}

/** Seconds between two RFC 3339 times. */
export function secondsBetween(start: string, end: string): number {
  return (Date.parse(end) - Date.parse(start)) / 1000
}

/** A plain decimal as typed by people: trailing zeros dropped, locale digits grouping. */
export function formatNumber(value: string, locale: string): string {
  try {
    return new Intl.NumberFormat(locale, { maximumFractionDigits: 6 }).format(value as unknown as number)
  } catch {
    return value
  }
}

/** A byte count for people: 1.5 GB, 320 kB (decimal units, as disks are sold). */
export function formatBytes(bytes: number, locale: string): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit += 1
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: digits }).format(value)} ${units[unit]}`
}

/**
 * A stretch of time in the reader's units: `1 hr, 5 min` / `1小时5分钟`, `3 min` / `3分钟`,
 * `12 sec` / `12秒` (time left, a billed stretch).
 */
export function formatDuration(seconds: number, locale: string): string {
  const s = Math.max(0, Math.round(seconds))
  const unit = (value: number, name: 'hour' | 'minute' | 'second') =>
    new Intl.NumberFormat(locale, { style: 'unit', unit: name, unitDisplay: 'short' }).format(value)
  if (s >= 3600) {
    const minutes = Math.floor((s % 3600) / 60)
    const hours = unit(Math.floor(s / 3600), 'hour')
    const both = new Intl.ListFormat(locale, { style: 'narrow', type: 'unit' })
    return minutes > 0 ? both.format([hours, unit(minutes, 'minute')]) : hours
  }
  if (s >= 60) return unit(Math.round(s / 60), 'minute')
  return unit(s, 'second')
}

/**
 * How long a finished rental was kept, in days first: `3 days 4 hr` / `3天 4小时`, `5 hr 12 min`
 * under a day, `40 min` under an hour (a stopwatch's `76:12:33` makes people count).
 */
export function formatKeptFor(seconds: number, locale: string): string {
  const s = Math.max(0, Math.round(seconds))
  const unit = (value: number, name: 'day' | 'hour' | 'minute') =>
    new Intl.NumberFormat(locale, { style: 'unit', unit: name, unitDisplay: name === 'day' ? 'long' : 'short' }).format(value)
  const days = Math.floor(s / 86_400)
  const hours = Math.floor((s % 86_400) / 3600)
  const minutes = Math.floor((s % 3600) / 60)
  if (days > 0) return hours > 0 ? `${unit(days, 'day')} ${unit(hours, 'hour')}` : unit(days, 'day')
  if (hours > 0) return minutes > 0 ? `${unit(hours, 'hour')} ${unit(minutes, 'minute')}` : unit(hours, 'hour')
  return unit(Math.max(minutes, 1), 'minute')
}

/** A clock time without seconds, `10:35`, in the user's locale (24-hour in zh-CN). */
export function formatClockTime(at: string | Date, locale: string): string {
  const date = typeof at === 'string' ? new Date(at) : at
  return new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(date)
}

/** `["GPU", "CPU", "Disk"]` → `GPU, CPU, and Disk` / `GPU、CPU和磁盘`: lists built in code read natively. */
export function formatList(items: string[], locale: string): string {
  return new Intl.ListFormat(locale, { style: 'long', type: 'conjunction' }).format(items)
}

/**
 * Amounts for a chart's ticks, all in one scale so no axis shows `¥5,000` beside `¥1.5万`: in
 * Chinese whole 万 once the largest tick reaches ten thousand, in English K or M; as many
 * decimals as it takes to show each tick exactly, the same for every tick.
 */
export function formatMoneyTicks(values: number[], currency: string, locale: string): string[] {
  if (values.length === 0) return []
  const largest = Math.max(...values.map(Math.abs))
  const chinese = locale.toLowerCase().startsWith('zh')
  const [divisor, suffix] = chinese
    ? largest >= 1e8 ? [1e8, '亿'] : largest >= 1e4 ? [1e4, '万'] : [1, '']
    : largest >= 1e7 ? [1e6, 'M'] : largest >= 1e4 ? [1e3, 'K'] : [1, '']
  const scaled = values.map((v) => v / divisor)
  // The fewest decimals that show every tick exactly (ticks are round numbers: 2.5, 0.5万).
  let digits = 0
  while (digits < 4 && scaled.some((v) => Math.abs(v * 10 ** digits - Math.round(v * 10 ** digits)) > 1e-6)) digits += 1
  let format: Intl.NumberFormat
  try {
    format = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits })
  } catch {
    format = new Intl.NumberFormat(locale, { minimumFractionDigits: digits, maximumFractionDigits: digits })
  }
  // Zero is the same in every scale: the axis's floor reads `¥0`, not `¥0.0万`.
  const zero = format.format(0).replace(/[.,]0+(?=\D*$)/, '')
  return scaled.map((v) => (v === 0 ? zero : `${format.format(v)}${suffix}`))
}

/** The one way a percentage figure is shown, in the language's own style (`98%` in English and
 *  Chinese): whole by default, or with up to `digits` decimals (`88.6%`). `value` is in percent
 *  (98, not 0.98); a decimal string from core is read as a number. */
export function formatPercent(value: number | string, locale: string, digits = 0): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: digits }).format(Number(value) / 100)
}

/** A `YYYY-MM` month in the reader's words ("December 2026", "2026年12月"); anything else as given. */
export function formatMonth(month: string, lang: string): string {
  const match = /^(\d{4})-(\d{2})$/.exec(month)
  if (!match) return month
  const at = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1))
  return new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'long', timeZone: 'UTC' }).format(at)
}

/** Minutes as "45 min" or "3 h 05 min", in the given patterns. */
export function minutesText(minutes: number, short: (m: number) => string, long: (h: number, m: string) => string): string {
  if (minutes < 60) return short(minutes)
  return long(Math.floor(minutes / 60), String(minutes % 60).padStart(2, '0'))
}

/** Core writes commands in `backticks`; split them out so they can be shown as code. */
export function codeSpans(text: string): { code: boolean; text: string }[] {
  return text
    .split('`')
    .map((part, i) => ({ code: i % 2 === 1, text: part }))
    .filter((part) => part.text !== '')
}

const DAY_MS = 86_400_000

/** Whole days left before `wipeAt` (a provider's clean-up), rounded down; 0 on the last day and after it. */
export function daysLeft(wipeAt: string, now: number): number {
  const left = Date.parse(wipeAt) - now
  if (!Number.isFinite(left) || left <= 0) return 0
  return Math.floor(left / DAY_MS)
}

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

/** Seconds left as `1 h 05 min`, `3 min`, `12 s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
  if (s >= 60) return `${Math.round(s / 60)} min`
  return `${s} s`
}

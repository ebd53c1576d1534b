// Numbers as the facts view shows them.
import { formatBytes, formatPercent } from '../../format'

/** MiB → `23.6 GiB` (or `512 MiB` below one GiB); `—` when unknown. */
export function size(mib: number | null | undefined): string {
  if (mib === null || mib === undefined || !Number.isFinite(mib)) return '—'
  if (mib < 1024) return `${Math.round(mib)} MiB`
  const gib = mib / 1024
  return `${gib >= 100 ? Math.round(gib) : Math.round(gib * 10) / 10} GiB`
}

/**
 * A disk's MiB as the Backup screen and the providers write disks: decimal `271 GB`, so the same
 * disk never reads 252 GiB here and 271 GB there; `—` when unknown.
 */
export function diskSize(mib: number | null | undefined, lang: string): string {
  if (mib === null || mib === undefined || !Number.isFinite(mib)) return '—'
  return formatBytes(mib * 1024 * 1024, lang)
}

/** `used / total` memory of a GPU or disk, with the share used in the reader's style. */
export function usage(used: number | null | undefined, total: number | null | undefined, lang: string): string {
  if (total === null || total === undefined || total <= 0) return size(used)
  if (used === null || used === undefined) return `— / ${size(total)}`
  return `${size(used)} / ${size(total)} (${formatPercent((used / total) * 100, lang)})`
}

/** A share in percent (`38%`) in the reader's style, or `—` when unknown. */
export function percent(value: number | null | undefined, lang: string): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—'
  return formatPercent(value, lang)
}

/** A value with its unit, or `—`. */
export function unit(value: number | null | undefined, suffix: string, digits = 0): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—'
  const factor = 10 ** digits
  return `${Math.round(value * factor) / factor}${suffix}`
}

/** Milliseconds as `0.4 s` / `12 s`. */
export function seconds(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return ''
  const s = ms / 1000
  return s < 10 ? `${Math.round(s * 10) / 10} s` : `${Math.round(s)} s`
}

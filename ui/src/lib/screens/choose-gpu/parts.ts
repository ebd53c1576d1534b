// The stacked bar of the memory estimate: which parts to draw and how wide. Widths follow the
// GiB, except that a part too small to see (LoRA's gradients next to 14 GiB of weights) still
// gets a sliver, taken from the parts big enough to spare it, so every part the legend lists
// can be found in the bar.
import type { MemoryParts } from '../../bindings/MemoryParts'
import type { PartFormulas } from '../../bindings/PartFormulas'

export const PART_KEYS = ['weights', 'kv_cache', 'activations', 'gradients', 'optimizer', 'overhead'] as const
export type PartKey = (typeof PART_KEYS)[number]

/** Parts below this are rounding noise (core reports two decimals). */
const NOTHING_GIB = 0.005

export interface Segment {
  key: PartKey
  gib: number
  /** Share of the bar's width, percent; all segments add up to 100. */
  width: number
}

export function partGib(parts: MemoryParts, key: PartKey): number {
  return parts[`${key}_gib`]
}

export function partFormula(formulas: PartFormulas, key: PartKey) {
  return formulas[key]
}

/** The bar's segments in legend order, zero parts left out; each at least `minWidth` percent. */
export function segments(parts: MemoryParts, minWidth = 1.5): Segment[] {
  const present = PART_KEYS.map((key) => ({ key, gib: partGib(parts, key) })).filter(
    (part) => part.gib > NOTHING_GIB,
  )
  const total = present.reduce((sum, part) => sum + part.gib, 0)
  if (total <= 0) return []
  const floor = Math.min(minWidth, 100 / present.length)
  const raw = present.map((part) => (part.gib / total) * 100)
  const raised = raw.map((width) => Math.max(width, floor))
  const excess = raised.reduce((sum, width) => sum + width, 0) - 100
  // Only segments above the floor give up width, in proportion to what they have above it.
  const spare = raised.reduce((sum, width) => sum + (width > floor ? width - floor : 0), 0)
  return present.map((part, i) => {
    const width = raised[i]
    const give = spare > 0 && width > floor ? (excess * (width - floor)) / spare : 0
    return { key: part.key, gib: part.gib, width: width - give }
  })
}

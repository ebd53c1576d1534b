// How old a market price is, in whole minutes, for "12 min ago" beside each offer. Core writes
// timestamps with nanoseconds; not every engine's Date reads more than milliseconds.

export function ageMinutes(fetchedAt: string, now: number): number {
  const at = Date.parse(fetchedAt.replace(/(\.\d{3})\d+/, '$1'))
  if (Number.isNaN(at)) return 0
  return Math.max(0, Math.floor((now - at) / 60_000))
}

/** A ledger name for a new rental: `vast-4090-1204-1530`, which the user may change. */
export function suggestedName(provider: string, gpu: string, at: Date): string {
  const model = gpu.match(/\d{3,4}|[A-Z]\d{2,3}/i)?.[0]?.toLowerCase() ?? 'gpu'
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${provider}-${model}-${pad(at.getMonth() + 1)}${pad(at.getDate())}-${pad(at.getHours())}${pad(at.getMinutes())}`
}

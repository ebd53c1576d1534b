// How the Choose GPU screen writes numbers, names and core's two-language texts.
import type { Candidate } from '../../bindings/Candidate'
import type { Text } from '../../bindings/Text'

/** Core's product texts come in both languages; pick the interface's. */
export function pick(text: Text, language: string): string {
  return language.startsWith('zh') ? text.zh : text.en
}

/** GiB with one decimal (two below 1 GiB, where one would round a part away). */
export function formatGib(gib: number, language: string): string {
  const digits = gib < 1 ? 2 : 1
  const number = new Intl.NumberFormat(language, {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(gib)
  return `${number} GiB`
}

/** "NVIDIA GeForce RTX 4090" → "RTX 4090", "Tesla T4" → "T4": the name renters use. */
export function shortGpuName(name: string): string {
  return name.replace(/^NVIDIA\s+/i, '').replace(/^(GeForce|Tesla)\s+/i, '')
}

export interface CandidateGroups {
  single: Candidate[]
  multi: Candidate[]
  tooSmall: Candidate[]
}

/** Split core's ranking (kept in its order) into one card, several cards, and too small. */
export function groupCandidates(candidates: readonly Candidate[]): CandidateGroups {
  return {
    single: candidates.filter((c) => c.fits && c.count === 1),
    multi: candidates.filter((c) => c.fits && c.count > 1),
    tooSmall: candidates.filter((c) => !c.fits),
  }
}

/** Notes worth a tag on the row itself (the rest wait behind "Details"). */
const TAGGED_NOTES: Record<string, string> = {
  'recommend.blackwell_wheels': 'blackwell',
  'recommend.volta_wheels': 'volta',
  'recommend.pcie_multi_gpu': 'pcie',
  'recommend.fits_with_checkpointing': 'checkpointing',
}

export function tagsFor(candidate: Candidate): string[] {
  return candidate.notes.map((note) => TAGGED_NOTES[note.code]).filter((tag): tag is string => Boolean(tag))
}

/** A card's memory: "24 GiB", "22.5 GiB" (no trailing ".0"). */
export function formatCardGib(gib: number, language: string): string {
  return `${new Intl.NumberFormat(language, { maximumFractionDigits: 1 }).format(gib)} GiB`
}

/** A stable key for a candidate: the same card can be offered alone and as 2, 4 or 8. */
export function candidateKey(candidate: Pick<Candidate, 'gpu_id' | 'count'>): string {
  return `${candidate.gpu_id}x${candidate.count}`
}

export { codeSpans } from '../../format'


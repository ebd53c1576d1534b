import { describe, expect, it } from 'vitest'
import { ageMinutes, suggestedName } from './marketAge'

describe('market ages and names', () => {
  it('reads core timestamps with nanoseconds and never goes negative', () => {
    const now = Date.parse('2026-12-04T15:30:00Z')
    expect(ageMinutes('2026-12-04T15:17:59.123456789Z', now)).toBe(12)
    expect(ageMinutes('2026-12-04T15:31:00Z', now)).toBe(0)
    expect(ageMinutes('not a time', now)).toBe(0)
  })

  it('suggests a name from the provider, the card and the time', () => {
    const at = new Date(2026, 11, 4, 15, 3)
    expect(suggestedName('vast', 'RTX 4090', at)).toBe('vast-4090-1204-1503')
    expect(suggestedName('runpod', 'NVIDIA H100 80GB HBM3', at)).toBe('runpod-h100-1204-1503')
    expect(suggestedName('lambda', 'Tesla', at)).toBe('lambda-gpu-1204-1503')
  })
})

import { describe, expect, it } from 'vitest'
import { diskSize, percent, seconds, size, unit, usage } from './format'

describe('facts formatting', () => {
  it('shows memory in GiB with one decimal, small amounts in MiB, unknown as a dash', () => {
    expect(size(24564)).toBe('24 GiB')
    expect(size(46068)).toBe('45 GiB')
    expect(size(17321)).toBe('16.9 GiB')
    expect(size(512)).toBe('512 MiB')
    expect(size(819200)).toBe('800 GiB')
    expect(size(null)).toBe('—')
  })

  it('shows usage with its share, and copes with unknown parts', () => {
    expect(usage(17321, 46068, 'en')).toBe('16.9 GiB / 45 GiB (38%)')
    expect(usage(17321, 46068, 'zh-CN')).toBe('16.9 GiB / 45 GiB (38%)')
    expect(usage(null, 46068, 'en')).toBe('— / 45 GiB')
    expect(usage(3, null, 'en')).toBe('3 MiB')
  })

  it('rounds values and durations for reading', () => {
    expect(unit(213.77, ' W', 1)).toBe('213.8 W')
    expect(unit(null, ' W')).toBe('—')
    expect(percent(87.6, 'en')).toBe('88%')
    expect(percent(null, 'en')).toBe('—')
    expect(seconds(420)).toBe('0.4 s')
    expect(seconds(14_200)).toBe('14 s')
  })
})

describe('diskSize', () => {
  it('writes a disk in decimal GB as Backup does, not GiB', () => {
    // df's 258 518 MiB disk is the 271 GB Backup shows for it.
    expect(diskSize(258_518, 'en')).toBe('271 GB')
    expect(diskSize(33_000, 'zh-CN')).toBe('34.6 GB')
    expect(diskSize(null, 'en')).toBe('—')
  })
})

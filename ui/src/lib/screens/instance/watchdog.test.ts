import { describe, expect, it } from 'vitest'
import type { WatchdogStatus } from '../../bindings/WatchdogStatus'
import { durationSeconds, durationSetting, parseSample, powerOffAt, splitDuration } from './watchdog'

function status(overrides: Partial<WatchdogStatus>): WatchdogStatus {
  return {
    installed: true,
    running: true,
    pid: 42,
    state_dir: '~/.leasehold-watchdog',
    boot: 'cron',
    boot_in_place: true,
    phase: 'idle',
    idle_seconds: 600,
    busy: [],
    sample: 'gpu=0% cpu=1% io=0KiB/s net=0KiB/s ssh=0',
    unreadable: [],
    updated: '2026-12-03T10:05:00Z',
    settings: { idle_s: '1800' },
    log: [],
    ...overrides,
  }
}

describe('watchdog durations', () => {
  it('shows whole seconds in the largest unit that divides them', () => {
    expect(splitDuration(1800)).toEqual({ amount: 30, unit: 'min' })
    expect(splitDuration(7200)).toEqual({ amount: 2, unit: 'h' })
    expect(splitDuration(90)).toEqual({ amount: 90, unit: 's' })
    expect(splitDuration(0)).toEqual({ amount: 0, unit: 's' })
  })

  it('writes them back the way the watchdog reads them, and round-trips', () => {
    expect(durationSetting({ amount: 30, unit: 'min' })).toBe('30m')
    expect(durationSetting({ amount: 2, unit: 'h' })).toBe('2h')
    expect(durationSetting({ amount: 2, unit: 's' })).toBe('2s')
    for (const seconds of [5, 60, 90, 1800, 3600, 43200]) expect(durationSeconds(splitDuration(seconds))).toBe(seconds)
  })
})

describe('parseSample', () => {
  it('reads the shell script’s sample line, one reading per signal', () => {
    expect(parseSample('gpu=98% cpu=first io=12KiB/s net=unreadable ssh=1')).toEqual([
      { signal: 'gpu', kind: 'percent', value: 98 },
      { signal: 'cpu', kind: 'first' },
      { signal: 'io', kind: 'rate', kib: 12 },
      { signal: 'net', kind: 'unreadable' },
      { signal: 'ssh', kind: 'count', value: 1 },
    ])
  })

  it('skips words it does not know instead of showing them', () => {
    expect(parseSample('gpu=?? junk cpu=3%')).toEqual([{ signal: 'cpu', kind: 'percent', value: 3 }])
    expect(parseSample(null)).toEqual([])
  })
})

describe('powerOffAt', () => {
  it('is the latest sample plus what is left of the idle time', () => {
    // 600 s of 1800 s quiet at 10:05:00 → 20 minutes left.
    expect(powerOffAt(status({}))?.toISOString()).toBe('2026-12-03T10:25:00.000Z')
  })

  it('is unknown while busy, in grace, stopped, or without the setting', () => {
    expect(powerOffAt(status({ phase: 'watching', idle_seconds: null }))).toBeNull()
    expect(powerOffAt(status({ phase: 'grace' }))).toBeNull()
    expect(powerOffAt(status({ running: false }))).toBeNull()
    expect(powerOffAt(status({ settings: {} }))).toBeNull()
  })

  it('never lies in the past of the sample when the idle time is already over', () => {
    expect(powerOffAt(status({ idle_seconds: 2000 }))?.toISOString()).toBe('2026-12-03T10:05:00.000Z')
  })
})

import { describe, expect, it } from 'vitest'
import type { Finding } from '../../bindings/Finding'
import { Checklist, countBySeverity, probeOfFinding, sortFindings } from './checklist.svelte'

const finding = (code: string, severity: Finding['severity']): Finding => ({
  code,
  severity,
  title: code,
  detail: '',
  fix: [],
  evidence: [],
})

describe('Checklist', () => {
  it('moves each probe from pending to running to its outcome as events arrive', () => {
    const list = new Checklist()
    list.start(false)
    expect(list.states.gpu).toBe('pending')
    expect(list.states.stress, 'the stress test only runs when asked for').toBe('skipped')
    list.apply({ event: 'started', probe: 'gpu' })
    expect(list.states.gpu).toBe('running')
    list.apply({ event: 'finished', run: { probe: 'gpu', outcome: 'ok', duration_ms: 420, message: null } })
    list.apply({ event: 'finished', run: { probe: 'torch', outcome: 'failed', duration_ms: 90, message: 'no python' } })
    list.apply({ event: 'finished', run: { probe: 'network', outcome: 'timed_out', duration_ms: 14000, message: 'no answer' } })
    expect(list.states).toMatchObject({ gpu: 'done', torch: 'failed', network: 'warning' })
    expect(list.durations.gpu).toBe(420)
    expect(list.messages.torch).toBe('no python')
    expect(list.progress, 'eight probes run without the stress test').toEqual({ finished: 3, total: 8 })
  })

  it('turns a finished probe red or amber when its facts led to an error or a warning', () => {
    const list = new Checklist()
    list.start(true)
    for (const probe of ['system', 'gpu', 'torch', 'network', 'stress'] as const) {
      list.apply({ event: 'finished', run: { probe, outcome: 'ok', duration_ms: 1, message: null } })
    }
    list.settle([
      finding('torch.cpu_build', 'error'),
      finding('disk.low', 'warning'),
      finding('network.slow_mirror', 'info'),
      finding('gpu.underperforming', 'warning'),
    ])
    expect(list.states.torch).toBe('failed')
    expect(list.states.system, 'disk findings belong to the system probe').toBe('warning')
    expect(list.states.network, 'a note does not colour a probe').toBe('done')
    expect(list.states.stress).toBe('warning')
    expect(list.states.gpu).toBe('done')
  })

  it('an error outranks a warning on the same probe whatever the order', () => {
    const list = new Checklist()
    list.start(false)
    list.apply({ event: 'finished', run: { probe: 'gpu', outcome: 'ok', duration_ms: 1, message: null } })
    list.settle([finding('gpu.xid', 'error'), finding('gpu.busy', 'warning')])
    expect(list.states.gpu).toBe('failed')
  })

  it('shows a stored run as it ended, stress test included only when it ran', () => {
    const list = new Checklist()
    list.restore(
      [
        { probe: 'gpu', outcome: 'ok', duration_ms: 300, message: null },
        { probe: 'torch', outcome: 'ok', duration_ms: 200, message: null },
        { probe: 'stress', outcome: 'skipped', duration_ms: 0, message: null },
      ],
      [finding('torch.cpu_build', 'error')],
    )
    expect(list.states).toMatchObject({ gpu: 'done', torch: 'failed', stress: 'skipped' })
    expect(list.progress.total, 'the skipped stress test is not counted').toBe(8)
  })

  it('stops showing probes as running when the run is abandoned', () => {
    const list = new Checklist()
    list.start(false)
    list.apply({ event: 'started', probe: 'torch' })
    list.abandon()
    expect(list.states.torch).toBe('skipped')
    expect(list.states.gpu).toBe('skipped')
  })
})

describe('findings', () => {
  it('are shown errors first, then warnings, then notes, keeping core order within each', () => {
    const sorted = sortFindings([
      finding('network.slow_mirror', 'info'),
      finding('disk.low', 'warning'),
      finding('torch.cpu_build', 'error'),
      finding('gpu.busy', 'warning'),
      finding('driver.not_loaded', 'error'),
    ])
    expect(sorted.map((f) => f.code)).toEqual(['torch.cpu_build', 'driver.not_loaded', 'disk.low', 'gpu.busy', 'network.slow_mirror'])
  })

  it('are counted by severity', () => {
    expect(countBySeverity([finding('a.b', 'error'), finding('c.d', 'info'), finding('e.f', 'error')])).toEqual({
      error: 2,
      warning: 0,
      info: 1,
    })
  })

  it('belong to the probe whose facts they rest on', () => {
    expect(probeOfFinding('driver.not_loaded')).toBe('gpu')
    expect(probeOfFinding('gpu.stress_failed')).toBe('stress')
    expect(probeOfFinding('memory.starved')).toBe('system')
    expect(probeOfFinding('ollama.cpu_offload')).toBe('ollama')
  })
})

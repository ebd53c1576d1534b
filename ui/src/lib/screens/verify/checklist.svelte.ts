// The Verify page's logic, apart from its markup so it is tested on its own: the live checklist
// fed by probe events (pending → running → done / warning / failed), how findings map onto the
// probes that found them, and the order findings are shown in.
import type { Finding } from '../../bindings/Finding'
import type { ProbeEvent } from '../../bindings/ProbeEvent'
import type { ProbeId } from '../../bindings/ProbeId'
import type { ProbeRun } from '../../bindings/ProbeRun'
import type { Severity } from '../../bindings/Severity'

export const PROBES: readonly ProbeId[] = ['system', 'gpu', 'python', 'conda', 'torch', 'docker', 'ollama', 'network', 'stress']

export type ProbeState = 'pending' | 'running' | 'done' | 'warning' | 'failed' | 'skipped'

/** Which probe's facts a finding rests on, by its code's area (`torch.cpu_build` → torch). */
export function probeOfFinding(code: string): ProbeId {
  if (code === 'gpu.underperforming' || code === 'gpu.stress_failed') return 'stress'
  const area = code.split('.')[0]
  switch (area) {
    case 'driver':
    case 'gpu':
      return 'gpu'
    case 'torch':
      return 'torch'
    case 'python':
      return 'python'
    case 'conda':
      return 'conda'
    case 'docker':
      return 'docker'
    case 'ollama':
      return 'ollama'
    case 'network':
      return 'network'
    default:
      return 'system'
  }
}

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 }

/** Errors first, then warnings, then notes; the order core gave within each. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return findings
    .map((finding, index) => ({ finding, index }))
    .sort((a, b) => SEVERITY_ORDER[a.finding.severity] - SEVERITY_ORDER[b.finding.severity] || a.index - b.index)
    .map(({ finding }) => finding)
}

export function countBySeverity(findings: readonly Finding[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 }
  for (const finding of findings) counts[finding.severity] += 1
  return counts
}

function initial(stress: boolean): Record<ProbeId, ProbeState> {
  const states = {} as Record<ProbeId, ProbeState>
  for (const probe of PROBES) states[probe] = probe === 'stress' && !stress ? 'skipped' : 'pending'
  return states
}

/** One probe battery as the checklist shows it. */
export class Checklist {
  states = $state<Record<ProbeId, ProbeState>>(initial(false))
  durations = $state<Partial<Record<ProbeId, number>>>({})
  messages = $state<Partial<Record<ProbeId, string>>>({})

  /** A new run: every probe pending, the stress test skipped unless asked for. */
  start(stress: boolean): void {
    this.states = initial(stress)
    this.durations = {}
    this.messages = {}
  }

  apply(event: ProbeEvent): void {
    if (event.event === 'started') {
      this.states[event.probe] = 'running'
      return
    }
    const { probe, outcome, duration_ms, message } = event.run
    this.states[probe] = outcome === 'ok' ? 'done' : outcome === 'skipped' ? 'skipped' : outcome === 'timed_out' ? 'warning' : 'failed'
    if (outcome !== 'skipped') this.durations[probe] = duration_ms
    if (message) this.messages[probe] = message
  }

  /** With the findings in: a probe whose facts led to an error shows failed, to a warning shows warning. */
  settle(findings: readonly Finding[]): void {
    for (const finding of findings) {
      const probe = probeOfFinding(finding.code)
      const current = this.states[probe]
      if (current === 'skipped' || current === 'pending') continue
      if (finding.severity === 'error') this.states[probe] = 'failed'
      else if (finding.severity === 'warning' && current === 'done') this.states[probe] = 'warning'
    }
  }

  /** Show a stored run as it ended. */
  restore(probes: readonly ProbeRun[], findings: readonly Finding[]): void {
    this.start(probes.some((run) => run.probe === 'stress' && run.outcome !== 'skipped'))
    for (const run of probes) this.apply({ event: 'finished', run })
    this.settle(findings)
  }

  /** The run was cancelled or could not connect: what never finished is no longer running. */
  abandon(): void {
    for (const probe of PROBES) {
      if (this.states[probe] === 'running' || this.states[probe] === 'pending') this.states[probe] = 'skipped'
    }
  }

  get progress(): { finished: number; total: number } {
    const counted = PROBES.filter((probe) => this.states[probe] !== 'skipped' || this.durations[probe] !== undefined)
    const finished = counted.filter((probe) => !['pending', 'running'].includes(this.states[probe])).length
    return { finished, total: counted.length }
  }
}

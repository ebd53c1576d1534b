import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ConnectPlan } from '../../bindings/ConnectPlan'
import type { StepEvent } from '../../bindings/StepEvent'
import type { TestReport } from '../../bindings/TestReport'
import { BackendError } from '../../backend/ipc'
import type { DestinationSummary } from '../../bindings/DestinationSummary'
import { CommandPreview, ConnectFlow, hintKey, missingFields, planFrom, PREVIEW_DELAY_MS, StepBoard, type LoginForm } from './flow.svelte'

const form: LoginForm = {
  sshCommand: '  ssh -p 2222 root@gpu.example  ',
  method: 'key',
  keyPath: '~/.ssh/id_ed25519',
  generatedKeyPath: null,
  keyEncrypted: false,
  secret: '',
}

const hello = { hostname: 'gpu-1', system: 'Linux 6.1 x86_64', user: 'root' }
const connected: TestReport = {
  check: { outcome: 'connected', destination: 'root@gpu.example:2222', remote: hello },
  saved: null,
}
const question: TestReport = {
  check: { outcome: 'needs_trust', host: 'gpu.example', port: 2222, fingerprint: 'SHA256:abc', algorithm: 'ssh-ed25519', print_command: 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub' },
  saved: null,
}

/** A backend stand-in that replays steps and answers in turn, recording every plan it got. */
function scripted(answers: { steps: StepEvent[]; result: TestReport | Error }[]) {
  const plans: ConnectPlan[] = []
  const test = async (plan: ConnectPlan, onStep: (event: StepEvent) => void) => {
    plans.push(plan)
    const next = answers.shift()
    if (!next) throw new Error('no more answers scripted')
    for (const event of next.steps) onStep(event)
    if (next.result instanceof Error) throw next.result
    return next.result
  }
  return { test, plans }
}

const through = (last: StepEvent['step'], status: StepEvent['status']): StepEvent[] => {
  const order: StepEvent['step'][] = ['tcp', 'handshake', 'host_key', 'auth', 'first_command']
  const events: StepEvent[] = []
  for (const step of order) {
    events.push({ step, status: 'started' })
    if (step === last) {
      if (status !== 'started') events.push({ step, status })
      break
    }
    events.push({ step, status: 'done' })
  }
  return events
}

describe('StepBoard', () => {
  it('follows the reported steps and starts over when a retry begins at TCP', () => {
    const board = new StepBoard()
    for (const event of through('auth', 'started')) board.apply(event)
    expect(board.states).toEqual({ tcp: 'done', handshake: 'done', host_key: 'done', auth: 'running', first_command: 'pending' })
    board.apply({ step: 'tcp', status: 'started' })
    expect(board.states.handshake, 'a new attempt clears what the old one reached').toBe('pending')
    expect(board.states.tcp).toBe('running')
  })

  it('blames the running step when the test errors without naming one', () => {
    const board = new StepBoard()
    for (const event of through('handshake', 'started')) board.apply(event)
    board.failRunning()
    expect(board.failed).toBe('handshake')
    expect(board.states.tcp, 'finished steps stay done').toBe('done')
  })
})

describe('planFrom', () => {
  it('sends the trimmed command, the chosen key and no secret for an unencrypted key', () => {
    expect(planFrom({ ...form, secret: 'typed by mistake' }, null)).toEqual({
      ssh_command: 'ssh -p 2222 root@gpu.example',
      auth: { method: 'key', path: '~/.ssh/id_ed25519' },
      secret: null,
      trusted_fingerprint: null,
      keep_trying: false,
    })
  })

  it('sends the passphrase of an encrypted key and the password of a password login', () => {
    expect(planFrom({ ...form, keyEncrypted: true, secret: 'pass phrase' }, null).secret).toBe('pass phrase')
    const password = planFrom({ ...form, method: 'password', secret: 'hunter2' }, 'SHA256:abc')
    expect(password.auth).toEqual({ method: 'password' })
    expect(password.secret).toBe('hunter2')
    expect(password.trusted_fingerprint).toBe('SHA256:abc')
  })

  it('logs in with the generated key when the user asked for one, and never sends a secret with the agent', () => {
    expect(planFrom({ ...form, method: 'generate', generatedKeyPath: '/data/keys/leasehold_ed25519' }, null).auth).toEqual({
      method: 'key',
      path: '/data/keys/leasehold_ed25519',
    })
    expect(planFrom({ ...form, method: 'agent', secret: 'x' }, null)).toMatchObject({ auth: { method: 'agent' }, secret: null })
  })
})

describe('missingFields', () => {
  it('asks for the command, the key path, the generated key or the password as the method needs', () => {
    expect(missingFields({ ...form, sshCommand: '   ' })).toEqual({ sshCommand: 'connect.required' })
    expect(missingFields({ ...form, keyPath: '' })).toEqual({ keyPath: 'connect.required' })
    expect(missingFields({ ...form, method: 'generate' })).toEqual({ generatedKeyPath: 'connect.required' })
    expect(missingFields({ ...form, method: 'password' })).toEqual({ secret: 'connect.required' })
    expect(missingFields({ ...form, method: 'agent', keyPath: '' }), 'the agent needs nothing typed').toEqual({})
  })
})

describe('ConnectFlow', () => {
  it('asks on first contact and, once confirmed, tests again trusting exactly that fingerprint', async () => {
    const backend = scripted([
      { steps: through('host_key', 'failed'), result: question },
      { steps: through('first_command', 'done'), result: connected },
    ])
    const flow = new ConnectFlow(backend.test)
    await flow.run(form)
    expect(flow.phase).toBe('trust')
    expect(flow.needsTrust?.fingerprint).toBe('SHA256:abc')
    expect(backend.plans[0].trusted_fingerprint, 'nothing is trusted before the user says so').toBeNull()
    await flow.trust()
    expect(backend.plans[1].trusted_fingerprint).toBe('SHA256:abc')
    expect(flow.phase).toBe('connected')
    expect(flow.connected?.remote.hostname).toBe('gpu-1')
    expect(flow.board.states.first_command).toBe('done')
  })

  it('trusts nothing when the user declines, and a later run asks again', async () => {
    const backend = scripted([
      { steps: through('host_key', 'failed'), result: question },
      { steps: through('host_key', 'failed'), result: question },
    ])
    const flow = new ConnectFlow(backend.test)
    await flow.run(form)
    flow.reject()
    expect(flow.phase).toBe('idle')
    await flow.trust()
    expect(backend.plans.length, 'declining must not send a trusted fingerprint').toBe(1)
    await flow.run(form)
    expect(backend.plans[1].trusted_fingerprint).toBeNull()
  })

  it('stops hard on a changed key, marking the host key step failed', async () => {
    const changed: TestReport = {
      check: {
        outcome: 'host_key_changed',
        host: 'gpu.example',
        port: 2222,
        old_fingerprint: 'SHA256:old',
        new_fingerprint: 'SHA256:new',
        new_algorithm: 'ssh-ed25519',
        known_hosts: '/k',
        line: 1,
        recorded: [{ algorithm: 'ssh-ed25519', fingerprint: 'SHA256:old', known_hosts: '/k', line: 1 }],
        forget_command: "ssh-keygen -R '[gpu.example]:2222' -f /k",
      },
      saved: null,
    }
    const flow = new ConnectFlow(scripted([{ steps: through('handshake', 'done'), result: changed }]).test)
    await flow.run(form)
    expect(flow.phase).toBe('changed')
    expect(flow.changed?.old_fingerprint).toBe('SHA256:old')
    expect(flow.board.states.host_key).toBe('failed')
    expect(flow.failedStep).toBe('host_key')
  })

  it('asks the backend to keep trying only when the user chose to, and keeps asking after trust', async () => {
    const backend = scripted([
      { steps: through('host_key', 'failed'), result: question },
      { steps: through('first_command', 'done'), result: connected },
    ])
    const flow = new ConnectFlow(backend.test)
    await flow.run(form, true)
    await flow.trust()
    expect(backend.plans.map((p) => p.keep_trying)).toEqual([true, true])
  })

  it('keeps the error code and the step it failed at', async () => {
    const refused = new BackendError({ code: 'ssh.auth_failed', message: 'rejected' })
    const flow = new ConnectFlow(scripted([{ steps: through('auth', 'failed'), result: refused }]).test)
    await flow.run(form)
    expect(flow.phase).toBe('failed')
    expect(flow.error?.code).toBe('ssh.auth_failed')
    expect(flow.failedStep).toBe('auth')
  })
})

describe('hintKey', () => {
  it('gives advice that fits how the user logged in', () => {
    expect(hintKey('ssh.auth_failed', 'password')).toBe('connect.hint.auth_failed_password')
    expect(hintKey('ssh.auth_failed', 'generate')).toBe('connect.hint.auth_failed_key')
    expect(hintKey('ssh.refused', 'key')).toBe('connect.hint.not_ready')
    expect(hintKey('ssh.host_key_revoked', 'key')).toBeNull()
  })
})

describe('CommandPreview', () => {
  afterEach(() => vi.useRealTimers())

  const summary = (host: string): DestinationSummary => ({
    user: 'root',
    host,
    port: 22,
    jump: [],
    ignored: [],
    alias: '',
    identity_files: [],
  })

  it('reads the command once the typing pauses, and an older slow answer never replaces a newer one', async () => {
    vi.useFakeTimers()
    const asked: string[] = []
    const answers: Record<string, { resolve: (s: DestinationSummary) => void }> = {}
    const preview = new CommandPreview(
      (command) =>
        new Promise((resolve) => {
          asked.push(command)
          answers[command] = { resolve }
        }),
    )
    preview.update('ssh a')
    preview.update('ssh ab')
    await vi.advanceTimersByTimeAsync(PREVIEW_DELAY_MS)
    expect(asked, 'one question for a burst of keys').toEqual(['ssh ab'])
    preview.update('  ssh abc ')
    await vi.advanceTimersByTimeAsync(PREVIEW_DELAY_MS)
    answers['ssh abc'].resolve(summary('abc'))
    await Promise.resolve()
    answers['ssh ab'].resolve(summary('ab'))
    await Promise.resolve()
    expect(preview.summary?.host).toBe('abc')
  })

  it('shows a refusal, and nothing at all for an empty field', async () => {
    vi.useFakeTimers()
    const preview = new CommandPreview(async () => {
      throw new BackendError({ code: 'ssh.bad_command', message: 'not an ssh command' })
    })
    preview.update('scp x y:')
    await vi.advanceTimersByTimeAsync(PREVIEW_DELAY_MS)
    expect(preview.error?.code).toBe('ssh.bad_command')
    preview.update('   ')
    expect([preview.summary, preview.error]).toEqual([null, null])
  })
})

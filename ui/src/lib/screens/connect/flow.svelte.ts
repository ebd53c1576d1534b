// The Connect wizard's logic, apart from its markup so it is tested on its own: the live step
// list, what a test ended in (connected / first-contact question / changed key / failure), and
// the plan sent to the backend from what the user filled in.
import type { ApiError } from '../../bindings/ApiError'
import type { ErrorCode } from '../../bindings/ErrorCode'
import type { ConnectionCheck } from '../../bindings/ConnectionCheck'
import type { DestinationSummary } from '../../bindings/DestinationSummary'
import type { ConnectPlan } from '../../bindings/ConnectPlan'
import type { ConnectStep } from '../../bindings/ConnectStep'
import type { SaveReport } from '../../bindings/SaveReport'
import type { StepEvent } from '../../bindings/StepEvent'
import type { TestReport } from '../../bindings/TestReport'
import { toApiError } from '../../backend/ipc'
import { Debouncer } from '../../debounce'

export const STEPS: readonly ConnectStep[] = ['tcp', 'handshake', 'host_key', 'auth', 'first_command']

export type StepState = 'pending' | 'running' | 'done' | 'failed'

function allPending(): Record<ConnectStep, StepState> {
  return { tcp: 'pending', handshake: 'pending', host_key: 'pending', auth: 'pending', first_command: 'pending' }
}

/** Each step's state as the backend reports it. */
export class StepBoard {
  states = $state<Record<ConnectStep, StepState>>(allPending())

  reset(): void {
    this.states = allPending()
  }

  apply(event: StepEvent): void {
    // A new attempt (a retry while the machine boots, or the next hop) starts over at TCP.
    if (event.step === 'tcp' && event.status === 'started') this.reset()
    this.states[event.step] = event.status === 'started' ? 'running' : event.status
  }

  /** The test ended in an error without naming a step: blame the one under way. */
  failRunning(): void {
    for (const step of STEPS) if (this.states[step] === 'running') this.states[step] = 'failed'
  }

  get failed(): ConnectStep | null {
    return STEPS.find((step) => this.states[step] === 'failed') ?? null
  }
}

export type AuthMethod = 'key' | 'agent' | 'password' | 'generate'

/** The key list's entry for a path typed by hand. */
export const CUSTOM_KEY = '__custom__'

/** What the user filled in. */
export interface LoginForm {
  sshCommand: string
  method: AuthMethod
  /** The chosen key file (method `key`). */
  keyPath: string
  /** The key Leasehold generated (method `generate`). */
  generatedKeyPath: string | null
  /** Whether the chosen key needs a passphrase. */
  keyEncrypted: boolean
  /** Password or passphrase. */
  secret: string
}

/** Field → error code, for what must be filled in before testing. */
export function missingFields(form: LoginForm): Record<string, ErrorCode> {
  const missing: Record<string, ErrorCode> = {}
  if (form.sshCommand.trim() === '') missing.sshCommand = 'connect.required'
  if (form.method === 'key' && form.keyPath.trim() === '') missing.keyPath = 'connect.required'
  if (form.method === 'generate' && !form.generatedKeyPath) missing.generatedKeyPath = 'connect.required'
  if (form.method === 'password' && form.secret === '') missing.secret = 'connect.required'
  return missing
}

/** The plan for the backend; a secret goes only with a password or an encrypted key. */
export function planFrom(form: LoginForm, trustedFingerprint: string | null, keepTrying = false): ConnectPlan {
  const auth: ConnectPlan['auth'] =
    form.method === 'agent'
      ? { method: 'agent' }
      : form.method === 'password'
        ? { method: 'password' }
        : { method: 'key', path: (form.method === 'generate' ? form.generatedKeyPath ?? '' : form.keyPath).trim() }
  const wantsSecret = form.method === 'password' || (form.method === 'key' && form.keyEncrypted)
  return {
    ssh_command: form.sshCommand.trim(),
    auth,
    secret: wantsSecret && form.secret !== '' ? form.secret : null,
    trusted_fingerprint: trustedFingerprint,
    keep_trying: keepTrying,
  }
}

export type Phase = 'idle' | 'testing' | 'trust' | 'changed' | 'failed' | 'connected'

type Tester = (plan: ConnectPlan, onStep: (event: StepEvent) => void) => Promise<TestReport>

export type NeedsTrust = Extract<ConnectionCheck, { outcome: 'needs_trust' }>
export type KeyChanged = Extract<ConnectionCheck, { outcome: 'host_key_changed' }>
export type Connected = Extract<ConnectionCheck, { outcome: 'connected' }>

/** One run of "Test the connection" and what the wizard shows after it. */
export class ConnectFlow {
  readonly board = new StepBoard()
  phase = $state<Phase>('idle')
  check = $state<ConnectionCheck | null>(null)
  error = $state<ApiError | null>(null)
  saved = $state<SaveReport | null>(null)
  /** The step a failure happened at, kept after the board is reset. */
  failedStep = $state<ConnectStep | null>(null)
  #test: Tester
  #form: LoginForm | null = null
  #keepTrying = false

  constructor(test: Tester) {
    this.#test = test
  }

  get needsTrust(): NeedsTrust | null {
    return this.check?.outcome === 'needs_trust' ? this.check : null
  }

  get changed(): KeyChanged | null {
    return this.check?.outcome === 'host_key_changed' ? this.check : null
  }

  get connected(): Connected | null {
    return this.check?.outcome === 'connected' ? this.check : null
  }

  /**
   * Test with what the user filled in; no host is trusted without asking. `keepTrying` retries
   * for a while when the machine refuses, as one just powered on does until sshd listens.
   */
  run(form: LoginForm, keepTrying = false): Promise<void> {
    this.#form = { ...form }
    this.#keepTrying = keepTrying
    return this.#attempt(null)
  }

  /** The user compared and confirmed the fingerprint: test again trusting exactly that key. */
  trust(): Promise<void> {
    const question = this.needsTrust
    if (!question || !this.#form) return Promise.resolve()
    return this.#attempt(question.fingerprint)
  }

  /** The user did not confirm: nothing is trusted, nothing saved. */
  reject(): void {
    this.phase = 'idle'
    this.check = null
    this.board.reset()
  }

  async #attempt(trusted: string | null): Promise<void> {
    if (!this.#form) return
    this.phase = 'testing'
    this.check = null
    this.error = null
    this.saved = null
    this.failedStep = null
    this.board.reset()
    try {
      const plan = planFrom(this.#form, trusted, this.#keepTrying)
      const report = await this.#test(plan, (event) => this.board.apply(event))
      this.check = report.check
      this.saved = report.saved
      this.phase =
        report.check.outcome === 'connected' ? 'connected' : report.check.outcome === 'needs_trust' ? 'trust' : 'changed'
      if (this.phase === 'changed') this.board.states.host_key = 'failed'
      this.failedStep = this.board.failed
    } catch (thrown) {
      this.board.failRunning()
      this.error = toApiError(thrown)
      this.failedStep = this.board.failed
      this.phase = 'failed'
    }
  }
}

/** How long typing must pause before the pasted command is read back. */
export const PREVIEW_DELAY_MS = 250

/** What the pasted command means (user, host, port, jumps), read by core as the user types. */
export class CommandPreview {
  summary = $state<DestinationSummary | null>(null)
  error = $state<ApiError | null>(null)
  #ask: (command: string) => Promise<DestinationSummary>
  #debouncer = new Debouncer(PREVIEW_DELAY_MS)

  constructor(ask: (command: string) => Promise<DestinationSummary>) {
    this.#ask = ask
  }

  /** The command changed: read it once the typing pauses; an empty field shows nothing. */
  update(command: string): void {
    const trimmed = command.trim()
    if (trimmed === '') {
      this.#debouncer.cancel()
      this.summary = null
      this.error = null
      return
    }
    this.#debouncer.schedule(async (isLatest) => {
      try {
        const summary = await this.#ask(trimmed)
        if (isLatest()) [this.summary, this.error] = [summary, null]
      } catch (thrown) {
        if (isLatest()) [this.summary, this.error] = [null, toApiError(thrown)]
      }
    })
  }

  dispose(): void {
    this.#debouncer.cancel()
  }
}

/** Failures a booting machine gives before its sshd listens: worth "keep trying". */
export function mayBeBooting(code: string): boolean {
  return code === 'ssh.refused' || code === 'ssh.handshake_failed' || code === 'ssh.disconnected'
}

/** Extra advice for a failure that depends on how the user logged in. */
export function hintKey(code: string, method: AuthMethod): string | null {
  if (code === 'ssh.auth_failed') {
    return `connect.hint.auth_failed_${method === 'generate' ? 'key' : method}`
  }
  if (mayBeBooting(code)) return 'connect.hint.not_ready'
  return null
}

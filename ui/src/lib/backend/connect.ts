// Connect, terminal and port forwards (src-tauri/src/commands/ssh.rs). Progress and terminal
// output arrive on Tauri channels created here, so components never touch IPC themselves.
import { Channel } from '@tauri-apps/api/core'
import { openUrl } from '@tauri-apps/plugin-opener'
import type { ConnectPlan } from '../bindings/ConnectPlan'
import type { DestinationSummary } from '../bindings/DestinationSummary'
import type { ForwardInfo } from '../bindings/ForwardInfo'
import type { ForwardRequest } from '../bindings/ForwardRequest'
import type { GeneratedKey } from '../bindings/GeneratedKey'
import type { LinkStatus } from '../bindings/LinkStatus'
import type { LoginChoices } from '../bindings/LoginChoices'
import type { SavedTarget } from '../bindings/SavedTarget'
import type { StepEvent } from '../bindings/StepEvent'
import type { TerminalExit } from '../bindings/TerminalExit'
import type { TestReport } from '../bindings/TestReport'
import { BackendError, call, UNEXPECTED_CODE } from './ipc'

export function connectChoices(): Promise<LoginChoices> {
  return call<LoginChoices>('connect_choices')
}

export function connectPreview(sshCommand: string): Promise<DestinationSummary> {
  return call<DestinationSummary>('connect_preview', { sshCommand })
}

export function generateKey(): Promise<GeneratedKey> {
  return call<GeneratedKey>('connect_generate_key')
}

/** Test (and on success save) the connection; `onStep` hears each step as it happens. */
export function connectTest(instance: string, plan: ConnectPlan, onStep: (event: StepEvent) => void): Promise<TestReport> {
  return call<TestReport>('connect_test', { instance, plan, onStep: new Channel<StepEvent>(onStep) })
}

export function savedTarget(instance: string): Promise<SavedTarget | null> {
  return call<SavedTarget | null>('connect_saved_target', { instance })
}

export function linkStatus(instance: string): Promise<LinkStatus> {
  return call<LinkStatus>('connect_status', { instance })
}

export function disconnect(instance: string): Promise<void> {
  return call<void>('connect_disconnect', { instance })
}

export interface TerminalHandlers {
  /** Raw terminal bytes, escape sequences included. */
  output(bytes: Uint8Array): void
  exited(exit: TerminalExit): void
}

/** Open a login shell; returns its id for writes, resizes and close. */
export function terminalOpen(instance: string, cols: number, rows: number, handlers: TerminalHandlers): Promise<number> {
  const onOutput = new Channel<ArrayBuffer | TerminalExit>((message) => {
    if (message instanceof ArrayBuffer) handlers.output(new Uint8Array(message))
    else handlers.exited(message)
  })
  return call<number>('terminal_open', { instance, cols, rows, onOutput })
}

export function terminalWrite(id: number, data: string): Promise<void> {
  return call<void>('terminal_write', { id, data })
}

export function terminalResize(id: number, cols: number, rows: number): Promise<void> {
  return call<void>('terminal_resize', { id, cols, rows })
}

export function terminalClose(id: number): Promise<void> {
  return call<void>('terminal_close', { id })
}

export function forwardOpen(instance: string, request: ForwardRequest): Promise<ForwardInfo> {
  return call<ForwardInfo>('forward_open', { instance, request })
}

export function forwardList(instance: string): Promise<ForwardInfo[]> {
  return call<ForwardInfo[]>('forward_list', { instance })
}

export function forwardClose(instance: string, id: number): Promise<void> {
  return call<void>('forward_close', { instance, id })
}

/** Open a forwarded service (http://127.0.0.1:PORT/) in the system browser. */
export async function openInBrowser(url: string): Promise<void> {
  try {
    await openUrl(url)
  } catch (thrown) {
    throw new BackendError({ code: UNEXPECTED_CODE, message: String(thrown) })
  }
}

/** A failure only fixed by connecting again (new port or password, no target yet, changed key). */
export function needsConnect(code: string): boolean {
  return code === 'connect.no_target' || (code.startsWith('ssh.') && !['ssh.command_timeout', 'ssh.channel'].includes(code))
}

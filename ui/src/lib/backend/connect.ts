// Connect, terminal and port forwards (src-tauri/src/commands/ssh.rs): what is more than one
// generated call. The calls themselves are in ../bindings/calls.ts.
import { openUrl } from '@tauri-apps/plugin-opener'
import type { TerminalExit } from '../bindings/TerminalExit'
import { terminalOpen } from '../bindings/calls'
import { BackendError, UNEXPECTED_CODE } from './ipc'

export interface TerminalHandlers {
  /** Raw terminal bytes, escape sequences included. */
  output(bytes: Uint8Array): void
  exited(exit: TerminalExit): void
}

/**
 * Open a login shell; returns its id for writes, resizes and close. Kept by hand: one channel
 * carries both raw bytes and then the JSON exit, told apart here.
 */
export function openTerminal(instance: string, cols: number, rows: number, handlers: TerminalHandlers): Promise<number> {
  return terminalOpen({
    instance,
    cols,
    rows,
    onOutput: (message) => {
      if (message instanceof ArrayBuffer) handlers.output(new Uint8Array(message))
      else handlers.exited(message)
    },
  })
}

/** Open a forwarded service (http://127.0.0.1:PORT/) in the system browser (a plugin, not a command). */
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

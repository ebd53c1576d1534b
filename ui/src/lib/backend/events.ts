// The events the Rust side sends to the window (`emit`), not commands: the scheduler's board,
// jobs that ended, the tray's requests and a found update. Kept by hand: an event's name and
// payload are not in a command's signature, so calls.ts cannot carry them.
import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import type { Board } from '../bindings/Board'
import type { JobRecord } from '../bindings/JobRecord'

/** Every tick of the scheduler sends the popup's list (src-tauri/src/reminders.rs). */
export function onRemindBoard(handler: (board: Board) => void): Promise<UnlistenFn> {
  return listen<Board>('reminders', (event) => handler(event.payload))
}

/** A running job the app saw end in the background (src-tauri/src/jobs_watch.rs), followed or not. */
export function onJobEnded(handler: (job: JobRecord) => void): Promise<UnlistenFn> {
  return listen<JobRecord>('job-ended', (event) => handler(event.payload))
}

/** The tray's menu asked to show an instance. */
export function onOpenInstance(handler: (name: string) => void): Promise<UnlistenFn> {
  return listen<string>('open-instance', (event) => handler(event.payload))
}

/** The tray's Quit while instances bill: the window asks first. */
export function onQuitRequested(handler: (billing: number) => void): Promise<UnlistenFn> {
  return listen<{ billing: number }>('quit-requested', (event) => handler(event.payload.billing))
}

/** A background update check found a version to offer (src-tauri/src/updates.rs). */
export function onUpdateAvailable(handler: (version: string) => void): Promise<UnlistenFn> {
  return listen<string>('update-available', (event) => handler(event.payload))
}

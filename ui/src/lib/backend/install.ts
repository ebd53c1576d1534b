// Install and jobs (src-tauri/src/commands/install.rs): recipes run as detached jobs on the
// instance; their log streams on a channel with the progress read from it.
import { Channel } from '@tauri-apps/api/core'
import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import type { CancelReport } from '../bindings/CancelReport'
import type { JobLog } from '../bindings/JobLog'
import type { JobRecord } from '../bindings/JobRecord'
import type { JobStatus } from '../bindings/JobStatus'
import type { Lang } from '../bindings/Lang'
import type { RecipeInfo } from '../bindings/RecipeInfo'
import type { RecipeStatuses } from '../bindings/RecipeStatuses'
import type { ServeCheck } from '../bindings/ServeCheck'
import { call } from './ipc'

/** Every recipe with its options and their defaults. */
export function installRecipes(): Promise<RecipeInfo[]> {
  return call<RecipeInfo[]>('install_recipes')
}

/** Start `recipe` on `instance`; resolves as soon as the job runs. */
export function installStart(instance: string, recipe: string, options: Record<string, string>): Promise<JobStatus> {
  return call<JobStatus>('install_start', { instance, recipe, options })
}

/** The jobs of `instance`, oldest first. */
export function jobList(instance: string): Promise<JobRecord[]> {
  return call<JobRecord[]>('job_list', { instance })
}

/** Follow job `id`'s log from byte `from` until it ends (reconnecting by itself after a drop). */
export function jobAttach(instance: string, id: string, from: number, onLog: (log: JobLog) => void): Promise<JobStatus> {
  return call<JobStatus>('job_attach', { instance, id, from, onLog: new Channel<JobLog>(onLog) })
}

/** Stop job `id`'s whole process group. */
export function jobCancel(instance: string, id: string): Promise<CancelReport> {
  return call<CancelReport>('job_cancel', { instance, id })
}

/** Each recipe's state on `instance` from its last Verify run. */
export function installStatus(instance: string): Promise<RecipeStatuses> {
  return call<RecipeStatuses>('install_status', { instance })
}

/** The jobs of `instance`, the running ones' states read again from the instance. */
export function jobRefresh(instance: string): Promise<JobRecord[]> {
  return call<JobRecord[]>('job_refresh', { instance })
}

/** Check the model server job `id` left running, through a port forward. */
export function installCheckServer(instance: string, id: string, lang: Lang): Promise<ServeCheck> {
  return call<ServeCheck>('install_check_server', { instance, id, lang })
}

/** A running job the app saw end in the background (src-tauri/src/jobs_watch.rs), followed or not. */
export function onJobEnded(handler: (job: JobRecord) => void): Promise<UnlistenFn> {
  return listen<JobRecord>('job-ended', (event) => handler(event.payload))
}

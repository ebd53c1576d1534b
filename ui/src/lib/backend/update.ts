// Self-update (src-tauri/src/commands/update.rs): About, the checks, skip, and the install with
// its progress on a channel. The `update-available` event says a background check found one.
import { Channel } from '@tauri-apps/api/core'
import { listen, type UnlistenFn } from '@tauri-apps/api/event'
import type { BuildInfo } from '../bindings/BuildInfo'
import type { UpdateOffer } from '../bindings/UpdateOffer'
import type { UpdateProgress } from '../bindings/UpdateProgress'
import { call } from './ipc'

export function updateAbout(): Promise<BuildInfo> {
  return call<BuildInfo>('update_about')
}

/** What the last background check found, notes in `language`; null when nothing to offer. */
export function updatePending(language: string): Promise<UpdateOffer | null> {
  return call<UpdateOffer | null>('update_pending', { language })
}

/** Ask the update servers now (a skipped version is offered again); null when up to date. */
export function updateCheckNow(language: string): Promise<UpdateOffer | null> {
  return call<UpdateOffer | null>('update_check_now', { language })
}

export function updateSkip(version: string): Promise<void> {
  return call<void>('update_skip', { version })
}

/** Wait for running work, download, check the signature, install and restart. */
export function updateInstall(onProgress: (progress: UpdateProgress) => void): Promise<void> {
  return call<void>('update_install', { progress: new Channel<UpdateProgress>(onProgress) })
}

export function onUpdateAvailable(handler: (version: string) => void): Promise<UnlistenFn> {
  return listen<string>('update-available', (event) => handler(event.payload))
}

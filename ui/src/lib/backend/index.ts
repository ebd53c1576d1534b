// The only module that talks to the Rust side; components import from here, never `invoke`.
import { invoke } from '@tauri-apps/api/core'

export interface AppInfo {
  version: string
  data_dir: string
}

export function appInfo(): Promise<AppInfo> {
  return invoke<AppInfo>('app_info')
}

// Back up and Release (src-tauri/src/commands/backup.rs): the at-risk scan, downloads with
// progress on a channel, pushes and copies, the release checklist, the release and its bill.
import { Channel } from '@tauri-apps/api/core'
import type { AtRiskReport } from '../bindings/AtRiskReport'
import type { BackupProgress } from '../bindings/BackupProgress'
import type { BackupRecord } from '../bindings/BackupRecord'
import type { BackupStatus } from '../bindings/BackupStatus'
import type { CheckOutcome } from '../bindings/CheckOutcome'
import type { FinalBill } from '../bindings/FinalBill'
import { call } from './ipc'

/** What on `instance` would be lost; `roots` empty means the defaults. */
export function backupScan(instance: string, roots: string[]): Promise<AtRiskReport> {
  return call<AtRiskReport>('backup_scan', { instance, roots })
}

/** Copy `paths` into `localDir` (and the environment export when asked), reporting progress. */
export function backupRun(
  instance: string,
  paths: string[],
  localDir: string,
  exportEnvironment: boolean,
  onProgress: (progress: BackupProgress) => void,
): Promise<BackupRecord[]> {
  return call<BackupRecord[]>('backup_run', {
    instance,
    paths,
    localDir,
    exportEnvironment,
    onProgress: new Channel<BackupProgress>(onProgress),
  })
}

/** Stop the running backup of `instance`; what arrived stays and a new run resumes. */
export function backupCancel(instance: string): Promise<void> {
  return call<void>('backup_cancel', { instance })
}

export function backupGitPush(instance: string, repo: string): Promise<BackupRecord> {
  return call<BackupRecord>('backup_git_push', { instance, repo })
}

export function backupToFileStorage(instance: string, path: string): Promise<BackupRecord> {
  return call<BackupRecord>('backup_to_file_storage', { instance, path })
}

export function backupHistory(instance: string): Promise<BackupRecord[]> {
  return call<BackupRecord[]>('backup_history', { instance })
}

export function backupStatus(instance: string): Promise<BackupStatus> {
  return call<BackupStatus>('backup_status', { instance })
}

/** Run the release checklist live and record it. */
export function releaseCheck(instance: string): Promise<CheckOutcome> {
  return call<CheckOutcome>('release_check', { instance })
}

/** Record the release; refused while a blocked check has no override or `confirm` is not the name. */
export function releaseInstance(
  instance: string,
  confirm: string,
  overrides: [string, string][],
  noCheck: string | null,
): Promise<FinalBill> {
  return call<FinalBill>('release_instance', { instance, confirm, overrides, noCheck })
}

export function releaseBill(instance: string): Promise<FinalBill> {
  return call<FinalBill>('release_bill', { instance })
}

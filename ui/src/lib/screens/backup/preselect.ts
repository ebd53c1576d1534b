// What the Backup screen ticks before the user does: the work that exists only on the instance.
// Repositories with commits no remote has or with uncommitted files, the folders that GPU
// processes are writing in, and checkpoint folders written since the last backup (every one when
// there was none). Single weight files are left for the user: those are usually downloaded base
// models, tens of gigabytes that can be fetched again.
import type { AtRiskReport } from '../../bindings/AtRiskReport'

export function atRiskPaths(report: AtRiskReport, lastBackupAt: string | null): string[] {
  const since = lastBackupAt ? Date.parse(lastBackupAt) : null
  const paths = [
    ...report.repos.filter((repo) => repo.unpushed_commits > 0 || repo.uncommitted_files > 0).map((repo) => repo.path),
    ...report.gpu_processes.map((process) => process.cwd).filter((cwd): cwd is string => cwd !== null),
    ...report.weights
      .filter((weight) => weight.folder && (since === null || weight.modified === null || Date.parse(weight.modified) > since))
      .map((weight) => weight.path),
  ]
  return [...new Set(paths)]
}

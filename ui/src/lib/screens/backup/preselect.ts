// What the Backup screen ticks before the user does: the work that exists only on the instance.
// Repositories with commits no remote has or with uncommitted files, the folders that GPU
// processes are writing in, and weights written since the last backup (every one when there was
// none): checkpoint folders, and single weight files outside the places downloads land (a model
// cache, a `models` or `pretrained` folder), since those can be fetched again while a trained
// `output/model.safetensors` cannot.
import type { AtRiskReport } from '../../bindings/AtRiskReport'

const DOWNLOAD_FOLDER = /(^|\/)(\.cache|hf-cache|huggingface|modelscope|ollama|models|pretrained|base_models?)(\/|$)/i

/** Whether a single weight file sits where downloaded models go. */
export function looksDownloaded(path: string): boolean {
  return DOWNLOAD_FOLDER.test(path.slice(0, path.lastIndexOf('/') + 1))
}

export function atRiskPaths(report: AtRiskReport, lastBackupAt: string | null): string[] {
  const since = lastBackupAt ? Date.parse(lastBackupAt) : null
  const paths = [
    ...report.repos.filter((repo) => repo.unpushed_commits > 0 || repo.uncommitted_files > 0).map((repo) => repo.path),
    ...report.gpu_processes.map((process) => process.cwd).filter((cwd): cwd is string => cwd !== null),
    ...report.weights
      .filter((weight) => weight.folder || !looksDownloaded(weight.path))
      .filter((weight) => since === null || weight.modified === null || Date.parse(weight.modified) > since)
      .map((weight) => weight.path),
  ]
  return [...new Set(paths)]
}

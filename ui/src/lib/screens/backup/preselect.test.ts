import { describe, expect, it } from 'vitest'
import type { AtRiskReport } from '../../bindings/AtRiskReport'
import { atRiskPaths } from './preselect'

const report: AtRiskReport = {
  home: '/root',
  roots: ['/root'],
  repos: [
    { path: '/root/train', branch: 'main', has_remote: true, unpushed_commits: 2, uncommitted_files: 0, untracked_files: 0, stashes: 0, disk: 'system' },
    { path: '/root/clean', branch: 'main', has_remote: true, unpushed_commits: 0, uncommitted_files: 0, untracked_files: 0, stashes: 0, disk: 'system' },
    { path: '/root/notes', branch: null, has_remote: false, unpushed_commits: 0, uncommitted_files: 3, untracked_files: 3, stashes: 0, disk: 'data_disk' },
  ],
  weights: [
    { path: '/root/train/checkpoint-500', bytes: 1e9, folder: true, modified: '2026-12-03T10:00:00Z', disk: 'data_disk' },
    { path: '/root/train/checkpoint-100', bytes: 1e9, folder: true, modified: '2026-12-01T10:00:00Z', disk: 'data_disk' },
    { path: '/root/models/qwen.safetensors', bytes: 15e9, folder: false, modified: '2026-12-03T11:00:00Z', disk: 'data_disk' },
    { path: '/root/.cache/huggingface/hub/llama/model.safetensors', bytes: 5e9, folder: false, modified: '2026-12-03T11:00:00Z', disk: 'system' },
    { path: '/root/train/output/model.safetensors', bytes: 2e9, folder: false, modified: '2026-12-03T12:00:00Z', disk: 'data_disk' },
    { path: '/root/train/output/old.safetensors', bytes: 2e9, folder: false, modified: '2026-12-01T12:00:00Z', disk: 'data_disk' },
  ],
  changed_since_last_backup: null,
  environments: [],
  gpu_processes: [{ pid: 42, name: 'python', used_memory_mib: 20000, cwd: '/root/train' }],
  disks: [],
  notes: [],
  complete: true,
}

describe('atRiskPaths', () => {
  it('ticks repositories with unpushed or uncommitted work, once each, and new checkpoints', () => {
    expect(atRiskPaths(report, '2026-12-02T00:00:00Z')).toEqual([
      '/root/train',
      '/root/notes',
      '/root/train/checkpoint-500',
      '/root/train/output/model.safetensors',
    ])
  })

  it('ticks every checkpoint and trained weight when there was never a backup, but never a downloaded one', () => {
    const paths = atRiskPaths(report, null)
    expect(paths).toContain('/root/train/checkpoint-100')
    expect(paths).toContain('/root/train/output/old.safetensors')
    expect(paths).not.toContain('/root/models/qwen.safetensors')
    expect(paths).not.toContain('/root/.cache/huggingface/hub/llama/model.safetensors')
  })
})

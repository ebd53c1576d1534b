import { cleanup, render, screen } from '@testing-library/svelte'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { LocalGpuReport } from '../../bindings/LocalGpuReport'
import { setupI18n } from '../../i18n'
import LocalGpuNote from './LocalGpuNote.svelte'

const laptop: LocalGpuReport = {
  available: true,
  reason: null,
  reason_text: null,
  driver_version: '550.54.14',
  gpus: [{ index: 0, name: 'NVIDIA GeForce RTX 4070 Laptop GPU', memory_total_mib: 12282, compute_capability: '8.9', catalog_id: null }],
  fit: null,
}

function fit(fits: boolean): LocalGpuReport {
  return {
    ...laptop,
    fit: {
      gpu: 'NVIDIA GeForce RTX 4070 Laptop GPU',
      need_gib: fits ? 6.1 : 21.1,
      have_gib: 12,
      fits,
      message: fits
        ? { en: "This computer's RTX 4070 (12 GiB) can run it; renting is optional.", zh: '本机的 RTX 4070（12 GiB）就能运行，不一定要租卡。' }
        : { en: "This computer's RTX 4070 has 12 GiB; the task needs ≈ 21.1 GiB.", zh: '本机的 RTX 4070 只有 12 GiB，任务约需 21.1 GiB。' },
    },
  }
}

describe("this computer's GPU", () => {
  beforeAll(() => setupI18n('en'))
  afterEach(cleanup)

  it('says calmly that renting is optional when the task fits the local GPU', () => {
    render(LocalGpuNote, { report: fit(true), language: 'en' })
    const note = screen.getByTestId('choose-local')
    expect(note.dataset.state).toBe('fits')
    expect(note.textContent).toContain('renting is optional')
    expect(screen.queryByRole('alert'), 'good news is not an alert').toBeNull()
  })

  it("says how far the local GPU falls short, in the user's language", () => {
    render(LocalGpuNote, { report: fit(false), language: 'zh-CN' })
    const note = screen.getByTestId('choose-local')
    expect(note.dataset.state).toBe('small')
    expect(note.textContent).toContain('任务约需 21.1 GiB')
  })

  it('turns a missing NVIDIA driver into a quiet note, never an error', () => {
    const none: LocalGpuReport = {
      available: false,
      reason: 'No local NVIDIA GPU: no NVIDIA driver (NVML) on this computer.',
      reason_text: { en: 'No local NVIDIA GPU: no NVIDIA driver (NVML) on this computer.', zh: '本机没有 NVIDIA GPU。' },
      driver_version: null,
      gpus: [],
      fit: null,
    }
    render(LocalGpuNote, { report: none, language: 'en' })
    expect(screen.getByTestId('choose-local').dataset.state).toBe('none')
    expect(screen.queryByRole('alert')).toBeNull()
  })

  it('shows nothing before the first answer', () => {
    const { container } = render(LocalGpuNote, { report: null, language: 'en' })
    expect(container.textContent?.trim()).toBe('')
  })
})

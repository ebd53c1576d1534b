import { describe, expect, it } from 'vitest'
import type { Candidate } from '../../bindings/Candidate'
import { codeSpans, formatCardGib, formatGib, groupCandidates, pick, shortGpuName, tagsFor } from './format'

describe('formatting on the Choose GPU screen', () => {
  it('writes GiB with one decimal, two below 1 GiB so small parts do not round to zero', () => {
    expect(formatGib(21.1, 'en')).toBe('21.1 GiB')
    expect(formatGib(0.15, 'en')).toBe('0.15 GiB')
    expect(formatCardGib(24, 'en')).toBe('24 GiB')
    expect(formatCardGib(22.5, 'zh-CN')).toBe('22.5 GiB')
  })

  it('shortens catalog names to what renters say', () => {
    expect(shortGpuName('NVIDIA GeForce RTX 4090')).toBe('RTX 4090')
    expect(shortGpuName('Tesla T4')).toBe('T4')
    expect(shortGpuName('NVIDIA H100 80GB HBM3')).toBe('H100 80GB HBM3')
  })

  it("picks core's text in the interface language", () => {
    expect(pick({ en: 'fits', zh: '放得下' }, 'zh-CN')).toBe('放得下')
    expect(pick({ en: 'fits', zh: '放得下' }, 'en')).toBe('fits')
  })

  it("groups core's ranking into one card, several cards and too small, keeping its order", () => {
    const c = (gpu_id: string, count: number, fits: boolean) => ({ gpu_id, count, fits }) as Candidate
    const groups = groupCandidates([c('l4', 1, true), c('t4', 2, true), c('rtx-4090', 1, true), c('t4', 1, false)])
    expect(groups.single.map((x) => x.gpu_id)).toEqual(['l4', 'rtx-4090'])
    expect(groups.multi.map((x) => x.gpu_id)).toEqual(['t4'])
    expect(groups.tooSmall.map((x) => x.count)).toEqual([1])
  })

  it('tags the warnings that matter on the row itself', () => {
    const note = (code: string) => ({ code, text: { en: '', zh: '' } })
    const candidate = {
      notes: [note('recommend.cpu_ram'), note('recommend.blackwell_wheels'), note('recommend.pcie_multi_gpu')],
    } as Candidate
    expect(tagsFor(candidate)).toEqual(['blackwell', 'pcie'])
  })
})

describe('codeSpans', () => {
  it('sets the commands core writes in backticks apart from the prose', () => {
    expect(codeSpans('watch `nvidia-smi` during the first minutes')).toEqual([
      { code: false, text: 'watch ' },
      { code: true, text: 'nvidia-smi' },
      { code: false, text: ' during the first minutes' },
    ])
    expect(codeSpans('no commands here')).toEqual([{ code: false, text: 'no commands here' }])
  })
})

import { describe, expect, it } from 'vitest'
import { isProtocolLine, LogBuffer } from './logBuffer'

describe('LogBuffer', () => {
  it('keeps 100 000 lines but shows only the last view of them', () => {
    const log = new LogBuffer(2000)
    // Pieces cut in the middle of lines, as the channel delivers them.
    let text = ''
    for (let i = 0; i < 100_000; i += 1) text += `line ${i}\n`
    for (let at = 0; at < text.length; at += 4093) log.append(text.slice(at, at + 4093))
    expect(log.total).toBe(100_000)
    const shown = log.shown()
    expect(shown).toHaveLength(2000)
    expect(shown[0]).toBe('line 98000')
    expect(shown[1999]).toBe('line 99999')
  })

  it('shows the line being written and completes it with the next piece', () => {
    const log = new LogBuffer(3)
    log.append('a\r\nb\nhalf')
    expect(log.shown()).toEqual(['a', 'b', 'half'])
    log.append(' done\n')
    expect(log.shown()).toEqual(['a', 'b', 'half done'])
    expect(log.tail(2)).toBe('b\nhalf done')
    log.clear()
    expect(log.total).toBe(0)
    expect(log.shown()).toEqual([])
  })
})

describe('LogBuffer and the recipes’ markers', () => {
  it('keeps ::leasehold:: protocol lines out of the view but hands them to Explain', () => {
    const log = new LogBuffer(10)
    log.append('::leasehold::step 1/2 Miniconda\nDownloading…\n::leasehold::fail torch.cpu_build no CUDA\nTraceback\n::leasehold::ok')
    expect(log.shown()).toEqual(['Downloading…', 'Traceback'])
    expect(log.tail(10)).toContain('::leasehold::fail torch.cpu_build')
    expect(isProtocolLine('  ::leasehold::step')).toBe(false)
  })
})

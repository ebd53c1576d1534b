import { describe, expect, it } from 'vitest'
import { isProtocolLine, LogBuffer, MAX_LINE } from './logBuffer'

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

  it('takes a bare carriage return as a redraw, so 4 MB of progress bars stay one line', () => {
    const log = new LogBuffer(10)
    log.append('pulling manifest\n')
    let bars = ''
    for (let i = 0; bars.length < 4 * 1024 * 1024; i += 1) bars += `pulling 2bada8a74506: ${i % 100}% ▕████▏ 470 MB/4.7 GB\r`
    for (let at = 0; at < bars.length; at += 4093) log.append(bars.slice(at, at + 4093))
    log.append('pulling 2bada8a74506: 100% ▕████████▏ 4.7 GB/4.7 GB\nsuccess\n')
    expect(log.shown()).toEqual(['pulling manifest', 'pulling 2bada8a74506: 100% ▕████████▏ 4.7 GB/4.7 GB', 'success'])
    expect(log.total).toBe(3)
  })

  it('joins a CR LF cut between two pieces into one line end', () => {
    const log = new LogBuffer(5)
    log.append('first\r')
    log.append('\nsecond\r')
    log.append('redrawn\n')
    expect(log.shown()).toEqual(['first', 'redrawn'])
  })

  it('holds a bounded number of lines and passes a line that never ends on in pieces', () => {
    const log = new LogBuffer(10, 100)
    for (let i = 0; i < 10_000; i += 1) log.append(`line ${i}\n`)
    expect(log.total).toBe(10_000)
    expect(log.held).toBeLessThanOrEqual(200)
    expect(log.shown().at(-1)).toBe('line 9999')
    const endless = 'x'.repeat(4093)
    for (let i = 0; i < 1000; i += 1) log.append(endless)
    expect(log.shown().every((line) => line.length <= MAX_LINE)).toBe(true)
    expect(log.held).toBeLessThanOrEqual(200)
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

import { describe, expect, it } from 'vitest'
import { parsePort, presetOf } from './forwards'
import { clipboardAction } from './keys'

const key = (k: string, mods: Partial<{ ctrlKey: boolean; shiftKey: boolean; metaKey: boolean }>, type = 'keydown') => ({
  type,
  key: k,
  ctrlKey: false,
  shiftKey: false,
  metaKey: false,
  ...mods,
})

describe('clipboardAction', () => {
  it('copies and pastes on Ctrl+Shift+C/V (and Cmd+C/V), leaving plain Ctrl+C to the remote shell', () => {
    expect(clipboardAction(key('C', { ctrlKey: true, shiftKey: true }))).toBe('copy')
    expect(clipboardAction(key('V', { ctrlKey: true, shiftKey: true }))).toBe('paste')
    expect(clipboardAction(key('c', { metaKey: true }))).toBe('copy')
    expect(clipboardAction(key('c', { ctrlKey: true })), 'Ctrl+C interrupts the remote program').toBeNull()
    expect(clipboardAction(key('C', { ctrlKey: true, shiftKey: true }, 'keyup')), 'only on key down').toBeNull()
  })
})

describe('forwards', () => {
  it('names a forward by the preset its remote port belongs to', () => {
    expect(presetOf({ remote_port: 8888 })).toBe('jupyter')
    expect(presetOf({ remote_port: 11434 })).toBe('ollama')
    expect(presetOf({ remote_port: 5000 })).toBeNull()
  })

  it('accepts only ports from 1 to 65535 typed as plain digits', () => {
    expect(parsePort(' 8080 ')).toBe(8080)
    for (const bad of ['0', '65536', '80a', '-1', '', '1e3', '123456']) expect(parsePort(bad), bad).toBeNull()
  })
})

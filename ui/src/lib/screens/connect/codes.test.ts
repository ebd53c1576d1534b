// Every error code the SSH, connect and probe modules can send has a text in both languages,
// so no failure reaches the user as an untranslated English sentence. The codes are read from
// the Rust sources themselves, so a new code without a text fails here.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import en from '../../../locales/en.json'
import zhCN from '../../../locales/zh-CN.json'
import { flattenKeys } from '../../i18n'

const SOURCES = ['crates/core/src/ssh/error.rs', 'crates/core/src/connect/error.rs', 'crates/core/src/probe/mod.rs']

function codesIn(file: string): string[] {
  // vitest runs in ui/; the Rust sources are beside it.
  const text = readFileSync(path.resolve(process.cwd(), '..', file), 'utf8')
  return [...text.matchAll(/=>\s*"((?:ssh|connect|probe)\.[a-z_]+)"/g)].map((match) => match[1])
}

describe('error texts', () => {
  const codes = SOURCES.flatMap(codesIn)

  it('finds the codes in the Rust sources', () => {
    expect(codes).toContain('ssh.host_key_changed')
    expect(codes).toContain('connect.no_target')
    expect(codes.length).toBeGreaterThan(25)
  })

  it('has a text for every ssh, connect and probe code in English and Chinese', () => {
    for (const [name, tree] of Object.entries({ en, 'zh-CN': zhCN })) {
      const keys = new Set(flattenKeys(tree))
      const missing = codes.filter((code) => !keys.has(`errors.${code}`))
      expect(missing, `codes without a text in ${name}`).toEqual([])
    }
  })
})

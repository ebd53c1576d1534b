// Every error code the SSH, connect and probe modules can send has a text in both languages,
// so no failure reaches the user as an untranslated English sentence. The codes are read from
// the Rust sources themselves, so a new code without a text fails here.
import { describe, expect, it } from 'vitest'
import en from '../../../locales/en.json'
import zhCN from '../../../locales/zh-CN.json'
import { flattenKeys } from '../../i18n'

// Node's fs, loaded at run time: the app's tsconfig has no Node types and only this test reads
// files (and Vite refuses to import files outside ui/).
const fsModule = 'node:fs'
const { readFileSync } = (await import(/* @vite-ignore */ fsModule)) as {
  readFileSync(path: string, encoding: 'utf8'): string
}
const repo = decodeURIComponent(new URL(import.meta.url).pathname).replace(/\/ui\/src\/.*$/, '')

function codesIn(file: string): string[] {
  const source = readFileSync(`${repo}/${file}`, 'utf8')
  return [...source.matchAll(/=>\s*"((?:ssh|connect|probe)\.[a-z_]+)"/g)].map((match) => match[1])
}

describe('error texts', () => {
  const codes = ['crates/core/src/ssh/error.rs', 'crates/core/src/connect/error.rs', 'crates/core/src/probe/mod.rs'].flatMap(codesIn)

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

// The Chinese glossary (src/locales/glossary.md) is the rule for every Chinese text: its "never"
// column lists variants no message may use, and Chinese sentences never carry a half-width "?".
import { describe, expect, it } from 'vitest'
import glossary from '../../locales/glossary.md?raw'
import zhCN from '../../locales/zh-CN.json'
import { flattenKeys } from '.'

function lookup(tree: object, key: string): string {
  return String(key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], tree))
}

/** The "never" words of the glossary's table (third column, split at 、). */
function forbidden(): string[] {
  return glossary
    .split('\n')
    .filter((line) => line.startsWith('|') && !line.startsWith('| ---') && !line.startsWith('| English'))
    .flatMap((line) => (line.split('|')[3] ?? '').split('、'))
    .map((word) => word.trim())
    .filter(Boolean)
}

describe('the Chinese glossary', () => {
  it('has rows with forbidden variants to check', () => {
    expect(forbidden()).toContain('配方')
    expect(forbidden()).toContain('停机')
  })

  it('is followed by every Chinese message', () => {
    const words = forbidden()
    // The brand lockup under 算力租用管家 in the sidebar is the one place the English name belongs.
    const lockup = ['brand.subtitle']
    const broken = flattenKeys(zhCN).filter((key) => !lockup.includes(key)).flatMap((key) =>
      words.filter((word) => lookup(zhCN, key).includes(word)).map((word) => `${key}: ${word}`),
    )
    expect(broken).toEqual([])
  })

  it('leaves no half-width question mark in a Chinese sentence', () => {
    const broken = flattenKeys(zhCN).filter((key) => /[\u3400-\u9fff][^a-zA-Z0-9]*\?|\?[^a-zA-Z0-9=&]*[\u3400-\u9fff]/.test(lookup(zhCN, key)))
    expect(broken).toEqual([])
  })
})

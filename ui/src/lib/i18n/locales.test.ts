import { describe, expect, it } from 'vitest'
import en from '../../locales/en.json'
import zhCN from '../../locales/zh-CN.json'
import { flattenKeys, languageFromSystem } from '.'

describe('locale files', () => {
  it('have exactly the same keys in zh-CN and en, so no screen shows a raw key', () => {
    const english = new Set(flattenKeys(en))
    const chinese = new Set(flattenKeys(zhCN))
    const onlyEnglish = [...english].filter((key) => !chinese.has(key))
    const onlyChinese = [...chinese].filter((key) => !english.has(key))
    expect(onlyEnglish, 'keys missing from zh-CN.json').toEqual([])
    expect(onlyChinese, 'keys missing from en.json').toEqual([])
  })

  it('name the same placeholders in both languages, so a value shown in one is shown in the other', () => {
    const lookup = (tree: object, key: string) =>
      String(key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], tree))
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)[},]/g)].map((m) => m[1]).sort()
    const differing = flattenKeys(en).filter(
      (key) => placeholders(lookup(en, key)).join() !== placeholders(lookup(zhCN, key)).join(),
    )
    expect(differing).toEqual([])
  })

  it('have no empty message in either language', () => {
    for (const [name, tree] of Object.entries({ en, 'zh-CN': zhCN })) {
      const flat = flattenKeys(tree)
      const lookup = (key: string) =>
        key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], tree)
      const empty = flat.filter((key) => String(lookup(key)).trim() === '')
      expect(empty, `empty messages in ${name}`).toEqual([])
    }
  })
})

describe('languageFromSystem', () => {
  it('picks Chinese for every Chinese system locale', () => {
    for (const tag of ['zh', 'zh-CN', 'zh-Hans-CN', 'zh-TW', 'ZH-cn']) {
      expect(languageFromSystem(tag), tag).toBe('zh-CN')
    }
  })

  it('picks English for other or missing locales', () => {
    for (const tag of ['en-US', 'de-DE', 'ja', '', null, undefined, 'c', 'C', 'C.UTF-8', 'POSIX', 'xx-invalid-@@', 'zhx']) {
      expect(languageFromSystem(tag), String(tag)).toBe('en')
    }
  })
})

import { afterEach, describe, expect, it } from 'vitest'
import { repairNavigatorLanguage, usableLanguageTag } from './systemLanguage'

describe('the system language tag', () => {
  it('keeps every tag Intl accepts, canonicalised', () => {
    expect(usableLanguageTag('en-US')).toBe('en-US')
    expect(usableLanguageTag('zh-CN')).toBe('zh-CN')
    expect(usableLanguageTag('zh-hans-sg')).toBe('zh-Hans-SG')
    expect(usableLanguageTag('xx-YY')).toBe('xx-YY')
  })

  it('turns what is no language (C, POSIX, empty, malformed) into English', () => {
    for (const tag of ['C', 'c', 'POSIX', 'C.UTF-8', '', null, undefined, 'en_US@euro', '--']) {
      expect(usableLanguageTag(tag), String(tag)).toBe('en-US')
      // What uPlot does at load: must not throw with the repaired tag.
      expect(() => new Intl.NumberFormat(usableLanguageTag(tag))).not.toThrow()
    }
  })

  describe('on the page', () => {
    afterEach(() => {
      delete (navigator as unknown as Record<string, unknown>).language
      delete (navigator as unknown as Record<string, unknown>).languages
    })

    it('repairs navigator.language and languages before any library reads them', () => {
      Object.defineProperty(navigator, 'language', { get: () => 'C', configurable: true })
      Object.defineProperty(navigator, 'languages', { get: () => ['C'], configurable: true })
      repairNavigatorLanguage()
      expect(navigator.language).toBe('en-US')
      expect(navigator.languages).toEqual(['en-US'])
    })

    it('leaves a usable language alone', () => {
      Object.defineProperty(navigator, 'language', { get: () => 'zh-CN', configurable: true })
      Object.defineProperty(navigator, 'languages', { get: () => ['zh-CN', 'en'], configurable: true })
      repairNavigatorLanguage()
      expect(navigator.language).toBe('zh-CN')
      expect(navigator.languages).toEqual(['zh-CN', 'en'])
    })
  })
})

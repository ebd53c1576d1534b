// Localisation: svelte-i18n with ICU messages (plurals, numbers) from src/locales/*.json.
// Both bundles are small, so they are registered synchronously: no flash of untranslated keys.
import { addMessages, init, locale } from 'svelte-i18n'
import en from '../../locales/en.json'
import zhCN from '../../locales/zh-CN.json'

export const LANGUAGES = ['zh-CN', 'en'] as const
export type Language = (typeof LANGUAGES)[number]

export const MESSAGES: Record<Language, Record<string, unknown>> = { en, 'zh-CN': zhCN }

/**
 * Any Chinese system locale (zh, zh-CN, zh_CN.UTF-8, zh-Hans-SG, zh-TW …) gets Chinese; everything
 * else English — including what is no language at all (`C`, `POSIX`, empty, malformed), which
 * minimal Debian and Ubuntu installs, containers and WSL report.
 */
export function languageFromSystem(tag: string | null | undefined): Language {
  const primary = (tag ?? '').trim().split(/[-_.@]/)[0].toLowerCase()
  return primary === 'zh' ? 'zh-CN' : 'en'
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value)
}

let registered = false

export function setupI18n(initial: Language): void {
  if (!registered) {
    for (const language of LANGUAGES) addMessages(language, MESSAGES[language] as never)
    registered = true
  }
  init({ fallbackLocale: 'en', initialLocale: initial })
  document.documentElement.lang = initial
}

export function switchLanguage(language: Language): void {
  locale.set(language)
  document.documentElement.lang = language
}

/** Nested keys as svelte-i18n sees them: `{"a": {"b": "x"}}` → `a.b`. */
export function flattenKeys(tree: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([key, value]) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? flattenKeys(value as Record<string, unknown>, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  )
}

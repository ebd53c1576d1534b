// Localisation: svelte-i18n with ICU messages (plurals, numbers) from src/locales/*.json.
// Only the language on screen is loaded: each table is ~130 kB of script the page would otherwise
// parse and hold for the whole run. The other one is fetched when the user switches, and the
// switch waits for it, so an untranslated key never shows.
import { init, locale, register, waitLocale } from 'svelte-i18n'

export const LANGUAGES = ['zh-CN', 'en'] as const
export type Language = (typeof LANGUAGES)[number]

const TABLES: Record<Language, () => Promise<unknown>> = {
  en: () => import('../../locales/en.json'),
  'zh-CN': () => import('../../locales/zh-CN.json'),
}

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

/** Loads `initial`'s table and shows it; resolves once its texts can be drawn. */
export async function setupI18n(initial: Language): Promise<void> {
  if (!registered) {
    for (const language of LANGUAGES) register(language, TABLES[language] as never)
    registered = true
  }
  // The fallback is the language shown: naming the other one would load its table too, and
  // locales.test.ts keeps both tables complete, so there is nothing to fall back for.
  init({ fallbackLocale: initial, initialLocale: initial })
  await waitLocale(initial)
  document.documentElement.lang = initial
}

/** Loads `language`'s table if it is not yet, then redraws every text in it. */
export async function switchLanguage(language: Language): Promise<void> {
  await locale.set(language)
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

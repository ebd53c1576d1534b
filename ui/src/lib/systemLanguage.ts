// The system's language as the page sees it, made usable. WebKitGTK takes navigator.language from
// the process locale, and under `C.UTF-8` or `POSIX` (minimal Debian and Ubuntu, containers, WSL)
// that is "C": not a language tag, so `new Intl.NumberFormat(navigator.language)` throws. uPlot
// does exactly that while its module loads, which left the window blank. Fixing the tag once,
// before any module reads it, keeps every library working; the app itself only ever looks at it
// through `languageFromSystem`.

/** `tag` when Intl accepts it as a language tag, else "en-US" (English text and formats). */
export function usableLanguageTag(tag: string | null | undefined): string {
  // POSIX is the C locale's other name; as a tag it would pass for a language nobody speaks.
  if (!tag || /^(c|posix)([._@-]|$)/i.test(tag)) return 'en-US'
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? 'en-US'
  } catch {
    return 'en-US'
  }
}

/** Make `navigator.language` and `navigator.languages` usable tags for every later reader. */
export function repairNavigatorLanguage(): void {
  const language = usableLanguageTag(navigator.language)
  const languages = (navigator.languages ?? []).map(usableLanguageTag)
  if (language === navigator.language && languages.every((tag, i) => tag === navigator.languages[i])) return
  Object.defineProperty(navigator, 'language', { get: () => language, configurable: true })
  Object.defineProperty(navigator, 'languages', {
    get: () => (languages.length > 0 ? [...new Set(languages)] : [language]),
    configurable: true,
  })
}

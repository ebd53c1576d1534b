// Every screen in both languages, as a new user sees it: a rental connected to a real sshd whose
// fake nvidia-smi replays a healthy RTX 4090, Verify run once, then each screen opened in English
// and in Chinese, its visible text scanned (lib/visible-text.mjs: no ids, protocol lines,
// placeholders, English left in Chinese) and screenshotted; then the main screens again in dark
// mode. One list of everything that reads badly, so a failure names each screen and snippet.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { connectWithKey, finishFirstRun, goTo } from './lib/flows.mjs'
import { startSshd } from './lib/sshd.mjs'
import { layoutProblems, lowContrastButtons, offenders, screenText } from './lib/visible-text.mjs'
import { waitFor } from './lib/webdriver.mjs'

const INSTANCE = 'rtx4090-text'
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const SECTIONS = ['rentals', 'choose-gpu', 'new-rental', 'estimate', 'team', 'settings']
const TABS = ['connect', 'verify', 'install', 'terminal', 'backup', 'release']

describe('visible text on every screen', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-text-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  const problems = []
  let app
  let s
  let host

  before(async () => {
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    execFileSync(CLI, ['instance', 'start', INSTANCE, '--db', db])
    host = await startSshd({ fakeGpuProfile: 'healthy-4090' })
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await host?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  /** Let a screen's first answers arrive, then scan and photograph it. */
  async function check(language, name, shot) {
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const text = await screenText(s)
    for (const problem of offenders(text, language)) {
      const snippet = problem.slice(problem.indexOf(': ') + 2)
      const line = text.split('\n').find((l) => l.includes(snippet)) ?? ''
      problems.push(`${language} ${name}: ${problem} — in “${line.slice(0, 120)}”`)
    }
    // At the window's own size (1200 × 800, a small laptop's) and at 1440 × 900: nothing cut,
    // nothing pushed out; and every button's text readable against its background.
    for (const problem of await layoutProblems(s)) problems.push(`${language} ${name} 1200×800: ${problem}`)
    for (const problem of await lowContrastButtons(s)) problems.push(`${language} ${name}: ${problem}`)
    await screenshot(s, shot)
    await s.resize(1440, 900)
    await waitFor(async () => (await s.execute('return window.innerWidth')) >= 1400, { what: 'the window at 1440 px' })
    for (const problem of await layoutProblems(s)) problems.push(`${language} ${name} 1440×900: ${problem}`)
    await screenshot(s, `${shot}-1440`)
    await s.resize(1200, 800)
    await waitFor(async () => (await s.execute('return window.innerWidth')) <= 1210, { what: 'the window back at 1200 px' })
  }

  async function openInstance() {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="screen-instance"]')
  }

  async function visitAll(language, prefix) {
    for (const section of SECTIONS) {
      await goTo(s, section)
      await check(language, section, `${language}/${prefix}-${section}`)
    }
    await openInstance()
    await check(language, 'instance', `${language}/${prefix}-instance`)
    await s.scrollTo('[data-testid="watchdog-card"]')
    await check(language, 'instance (watchdog)', `${language}/${prefix}-instance-watchdog`)
    // The instance's own screens, through the tabs they share (Connect opens from the page).
    await s.click('[data-testid="instance-connect"]')
    for (const tab of TABS) {
      await s.click(`[data-testid="tab-${tab}"]`)
      await s.waitFor(`[data-testid="screen-${tab}"]`)
      // A run's findings are worded in the language it ran in (a known gap: switching the
      // language does not re-word a stored run), so Chinese checks a run made in Chinese.
      if (tab === 'verify' && language === 'zh-CN') {
        await s.click('[data-testid="verify-run"]')
        await s.waitFor('[data-testid="verify-verdict"]', { timeoutMs: 90_000 })
      }
      await check(language, tab, `${language}/${prefix}-${tab}`)
    }
  }

  it('connects and runs Verify once, so the instance screens have something to show', async () => {
    await openInstance()
    await connectWithKey(s, host.sshCommand, host.clientKey)
    await s.click('[data-testid="connect-done"]')
    await s.waitFor('[data-testid="screen-verify"]')
    await s.click('[data-testid="verify-run"]')
    await s.waitFor('[data-testid="verify-verdict"]', { timeoutMs: 90_000 })
  })

  it('en: every screen reads as product text', async () => {
    await visitAll('en', '90-text')
  })

  it('zh-CN: every screen reads as product text in Chinese', async () => {
    await s.click('[data-testid="sidebar-language"]')
    await waitFor(async () => (await s.text('[data-testid="nav-settings"]')) === '设置', { what: 'the switch to Chinese' })
    await visitAll('zh-CN', '90-text')
  })

  it('nothing internal, cut or pushed out was on any screen', () => {
    assert.deepEqual(problems, [], `text that reads badly:\n${problems.join('\n')}`)
  })
})

describe('dark mode on the main screens', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-text-dark-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('the main screens in both languages, dark, with nothing light left behind', async () => {
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    app = await launchApp({ profile, language: 'en_US', env: { GTK_THEME: 'Adwaita:dark' } })
    const s = app.session
    await finishFirstRun(s)
    for (const language of ['en', 'zh-CN']) {
      if (language === 'zh-CN') {
        await s.click('[data-testid="sidebar-language"]')
        await waitFor(async () => (await s.text('[data-testid="nav-settings"]')) === '设置', { what: 'the switch to Chinese' })
      }
      for (const section of ['rentals', 'choose-gpu', 'new-rental', 'estimate', 'settings']) {
        await goTo(s, section)
        // Cards and inputs take the dark surface: no element with a near-white background.
        const light = await s.execute(`
          return [...document.querySelectorAll('main *')].filter((el) => {
            if (el.getClientRects().length === 0) return false
            const [r, g, b, a = 1] = (getComputedStyle(el).backgroundColor.match(/[\\d.]+/g) ?? []).map(Number)
            return a > 0.5 && r + g + b > 600
          }).map((el) => el.tagName.toLowerCase() + '.' + el.className).slice(0, 5)
        `)
        assert.deepEqual(light, [], `${language} ${section}: light boxes in dark mode`)
        assert.deepEqual(await lowContrastButtons(s), [], `${language} ${section}: button text below 4.5:1 in dark mode`)
        await screenshot(s, `${language}/95-dark-${section}`)
      }
      await goTo(s, 'rentals')
      await s.click('[data-testid="rental-card"]')
      await s.waitFor('[data-testid="screen-instance"]')
      await new Promise((resolve) => setTimeout(resolve, 1000))
      assert.deepEqual(await lowContrastButtons(s), [], `${language} instance: button text below 4.5:1 in dark mode`)
      await screenshot(s, `${language}/95-dark-instance`)
    }
    // Settings → Appearance overrides the system: light on a dark desktop, then back to the system's.
    const pageBackground = () => s.execute(`return getComputedStyle(document.documentElement).getPropertyValue('--bg').trim()`)
    await goTo(s, 'settings')
    assert.equal(await pageBackground(), '#14171c', 'dark, as the system is')
    await s.select('[data-testid="settings-theme"]', 'light')
    await waitFor(async () => (await pageBackground()) === '#f6f7f9', { what: 'the light palette once 浅色 is chosen' })
    assert.deepEqual(await lowContrastButtons(s), [], 'button text below 4.5:1 in the chosen light theme')
    await screenshot(s, 'zh-CN/95-theme-light-chosen')
    await s.select('[data-testid="settings-theme"]', 'system')
    await waitFor(async () => (await pageBackground()) === '#14171c', { what: 'dark again when following the system' })
  })
})

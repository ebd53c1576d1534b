// First run: language (so everything after reads in it) → welcome (the journey, one line a stage)
// → currency → one of two ways on:
// "I already rented one" (New rental) or "help me choose a GPU"; the choices survive a restart.
// The Chinese name 算力租用管家 on the welcome, the window title and the sidebar. Screenshots of
// each first-run screen in both languages, and in dark mode.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { launchApp, screenshot } from './lib/app.mjs'
import { waitFor } from './lib/webdriver.mjs'

/** Whether the language choice `language` is the one picked ("true" or "false"). */
function checked(s, language) {
  return s.execute('return document.querySelector(arguments[0]).getAttribute("aria-checked")', [
    `[data-testid="language-${language}"]`,
  ])
}

describe('first run', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-first-run-'))
  let app
  let s

  before(async () => {
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('asks the language first, in the system language (English here)', async () => {
    await s.waitFor('[data-testid="onboarding-language"]')
    assert.equal(await s.text('h1'), 'Choose your language')
    assert.equal(await checked(s, 'en'), 'true', 'the system language is chosen')
    assert.equal(await s.execute('return document.title'), 'Leasehold · 算力租用管家')
    await screenshot(s, 'en/01-first-run-language')
  })

  it('switches the whole interface to Chinese the moment Chinese is picked, welcome included', async () => {
    await s.click('[data-testid="language-zh-CN"]')
    await waitFor(async () => (await s.text('h1')) === '选择界面语言', { what: 'the title in Chinese' })
    await screenshot(s, 'zh-CN/01-first-run-language')

    await s.click('[data-testid="onboarding-next"]')
    await s.waitFor('[data-testid="onboarding-welcome"]')
    assert.equal(await s.text('h1'), '欢迎使用算力租用管家')
    assert.match(await s.text('[data-testid="onboarding-journey"]'), /选卡[\s\S]*连接[\s\S]*检测[\s\S]*安装[\s\S]*值守[\s\S]*备份[\s\S]*释放/)
    await screenshot(s, 'zh-CN/02-first-run-welcome')

    await s.click('[data-testid="onboarding-start"]')
    await s.waitFor('[data-testid="onboarding-currency"]')
    assert.match(await s.text('[data-testid="onboarding-currency"]'), /我已经租好了一台[\s\S]*帮我挑一张 GPU/)
    await screenshot(s, 'zh-CN/03-first-run-currency')
  })

  it('steps back through the welcome to the language, keeping the choice', async () => {
    await s.click('[data-testid="onboarding-back"]')
    await s.waitFor('[data-testid="onboarding-welcome"]')
    await s.click('[data-testid="onboarding-back"]')
    await s.waitFor('[data-testid="onboarding-language"]')
    assert.equal(await checked(s, 'zh-CN'), 'true')
  })

  it('takes the default currency and goes straight into New rental', async () => {
    await s.click('[data-testid="onboarding-next"]')
    await s.click('[data-testid="onboarding-start"]')
    await s.select('[data-testid="onboarding-currency-select"]', 'CNY')
    await s.click('[data-testid="onboarding-finish"]')
    await s.waitFor('[data-testid="screen-new-rental"]')
    assert.equal(await s.text('[data-testid="brand-name"]'), '算力租用管家', 'the sidebar carries the Chinese name')
    await screenshot(s, 'zh-CN/04-first-run-done-sidebar')
  })

  it('remembers language and first-run after the app is closed and reopened', async () => {
    await app.close()
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await s.waitFor('[data-testid="screen-rentals"]')
    const label = await s.text('[data-testid="nav-settings"]')
    assert.equal(label, '设置', 'the language picked on first run must win over the English system locale')
  })
})

describe('first run, the other way on', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-first-run-choose-'))
  let app

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('en: "Help me choose a GPU" opens Choose GPU instead of New rental', async () => {
    app = await launchApp({ profile, language: 'en_US' })
    const s = app.session
    await s.click('[data-testid="onboarding-next"]')
    await s.waitFor('[data-testid="onboarding-welcome"]')
    assert.match(await s.text('h1'), /Welcome to Leasehold/)
    const journey = await s.text('[data-testid="onboarding-journey"]')
    for (const stage of ['Choose', 'Connect', 'Verify', 'Install', 'Watch', 'Back up', 'Release']) {
      assert.match(journey, new RegExp(`${stage} `), `the welcome names the stage ${stage}`)
    }
    await screenshot(s, 'en/02-first-run-welcome')
    await s.click('[data-testid="onboarding-start"]')
    await s.waitFor('[data-testid="onboarding-choose"]')
    assert.match(await s.text('[data-testid="onboarding-currency"]'), /I already rented one[\s\S]*Help me choose a GPU/)
    await screenshot(s, 'en/03-first-run-currency')
    await s.click('[data-testid="onboarding-choose"]')
    await s.waitFor('[data-testid="screen-choose-gpu"]')
    assert.equal(await s.text('[data-testid="brand-name"]'), 'Leasehold')
  })
})

describe('appearance', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-dark-'))
  let app

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('turns dark when the system prefers dark', async () => {
    app = await launchApp({ profile, language: 'en_US', env: { GTK_THEME: 'Adwaita:dark' } })
    const s = app.session
    await s.waitFor('[data-testid="onboarding-language"]')
    assert.equal(await s.execute('return matchMedia("(prefers-color-scheme: dark)").matches'), true)
    const background = await s.execute('return getComputedStyle(document.body).backgroundColor')
    const [r, g, b] = background.match(/\d+/g).map(Number)
    assert.ok(r + g + b < 150, `the page background must be dark, got ${background}`)
    await screenshot(s, 'en/00-dark-first-run')
  })
})

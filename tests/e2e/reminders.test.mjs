// Reminders through the real window: a rental already over its budget raises the popup (one
// reminder, not the three thresholds it slept through), "until tomorrow" hides it and it stays
// hidden after the app is closed and reopened, and a budget crossed while the app runs reaches
// the popup within one scheduler tick — the time from the crossing to the popup is printed.
// Screenshots in zh-CN and en.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, switchLanguage } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const OVER = 'a100-over-budget'
const LIVE = 'h100-live'
/** 3600 CNY an hour is 1 CNY a second: a budget of 180 is half spent 90 s after creation. */
const LIVE_PRICE = '3600'
const LIVE_BUDGET = '180'
const LIVE_HALF_SECONDS = 90

describe('the reminder popup', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-reminders-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s

  const cli = (...args) => execFileSync(CLI, [...args, '--db', db], { encoding: 'utf8' })
  const popupFor = (instance) => `[data-testid="reminder"][data-instance="${instance}"]`

  before(async () => {
    // 100 an hour for the last hour against a budget of 10: 50 %, 80 % and 100 % all passed.
    const hourAgo = new Date(Date.now() - 3600_000).toISOString()
    cli('instance', 'add', OVER, '--gpu', 'A100', '--count', '1', '--price', '100', '--currency', 'CNY', '--budget', '10', '--at', hourAgo)
    cli('instance', 'start', OVER, '--at', hourAgo)
    app = await launchApp({ profile, language: 'zh_CN' })
    s = app.session
    await s.waitFor('[data-testid="onboarding-language"]')
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('raises one reminder for a rental over its budget, with what it costs an hour', async () => {
    const card = await s.waitFor(popupFor(OVER), { timeoutMs: 60_000 })
    assert.equal(await card.attribute('data-kind'), 'budget_100', 'the most urgent of the thresholds it slept through')
    const all = await s.findAll(popupFor(OVER))
    assert.equal(all.length, 1, 'one reminder, not a burst of three')
    assert.match(await card.text(), /预算已用完/)
    assert.equal(await card.attribute('data-urgency'), 'critical', 'over budget is the loudest colour')
    assert.match(await s.text(`${popupFor(OVER)} [data-testid="reminder-time-left"]`), /已超出预算/)
    assert.match(await s.text(`${popupFor(OVER)} [data-testid="reminder-cost"]`), /100\.00/)
    await screenshot(s, 'zh-CN/reminders-popup')
  })

  it('hides it until tomorrow, and it stays hidden after the app is reopened', async () => {
    // At 100 an hour, until tomorrow costs far more than the default threshold: it asks first.
    await s.click(`${popupFor(OVER)} [data-testid="reminder-snooze-tomorrow"]`)
    await s.waitFor('[data-testid="snooze-confirm"]')
    await screenshot(s, 'zh-CN/reminders-snooze-confirm')
    await s.click('[data-testid="snooze-confirm-yes"]')
    await s.waitGone(popupFor(OVER))
    await app.close()

    // Created now, this one crosses half its budget while the reopened app runs.
    const created = Date.now()
    cli('instance', 'add', LIVE, '--gpu', 'H100', '--count', '1', '--price', LIVE_PRICE, '--currency', 'CNY', '--budget', LIVE_BUDGET,
      '--at', new Date(created).toISOString())
    cli('instance', 'start', LIVE, '--at', new Date(created).toISOString())
    const crossing = created + LIVE_HALF_SECONDS * 1000

    app = await launchApp({ profile, language: 'zh_CN' })
    s = app.session
    await s.waitFor('[data-testid="screen-rentals"]')
    const card = await s.waitFor(popupFor(LIVE), { timeoutMs: 240_000, intervalMs: 250 })
    const shown = Date.now()
    assert.equal(await card.attribute('data-kind'), 'budget_50')
    assert.equal((await s.findAll(popupFor(OVER))).length, 0, 'the snoozed reminder stayed hidden across the restart')
    // The rental card says it too while minutes are left: time first, in red, not a grey date.
    const runsOut = `[data-testid="rental-card"][data-name="${LIVE}"] [data-testid="budget-runs-out"]`
    assert.match((await s.text(runsOut)).trim(), /^(\d+ 分钟后用完|一分钟内用完) · \d\d:\d\d$/)
    assert.equal(await (await s.find(runsOut)).attribute('data-urgency'), 'critical')
    const latency = (shown - crossing) / 1000
    // A measure, not a pass mark: printed for the note.
    console.log(`reminders: budget crossed → popup shown in ${latency.toFixed(1)} s (scheduler tick 30 s)`)
    assert.ok(latency >= 0, `the popup came after the crossing, not before (${latency} s)`)
    await screenshot(s, 'zh-CN/reminders-after-restart')
  })

  it('speaks English too, and Stop now opens the instance page', async () => {
    await switchLanguage(s, 'en')
    await waitFor(async () => /budget/.test(await s.text(popupFor(LIVE))), { what: "the popup in English" })
    assert.match(await s.text(`${popupFor(LIVE)} [data-testid="reminder-cost"]`), /an hour right now/)
    // Half the budget, but at 3,600 an hour the rest is gone in minutes: that is what it says.
    await waitFor(async () => /Budget runs out in \d+ min|Over budget/.test(await s.text(`${popupFor(LIVE)} [data-testid="reminder-time-left"]`).catch(() => '')), {
      what: 'the time left in the budget',
    })
    assert.equal(await (await s.find(popupFor(LIVE))).attribute('data-urgency'), 'critical', 'minutes left is the loudest colour')
    assert.match(await s.text(`${popupFor(LIVE)} [data-testid="reminder-snooze-hour"]`), /Snooze 1 h ≈ .*3,600/)
    await screenshot(s, 'en/reminders-popup')
    await s.click(`${popupFor(LIVE)} [data-testid="reminder-snooze-hour"]`)
    await s.waitFor('[data-testid="snooze-confirm"]')
    assert.match(await s.text('[data-testid="snooze-confirm"]'), /3,600/)
    await screenshot(s, 'en/reminders-snooze-confirm')
    // "Stop it now" instead of the snooze: the instance page with the Stop dialog open.
    await s.click('[data-testid="snooze-confirm-stop"]')
    await s.waitFor('[data-testid="screen-instance"]')
    await s.waitFor('[data-testid="stop-dialog"][open]')
    await screenshot(s, 'en/reminders-stop-dialog')
  })
})

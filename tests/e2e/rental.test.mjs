// The ledger through the real window: record a rental step by step (with core's validation
// shown next to the fields, a draft that survives closing the app), watch its cost tick, stop
// it, release it, read the final bill. Screenshots of every screen in zh-CN and en.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { launchApp, screenshot } from './lib/app.mjs'
import { changedText, fill, finishFirstRun, goTo, next, onStep, switchLanguage, value } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

// 360 per GPU-hour is 0.10 a second: the two-decimal total visibly moves every second.
const PRICE = '360'

/** Wait until both estimate panels show core's answer to the last thing typed. */
async function settled(s) {
  await s.waitFor('[data-testid="estimate-result"][data-pending="false"] [data-testid="split-table"]')
  await s.waitFor('[data-testid="rent-buy-result"][data-pending="false"] [data-testid="break-even-chart"] canvas')
}
const NAME = 'lora-4090'

/** The text of the option chosen in the select at `css`. */
function chosenOption(s, css) {
  return s.execute('return document.querySelector(arguments[0]).selectedOptions[0].textContent.trim()', [css])
}

describe('a rental from first record to final bill', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-rental-'))
  let app
  let s

  before(async () => {
    app = await launchApp({ profile, language: 'zh_CN' })
    s = app.session
    await s.waitFor('[data-testid="onboarding-language"]')
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('shows required-field and core validation messages next to the fields, in Chinese', async () => {
    await onStep(s, 'rental')
    await screenshot(s, 'zh-CN/04-new-rental-machine')
    await s.click('[data-testid="wizard-next"]')
    await s.waitFor('[data-testid="error-name"]')
    assert.equal(await s.text('[data-testid="error-name"]'), '必填。')

    // The region's example follows the provider chosen: AutoDL writes its zones in Chinese.
    await s.click('[data-testid="preset-runpod"]')
    await waitFor(async () => (await (await s.find('[data-testid="field-region"]')).attribute('placeholder')) === '例如 EU-RO-1', {
      what: "RunPod's data centre as the region example",
    })
    await s.click('[data-testid="preset-autodl"]')
    await waitFor(async () => (await (await s.find('[data-testid="field-region"]')).attribute('placeholder')) === '例如 西北B区', {
      what: "AutoDL's zone as the region example",
    })
    await fill(s, 'name', NAME)
    await fill(s, 'gpu_model', 'RTX 4090')
    await fill(s, 'price_per_gpu_hour', '0')
    await s.click('[data-testid="wizard-next"]')
    const error = await s.waitFor('[data-testid="error-price_per_gpu_hour"]')
    assert.equal(await error.attribute('data-code'), 'billing.invalid_price', 'the zero price is refused by core')
    assert.match(await error.text(), /必须大于 0/)
    await screenshot(s, 'zh-CN/05-new-rental-validation')
  })

  it('keeps a half-filled rental when the app is closed and reopened', async () => {
    await fill(s, 'price_per_gpu_hour', PRICE)
    await next(s, 'rules')
    await s.waitFor('[data-testid="choice-billing_starts-running"] input:checked')
    await fill(s, 'no_gpu_rate', '0.5')
    // The draft is saved shortly after typing; reopening too early would only race the save.
    await waitFor(async () => (await value(s, 'no_gpu_rate')) === '0.5', { what: 'the typed rate' })
    await new Promise((resolve) => setTimeout(resolve, 600))
    await app.close()

    app = await launchApp({ profile, language: 'zh_CN' })
    s = app.session
    await s.waitFor('[data-testid="screen-rentals"]')
    await goTo(s, 'new-rental')
    await s.waitFor('[data-testid="draft-restored"]')
    await onStep(s, 'rules')
    assert.equal(await value(s, 'no_gpu_rate'), '0.5', 'the value typed before closing is back')
    await screenshot(s, 'zh-CN/06-new-rental-rules')
  })

  it('keeps values when stepping back, and records the rental from the review', async () => {
    await s.click('[data-testid="wizard-back"]')
    await onStep(s, 'rental')
    assert.equal(await value(s, 'name'), NAME)
    assert.equal(await value(s, 'price_per_gpu_hour'), PRICE)
    await next(s, 'rules')
    await next(s, 'extras')
    // The disk as the provider's page quotes it, per GB and day: 0.0024 元/GB·天 on 200 GB is
    // 0.48 元 a day, 0.02 元 an hour. Without the size, Next names the size field.
    await s.select('[data-testid="field-data_disk_per"]', 'gb_day')
    await fill(s, 'data_disk_per_hour', '0.0024')
    await s.click('[data-testid="wizard-next"]')
    assert.match(await s.text('[data-testid="error-data_disk_size_gb"]'), /容量/)
    await fill(s, 'data_disk_size_gb', '200')
    await waitFor(async () => (await s.text('[data-testid="wizard"]')).includes('折合 ¥0.02/小时。'), {
      what: "core's hourly figure for the quoted disk",
    })
    await screenshot(s, 'zh-CN/07-new-rental-fees')
    await next(s, 'plan')
    await fill(s, 'budget', '100')
    await fill(s, 'planned_hours', '10')
    await screenshot(s, 'zh-CN/08-new-rental-plan')
    await next(s, 'review')
    assert.match(await s.text('[data-testid="review"]'), /0\.0024 元\/GB·天 × 200 GB/)
    await screenshot(s, 'zh-CN/09-new-rental-review')
    await s.click('[data-testid="wizard-finish"]')
    // Connecting comes next (tests/e2e/connect-verify.test.mjs); this test does it later.
    await s.waitFor('[data-testid="connect-just-created"]')
    await screenshot(s, 'zh-CN/09b-connect-after-new-rental')
    await s.click('[data-testid="connect-later"]')
    await s.waitFor('[data-testid="screen-instance"] [data-testid="instance-total"]')
    assert.equal(await s.text('[data-testid="page-title"]'), NAME)
  })

  it('ticks the cost every second on the instance page and on the Rentals card', async () => {
    const first = await s.text('[data-testid="instance-total"]')
    await changedText(s, '[data-testid="instance-total"]', first, 'the instance total to tick')
    await s.waitFor('[data-testid="cost-chart"] canvas')
    await screenshot(s, 'zh-CN/10-instance-running')

    // The project it is rented for, changed in place (team mode sums spend by project).
    assert.equal(await s.text('[data-testid="project-name"]'), '未设项目')
    await s.click('[data-testid="project-edit"]')
    await s.type('[data-testid="project-input"]', '视觉组')
    await screenshot(s, 'zh-CN/10b-instance-project')
    await s.click('[data-testid="project-save"]')
    await waitFor(async () => (await s.findAll('[data-testid="project-name"]')).length > 0, { what: 'the saved project' })
    assert.equal(await s.text('[data-testid="project-name"]'), '视觉组')

    // The forecast's "until" is a day and a 24-hour time in the app's language, not the
    // browser's picker in the system's (mm/dd/yyyy, AM/PM on an English system).
    await s.scrollTo('[data-testid="forecast"]')
    assert.match(await chosenOption(s, '[data-testid="forecast-until-day"]'), /^(今天|明天) · \d+月\d+日/)
    assert.match(await chosenOption(s, '[data-testid="forecast-until-time"]'), /^([01]\d|2[0-3]):[0-5]\d$/)
    await s.waitFor('[data-testid="forecast-total"]')
    await screenshot(s, 'zh-CN/10c-instance-forecast')

    await goTo(s, 'rentals')
    const card = `[data-testid="rental-card"][data-name="${NAME}"]`
    const cost = await s.text(`${card} [data-testid="live-cost"]`)
    await changedText(s, `${card} [data-testid="live-cost"]`, cost, 'the card cost to tick')
    assert.equal(await (await s.find(`${card} [data-testid="state"]`)).attribute('data-state'), 'running')
    // Over the list, core's totals: what everything costs an hour now (360 a GPU-hour plus the
    // 0.02 disk) and what this month has cost so far.
    const total = '[data-testid="rentals-total"][data-currency="CNY"]'
    assert.equal(await s.text(`${total} [data-testid="rentals-total-now"]`), '¥360.02/小时')
    assert.match(await s.text(total), /现在每小时花费（1 台）/)
    assert.match(await s.text(total), /月至今/)
    assert.match(await s.text(`${total} [data-testid="rentals-total-month"]`), /^¥\d+\.\d\d$/)
    await screenshot(s, 'zh-CN/11-rentals-active')
  })

  it('shows the estimate and rent-or-buy answers from core', async () => {
    await goTo(s, 'estimate')
    await fill(s, 'price_per_gpu_hour', '2.5')
    await fill(s, 'hours', '10')
    await s.select('[data-testid="field-runs"]', '2')
    await fill(s, 'stop_hours_between', '20')
    await fill(s, 'stopped_rate', '1')
    await s.waitFor('[data-testid="estimate-result"][data-pending="false"] [data-testid="split-table"]')
    assert.match(await s.text('[data-testid="estimate-total"]'), /25\.00/, '2.5 × 10 h')
    await fill(s, 'card_price', '15000')
    await fill(s, 'rent_per_hour', '2.5')
    await fill(s, 'power_watts', '450')
    await fill(s, 'electricity_per_kwh', '0.6')
    await settled(s)
    assert.match(await s.text('[data-testid="rent-buy-verdict"]'), /第 \d+ 个月/)
    await s.scrollTo('[data-testid="task-cost"]')
    await screenshot(s, 'zh-CN/12-estimate-task')
    await s.scrollTo('[data-testid="rent-or-buy"]')
    await screenshot(s, 'zh-CN/12-estimate-rent-or-buy')
    await goTo(s, 'settings')
    await screenshot(s, 'zh-CN/13-settings')
  })

  it('shows every screen in English after switching language in Settings', async () => {
    await switchLanguage(s, 'en')
    await screenshot(s, 'en/13-settings')
    await goTo(s, 'rentals')
    await s.waitFor('[data-testid="rental-card"]')
    await screenshot(s, 'en/11-rentals-active')
    await s.click(`[data-testid="rental-card"][data-name="${NAME}"]`)
    await s.waitFor('[data-testid="cost-chart"] canvas')
    assert.equal(await s.text('[data-testid="project-name"]'), '视觉组', 'the project was kept')
    await screenshot(s, 'en/10-instance-running')
    await s.scrollTo('[data-testid="forecast"]')
    assert.match(await chosenOption(s, '[data-testid="forecast-until-day"]'), /^(today|tomorrow) · [A-Z][a-z]{2}, [A-Z][a-z]{2} \d+$/)
    await screenshot(s, 'en/10c-instance-forecast')

    await goTo(s, 'new-rental')
    await onStep(s, 'rental')
    await s.click('[data-testid="wizard-next"]')
    await s.waitFor('[data-testid="error-name"]')
    assert.equal(await s.text('[data-testid="error-name"]'), 'Required.')
    await s.click('[data-testid="preset-runpod"]')
    await fill(s, 'name', 'a100-eval')
    await fill(s, 'gpu_model', 'A100 80GB')
    await fill(s, 'price_per_gpu_hour', 'abc')
    await s.click('[data-testid="wizard-next"]')
    const notANumber = await s.waitFor('[data-testid="error-price_per_gpu_hour"]')
    assert.equal(await notANumber.attribute('data-code'), 'form.not_a_number')
    assert.match(await notANumber.text(), /hourly price per GPU/, "the field's own rule, in English")
    await screenshot(s, 'en/05-new-rental-validation')
    await fill(s, 'price_per_gpu_hour', '1.89')
    await next(s, 'rules')
    await fill(s, 'stopped_rate', '0.01')
    await screenshot(s, 'en/06-new-rental-rules')
    await next(s, 'extras')
    await screenshot(s, 'en/07-new-rental-fees')
    await next(s, 'plan')
    await screenshot(s, 'en/08-new-rental-plan')
    await next(s, 'review')
    await screenshot(s, 'en/09-new-rental-review')
    await s.click('[data-testid="wizard-start-over"]')
    await onStep(s, 'rental')
    await screenshot(s, 'en/04-new-rental-machine')

    await goTo(s, 'estimate')
    await fill(s, 'price_per_gpu_hour', '1.89')
    await fill(s, 'hours', '10')
    await s.select('[data-testid="field-runs"]', '2')
    await fill(s, 'stop_hours_between', '20')
    await fill(s, 'stopped_storage_rate', '0.05')
    await fill(s, 'card_price', '2000')
    await fill(s, 'rent_per_hour', '1.89')
    await fill(s, 'power_watts', '450')
    await fill(s, 'electricity_per_kwh', '0.15')
    await settled(s)
    await s.scrollTo('[data-testid="task-cost"]')
    await screenshot(s, 'en/12-estimate-task')
    await s.scrollTo('[data-testid="rent-or-buy"]')
    await screenshot(s, 'en/12-estimate-rent-or-buy')
  })

  it('stops the rental after confirming, then releases it and shows the final bill', async () => {
    await goTo(s, 'rentals')
    await s.click(`[data-testid="rental-card"][data-name="${NAME}"]`)
    // Never connected: Stop cannot run AutoDL's power-off, so it says to use the console, and
    // recording the stop by hand is the named way out.
    await s.click('[data-testid="action-stop"]')
    await s.waitFor('[data-testid="stop-dialog"][open] [data-testid="stop-console-only"]')
    assert.match(await s.text('[data-testid="stop-console-only"]'), /AutoDL console/)
    await s.waitFor('[data-testid="stop-console-link"]')
    await screenshot(s, 'en/14-instance-confirm-stop')
    await s.click('[data-testid="stop-console-link"]')
    await waitFor(async () => (await (await s.find('[data-testid="stop-record-by-hand"]')).property('disabled')) === false, {
      what: 'recording by hand enabled once the console was opened',
    })
    await s.click('[data-testid="stop-record-by-hand"]')
    await s.waitFor('[data-testid="stop-check-none"]')
    await waitFor(async () => (await (await s.find('[data-testid="state"]')).attribute('data-state')) === 'stopped', {
      what: 'the stopped state',
    })
    // AutoDL wipes an instance stopped for 15 days: the page names the date.
    await s.waitFor('[data-testid="wipe-at"]')
    const stoppedTotal = await s.text('[data-testid="instance-total"]')
    await screenshot(s, 'en/15-instance-stopped')

    // The header's Release leads to the checklist, never to a shortcut around it.
    await s.click('[data-testid="action-release"]')
    await s.waitFor('[data-testid="screen-release"]')
    await s.waitFor('[data-testid="release-verdict"]', { timeoutMs: 120_000 })
    await screenshot(s, 'en/16-instance-confirm-release')
    await s.click('[data-testid="release-next"]')
    for (const field of await s.findAll('[data-testid^="override-"]')) {
      await field.click()
      await field.sendKeys('never connected; nothing on it')
    }
    await s.click('[data-testid="release-next"]')
    await s.type('[data-testid="release-confirm"]', NAME)
    await s.click('[data-testid="release-do"]')
    await s.waitFor('[data-testid="final-bill"]', { timeoutMs: 30_000 })
    await s.click('[data-testid="instance-back"]')
    await waitFor(async () => (await (await s.find('[data-testid="state"]')).attribute('data-state')) === 'released', {
      what: 'the released state',
    })
    await s.waitGone('[data-testid="action-start"]')
    const bill = await s.text('[data-testid="instance-total"]')
    assert.ok(bill >= stoppedTotal, 'the bill includes everything up to the release')
    await screenshot(s, 'en/17-instance-released')

    await goTo(s, 'rentals')
    const row = await s.waitFor(`[data-testid="history-row"][data-name="${NAME}"]`)
    assert.equal(await s.text(`[data-testid="history-row"][data-name="${NAME}"] [data-testid="final-bill"]`), bill)
    // How long it was kept, in words people read (days, hours, minutes), not a stopwatch.
    assert.match(await s.text(`[data-testid="history-row"][data-name="${NAME}"] [data-testid="kept-for"]`), /^\d+ (days?|hr|min)( \d+ (hr|min))?$/)
    assert.ok(row)
    // Released this month: nothing costs now, and the month's total is its final bill.
    const total = '[data-testid="rentals-total"][data-currency="CNY"]'
    assert.match(await s.text(total), /Nothing is costing now/)
    assert.equal(await s.text(`${total} [data-testid="rentals-total-month"]`), bill)
    await screenshot(s, 'en/18-rentals-history')
  })

  it('shows the released rental and its history in Chinese too', async () => {
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'rentals')
    await s.waitFor('[data-testid="history-row"]')
    await screenshot(s, 'zh-CN/18-rentals-history')
    await s.click(`[data-testid="history-row"][data-name="${NAME}"] td`)
    await s.waitFor('[data-testid="timeline"]')
    await screenshot(s, 'zh-CN/17-instance-released')
  })
})

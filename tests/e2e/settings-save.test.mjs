// Settings → Reminders saves each change as it is made (issue 37 point 9): there is no Save
// button to forget. A changed idle threshold, quiet hours switched on with their times and the
// snooze-confirmation limit are written once the typing pauses ("Saved."), and are there after the
// app is closed and opened again; a limit core refuses shows why and writes nothing. Both languages.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

const STATE = '[data-testid="remind-save-state"]'

async function savedState(s) {
  await waitFor(async () => (await s.execute('return document.querySelector(arguments[0])?.dataset.state', [STATE])) === 'saved', {
    what: 'the reminder rules to be saved',
  })
}

/** The stepper's + or − button beside the number input `testid`. */
const plus = (testid) => `[data-testid="${testid}"] ~ button[aria-label="+"]`
const minus = (testid) => `.stepper:has([data-testid="${testid}"]) button[aria-label="−"]`

async function value(s, testid) {
  return (await s.waitFor(`[data-testid="${testid}"]`)).property('value')
}

describe('settings save as they change', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-settings-save-'))
  let app

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('en: writes each change without a Save button', async () => {
    app = await launchApp({ profile, language: 'en_US' })
    const s = app.session
    await s.waitFor('[data-testid="onboarding-language"]')
    await finishFirstRun(s)
    await goTo(s, 'settings')
    await s.scrollTo('[data-testid="settings-reminders"]')
    assert.equal(await s.text(STATE), 'Changes are saved as you make them.')
    assert.equal((await s.findAll('[data-testid="remind-save"]')).length, 0, 'no Save button')

    // 30 minutes by default; three steps up with the stepper's + button.
    for (let i = 0; i < 3; i++) await s.click(plus('remind-gpu_idle_minutes'))
    assert.equal(await value(s, 'remind-gpu_idle_minutes'), '33')
    await savedState(s)
    assert.equal(await s.text(STATE), 'Saved.')

    await s.click('[data-testid="remind-quiet"]')
    await s.select('[data-testid="remind-quiet-start"]', '22:30')
    await s.type('[data-testid="remind-snooze-confirm-above"]', '12.5')
    await savedState(s)
    await screenshot(s, 'en/settings-reminders-saved')

    await s.type('[data-testid="remind-snooze-confirm-above"]', 'twelve')
    const refusal = await s.waitFor('[data-testid="settings-reminders"] [data-testid="error"]')
    assert.equal(await refusal.attribute('data-code'), 'form.not_a_number')
    assert.equal(await s.execute('return document.querySelector(arguments[0]).dataset.state', [STATE]), 'refused')
    await screenshot(s, 'en/settings-reminders-refused')
  })

  it('zh-CN: the saved values are there after a restart, the refused one is not', async () => {
    await app.close()
    app = await launchApp({ profile, language: 'en_US' })
    const s = app.session
    await s.waitFor('[data-testid="screen-rentals"]')
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'settings')
    await s.scrollTo('[data-testid="settings-reminders"]')
    assert.equal(await value(s, 'remind-gpu_idle_minutes'), '33')
    assert.equal(await (await s.waitFor('[data-testid="remind-quiet"]')).property('checked'), true)
    assert.equal(await value(s, 'remind-quiet-start'), '22:30')
    assert.equal(await value(s, 'remind-snooze-confirm-above'), '12.5')
    assert.equal(await s.text(STATE), '修改后自动保存。')

    await s.click(minus('remind-release_lead_minutes'))
    await savedState(s)
    assert.equal(await value(s, 'remind-release_lead_minutes'), '29')
    assert.equal(await s.text(STATE), '已保存。')
    await screenshot(s, 'zh-CN/settings-reminders-saved')
  })
})

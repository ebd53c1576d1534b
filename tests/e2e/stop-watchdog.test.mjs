// The watchdog card and "Stop now" against a real sshd on 127.0.0.1: install the watchdog with a
// power-off stand-in, read its status and decisions, remove it; then "Stop now" runs the
// stand-in, the test takes the host down as a real power-off would, and the rental is recorded
// as stopped only then. Screenshots in English and Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { startSshd } from './lib/sshd.mjs'
import { offenders, screenText } from './lib/visible-text.mjs'
import { waitFor } from './lib/webdriver.mjs'

const INSTANCE = 'gpu-watch'
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')

describe('stop and watchdog', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-stop-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  // Where the instance's power-off stand-in records its call (writable by the login user).
  const calls = mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-poweroff-'))
  const callFile = path.join(calls, 'calls')
  const standIn = `echo off >> ${callFile}`
  let app
  let s
  let host

  before(async () => {
    chmodSync(calls, 0o777)
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    execFileSync(CLI, ['instance', 'start', INSTANCE, '--db', db])
    host = await startSshd()
    // A watchdog an earlier, interrupted run left in the shared test user's home goes first.
    execFileSync(CLI, ['watchdog', 'remove', '--ssh', host.sshCommand, '-i', host.clientKey, '--accept-new-host-key', '--known-hosts', path.join(profile, 'known_hosts')])
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await host?.stop()
    rmSync(profile, { recursive: true, force: true })
    rmSync(calls, { recursive: true, force: true })
  })

  async function openInstance() {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="watchdog-card"]')
  }

  it('en: connects, installs the watchdog and reads its decisions back', async () => {
    await openInstance()
    await s.click('[data-testid="instance-connect"]')
    await s.waitFor('[data-testid="connect-where"]')
    await s.type('[data-testid="ssh-command"]', host.sshCommand)
    await s.click('[data-testid="connect-next"]')
    await s.waitFor('[data-testid="connect-login"]')
    await s.click('[data-testid="auth-key"]')
    await s.select('[data-testid="key-choice"]', '__custom__')
    await s.type('[data-testid="key-path"]', host.clientKey)
    await s.click('[data-testid="connect-next"]')
    await s.waitFor('[data-testid="connect-test"]')
    await s.click('[data-testid="connect-run"]')
    await s.click('[data-testid="fingerprint-accept"]')
    await s.waitFor('[data-testid="connect-success"]', { timeoutMs: 30_000 })

    await s.click('[data-testid="instance-back"]')
    await s.waitFor('[data-testid="watchdog-card"]')
    await waitFor(async () => (await s.text('[data-testid="watchdog-state"]')).length > 0, { timeoutMs: 30_000, what: 'the watchdog status' })
    assert.match(await s.text('[data-testid="watchdog-state"]'), /No watchdog/)
    assert.equal(await (await s.find('[data-testid="watchdog-idle"]')).property('value'), '30', 'the defaults are shown')
    assert.equal(await (await s.find('[data-testid="watchdog-idle-unit"]')).property('value'), 'min', 'in minutes')
    assert.match(await s.text('[data-testid="watchdog-card"] .sentences'), /Power off after[\s\S]*with everything idle/)
    await screenshot(s, 'en/59-watchdog-settings')

    await s.type('[data-testid="watchdog-interval"]', '2')
    await s.select('[data-testid="watchdog-interval-unit"]', 's')
    await s.click('[data-testid="watchdog-card"] .advanced summary')
    await s.scrollTo('[data-testid="watchdog-power-off"]')
    await screenshot(s, 'en/59-watchdog-advanced')
    await s.type('[data-testid="watchdog-power-off"]', standIn)
    await s.click('[data-testid="watchdog-install"]')
    // Running: armed, or, once a sample finds a signal it cannot read, "Not protecting".
    await waitFor(async () => /^(Armed · |Not protecting$)/.test(await s.text('[data-testid="watchdog-state"]')), {
      timeoutMs: 30_000,
      what: 'the watchdog running',
    })
    assert.match(await s.text('[data-testid="watchdog-boot"]'), /restart/)
    // A few samples later the decisions are there: the default 10 minutes of grace, and this
    // host has no nvidia-smi, so the GPU reads as unreadable (busy) and nothing powers off.
    await waitFor(
      async () => {
        await s.click('[data-testid="watchdog-refresh"]')
        return (await s.findAll('[data-testid="watchdog-unreadable"]')).length > 0
      },
      { timeoutMs: 30_000, intervalMs: 2000, what: 'the unreadable-GPU warning' },
    )
    assert.match(await s.text('[data-testid="watchdog-unreadable"]'), /cannot read GPU, so it will never power this instance off/)
    // Never a green "Armed" above "will never power this instance off".
    assert.equal(await s.text('[data-testid="watchdog-state"]'), 'Not protecting')
    assert.match(await s.text('[data-testid="watchdog-readings"]'), /GPU cannot be read/)
    const raw = offenders(await screenText(s), 'en').filter((problem) => problem.startsWith('raw status'))
    assert.deepEqual(raw, [], 'no raw watchdog status on screen')
    await s.click('[data-testid="watchdog-card"] .decisions summary')
    const log = await s.text('[data-testid="watchdog-log"]')
    assert.match(log, /Started/)
    assert.match(log, /Grace/)
    assert.equal(existsSync(callFile), false, 'an unreadable GPU never powers off')
    await screenshot(s, 'en/60-watchdog-running')

    await s.click('[data-testid="watchdog-remove"]')
    await waitFor(async () => /Removed/.test(await s.text('[data-testid="watchdog-state"]')), { timeoutMs: 30_000, what: 'the watchdog removed' })
    await screenshot(s, 'en/61-watchdog-removed')
  })

  it('en: the idle time is a number with its unit: letters are not taken, the stepper counts', async () => {
    await s.type('[data-testid="watchdog-idle"]', 'soon')
    await s.click('[data-testid="watchdog-card"] .sentences')
    assert.equal(await (await s.find('[data-testid="watchdog-idle"]')).property('value'), '30', 'text that is not a number leaves the value')
    await s.click('[data-testid="watchdog-card"] .sentences p:first-child button[aria-label="+"]')
    assert.equal(await (await s.find('[data-testid="watchdog-idle"]')).property('value'), '31')
    await s.click('[data-testid="watchdog-card"] .sentences p:first-child button[aria-label="−"]')
    assert.equal(await (await s.find('[data-testid="watchdog-idle"]')).property('value'), '30')
    assert.match(await s.text('[data-testid="watchdog-state"]'), /Removed|No watchdog/)
  })

  it('en: the Stop now dialog says what will run', async () => {
    await s.click('[data-testid="action-stop"]')
    await s.waitFor('[data-testid="stop-dialog"] [data-testid="stop-command"]')
    assert.equal(await (await s.find('[data-testid="stop-command"]')).property('value'), 'shutdown -h now', "the preset's command")
    await screenshot(s, 'en/62-stop-dialog')
    await s.click('[data-testid="stop-cancel"]')
  })

  it('zh-CN: the watchdog card, then Stop now powers off and records the stop once confirmed', async () => {
    await switchLanguage(s, 'zh-CN')
    await openInstance()
    await waitFor(async () => (await s.text('[data-testid="watchdog-state"]')).length > 0, { timeoutMs: 30_000, what: 'the watchdog status' })
    assert.match(await s.text('[data-testid="watchdog-card"] .sentences'), /全部空闲[\s\S]*后关机/)
    assert.equal(await s.execute(`return document.querySelector('[data-testid="watchdog-idle-unit"]').selectedOptions[0].textContent`), '分钟')
    await s.scrollTo('[data-testid="watchdog-card"]')
    await screenshot(s, 'zh-CN/60-watchdog-card')

    await s.click('[data-testid="action-stop"]')
    await s.waitFor('[data-testid="stop-dialog"] [data-testid="stop-command"]')
    await s.type('[data-testid="stop-command"]', standIn)
    await screenshot(s, 'zh-CN/62-stop-dialog')
    await s.click('[data-testid="stop-confirm"]')
    // The "machine": once its power-off command ran, it goes down.
    await waitFor(() => existsSync(callFile), { timeoutMs: 30_000, what: 'the power-off stand-in to run' })
    assert.equal(readFileSync(callFile, 'utf8'), 'off\n')
    assert.match(await s.text('[data-testid="page-title"]'), new RegExp(INSTANCE))
    await host.stop()
    host = null
    await waitFor(async () => (await (await s.find('[data-testid="screen-instance"] [data-testid="state"]')).attribute('data-state')) === 'stopped', {
      timeoutMs: 60_000,
      what: 'the rental recorded as stopped',
    })
    await screenshot(s, 'zh-CN/63-stopped')
    assert.match(await s.text('[data-testid="screen-instance"] [data-testid="state"]'), /已关机/)
  })
})

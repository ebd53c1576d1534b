// The keeper in the real window, against the AutoDL stand-in (tests/provider-standin) and a real
// Secret Service: the stopped instance imported from the account shows its clean-up deadline; a
// power-on hunt meets "no stock" twice (AutoDL's own words), keeps trying, and the third try powers
// it on; the instance it brought up is followed to Connect and Verify (or "not now"). Screenshots of
// the hunting and succeeded card in English and Chinese.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startStandin } from './lib/provider-standin.mjs'
import { launchApp, screenshot } from './lib/app.mjs'
import { startSecretService } from './lib/secret-service.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

const KEY = 'autodl-e2e-token-4711'

describe('the keeper', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-keeper-'))
  let app
  let s
  let standin
  let secrets

  before(async () => {
    standin = await startStandin('autodl', KEY)
    const now = Math.floor(Date.now() / 1000)
    await standin.control('POST', 'instances', [
      { id: 'ad-4090', name: 'lab-4090', state: 'stopped', gpu: 'RTX 4090', count: 1, price: '2.28', created: now - 3 * 86400 },
    ])
    secrets = await startSecretService()
    app = await launchApp({ profile, language: 'en_US', env: { ...secrets.env, LEASEHOLD_AUTODL_API_URL: standin.base } })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    standin?.stop()
    await secrets?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  it('en: the stopped AutoDL instance shows the day AutoDL wipes it', async () => {
    await goTo(s, 'settings')
    await s.select('[data-testid="account-provider"]', 'autodl')
    await s.type('[data-testid="account-key"]', KEY)
    await s.click('[data-testid="account-add"]')
    await s.waitFor('[data-testid="account-autodl-default"]', { timeoutMs: 30_000 })
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"][data-name="lab-4090"]')
    await s.waitFor('[data-testid="keeper-card"]')
    const deadline = await s.waitFor('[data-testid="keeper-deadline"]')
    const days = Number(await deadline.attribute('data-days'))
    assert.ok(days >= 14 && days <= 15, `AutoDL wipes after 15 days stopped; ${days} days left`)
    await s.scrollTo('[data-testid="keeper-card"]')
    await screenshot(s, 'keeper-deadline-en')
  })

  it('en: a hunt keeps asking through "no stock" and the third try powers it on', async () => {
    await standin.control('POST', 'script', { no_stock: 2 })
    await s.click('[data-testid="keeper-hunt-start"]')
    await waitFor(async () => /暂无库存|no stock/i.test(await s.text('[data-testid="keeper-card"]')), {
      timeoutMs: 30_000,
      what: 'the provider’s "no stock" shown while the hunt waits',
    })
    const state = await s.find('[data-testid="keeper-hunt-state"]')
    assert.equal(await state.attribute('data-state'), 'hunting')
    await s.scrollTo('[data-testid="keeper-card"]')
    await screenshot(s, 'keeper-hunting-en')
    await waitFor(async () => (await (await s.find('[data-testid="keeper-hunt-state"]')).attribute('data-state')) === 'on', {
      timeoutMs: 120_000,
      what: 'the hunt to power the instance on',
    })
    assert.match(await s.text('[data-testid="keeper-hunt-state"]'), /2\.28/)
    const powerOns = (await standin.control('GET', 'requests')).filter((r) => r.method === 'POST' && r.path.endsWith('power_on'))
    assert.equal(powerOns.length, 3, 'two refused for stock, the third powered it on, then no more')
    assert.deepEqual(await standin.control('GET', 'violations'), [])
    await waitFor(async () => /Running/i.test(await s.text('[data-testid="state"]')), { what: 'the ledger to show it running' })
    await s.scrollTo('[data-testid="keeper-card"]')
    await screenshot(s, 'keeper-on-en')
  })

  it('en: what the hunt powered on is followed to Connect and Verify, or left for later', async () => {
    const nudge = await s.waitFor('[data-testid="status-warning"][data-code="status.not_verified"]', { timeoutMs: 30_000 })
    assert.match(await nudge.text(), /The hunt got you the GPU/)
    await s.scrollTo('[data-testid="status-warning"][data-code="status.not_verified"]')
    await screenshot(s, 'keeper-follow-up-en')
    const next = (await s.findAll('[data-testid="follow-up-verify"]')).length ? 'verify' : 'connect'
    await s.click(`[data-testid="follow-up-${next}"]`)
    await s.waitFor(`[data-testid="${next}"]`)
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"][data-name="lab-4090"]')
    await s.waitFor('[data-testid="status-warning"][data-code="status.not_verified"]')
  })

  it('zh-CN: the same card in Chinese', async () => {
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"][data-name="lab-4090"]')
    await s.waitFor('[data-testid="keeper-card"]')
    assert.match(await s.text('[data-testid="keeper-hunt-state"]'), /2\.28/)
    await s.scrollTo('[data-testid="keeper-card"]')
    await screenshot(s, 'keeper-on-zh')
    assert.match(await s.text('[data-testid="status-warning"][data-code="status.not_verified"]'), /环境检测/)
    await s.click('[data-testid="follow-up-later"]')
    await waitFor(async () => (await s.findAll('[data-testid="status-warning"][data-code="status.not_verified"]')).length === 0, {
      what: '"Not now" to take the nudge away',
    })
  })
})

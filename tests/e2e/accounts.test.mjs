// Provider accounts in the real window, against the RunPod stand-in (tests/provider-standin) and a
// real Secret Service: add the account with its key in Settings, the pod nobody recorded appears
// in Rentals marked as new, stop it from the instance page through the provider's API, see the
// stop in the timeline and the reconcile card. Screenshots in English and Chinese.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startStandin } from './lib/provider-standin.mjs'
import { launchApp, screenshot } from './lib/app.mjs'
import { keychainHas, startSecretService } from './lib/secret-service.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

const KEY = 'rp-e2e-key-4711'


describe('provider accounts', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-accounts-'))
  let app
  let s
  let standin
  let secrets

  before(async () => {
    standin = await startStandin('runpod', KEY)
    const now = Math.floor(Date.now() / 1000)
    await standin.control('POST', 'instances', [
      { id: 'pod7x', name: 'forgotten-4090', state: 'running', price: '0.69', created: now - 7200, started: now - 7200, ssh_port: 2299 },
    ])
    await standin.control('POST', 'script', { charges: { pod7x: { [new Date().toISOString().slice(0, 10)]: '1.40' } } })
    secrets = await startSecretService()
    app = await launchApp({
      profile,
      language: 'en_US',
      env: { ...secrets.env, LEASEHOLD_RUNPOD_API_URL: standin.base },
    })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    standin?.stop()
    await secrets?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  it('en: a refused key saves nothing; the right one imports the pod nobody recorded', async () => {
    await goTo(s, 'settings')
    await s.waitFor('[data-testid="settings-accounts"]')
    await s.select('[data-testid="account-provider"]', 'runpod')
    await s.type('[data-testid="account-key"]', 'wrong-key')
    await s.click('[data-testid="account-add"]')
    await waitFor(async () => /refused the API key/.test(await s.text('[data-testid="settings-accounts"]')), {
      what: 'the refusal in RunPod’s words',
    })
    assert.match(await s.text('[data-testid="settings-accounts"]'), /invalid api key/)
    await s.type('[data-testid="account-key"]', KEY)
    await s.click('[data-testid="account-add"]')
    await s.waitFor('[data-testid="account-runpod-default"]', { timeoutMs: 30_000 })
    await waitFor(async () => /1 instance/.test(await s.text('[data-testid="account-runpod-default"]')), {
      what: 'the imported pod counted on the account',
    })
    assert.ok(await keychainHas(secrets.address, 'provider-key:runpod:default'), 'the key is in the keychain')
    await screenshot(s, 'accounts-settings-en')

    await goTo(s, 'rentals')
    await s.waitFor('[data-testid="rental-new"]')
    await s.waitFor('[data-testid="rental-card"][data-name="forgotten-4090"]')
    assert.match(await s.text('[data-testid="rental-synced"]'), /RunPod/)
    await screenshot(s, 'accounts-rentals-en')
  })

  it('en: the instance page stops it through RunPod and shows the ledger beside the charges', async () => {
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="provider-card"]')
    assert.match(await s.text('[data-testid="provider-new"]'), /nobody had recorded it/)
    await s.click('[data-testid="provider-keep"]')
    await s.waitGone('[data-testid="provider-new"]')
    await s.click('[data-testid="provider-off"]')
    await s.waitFor('[data-testid="provider-done"]', { timeoutMs: 60_000 })
    await waitFor(async () => /Stopped/i.test(await s.text('[data-testid="state"]')), {
      what: 'the stop in the ledger',
    })
    const requests = await standin.control('GET', 'requests')
    const stop = requests.find((r) => r.method === 'POST' && r.path === '/v2/pods/pod7x/action')
    assert.deepEqual(stop?.body, { action: 'stop' })
    assert.equal(stop?.key, 'ok')
    await s.click('[data-testid="reconcile-load"]')
    await s.waitFor('[data-testid="reconcile-table"]')
    assert.match(await s.text('[data-testid="reconcile-table"]'), /\$1\.40/)
    await screenshot(s, 'accounts-instance-en')
    assert.deepEqual(await standin.control('GET', 'violations'), [])
  })

  it('zh-CN: the same settings and card in Chinese', async () => {
    await switchLanguage(s, 'zh-CN')
    await s.waitFor('[data-testid="settings-accounts"]')
    assert.match(await s.text('[data-testid="settings-accounts"]'), /平台账号/)
    await screenshot(s, 'accounts-settings-zh')
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="provider-card"]')
    assert.match(await s.text('[data-testid="provider-card"]'), /平台侧状态/)
    await screenshot(s, 'accounts-instance-zh')
  })
})

// The keeper's Vast.ai card in the real window, against the Vast.ai stand-in (tests/provider-standin):
// an interruptible rental that was outbid reads "Outbid" in the header, with its storage still
// billing and Raise the bid as the first action; the bid is raised within the cap the user set (the
// stand-in checks the documented call) and wins the GPU back; a host's pending price increase is
// shown with the old and new price and rejected. Both languages, with screenshots.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startStandin } from './lib/provider-standin.mjs'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { startSecretService } from './lib/secret-service.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const KEY = 'vast-e2e-key-5001'
const now = () => Math.floor(Date.now() / 1000)
const SPOT = () => ({ id: '5001', name: 'spot', state: 'stopped', price: '0.12', gpu: 'RTX 4090', bid: 0.25, min_bid: 0.31, outbid: true, created: now() - 3600 })

describe('the keeper on Vast.ai', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-keeper-vast-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s
  let standin
  let secrets
  let cli

  before(async () => {
    standin = await startStandin('vast', KEY)
    await standin.control('POST', 'instances', [SPOT()])
    secrets = await startSecretService()
    const env = { ...secrets.env, LEASEHOLD_VAST_API_URL: standin.base }
    app = await launchApp({ profile, language: 'en_US', env })
    s = app.session
    await finishFirstRun(s)
    cli = (...args) =>
      execFileSync(CLI, [...args, '--db', db], { env: { ...process.env, ...env, HOME: profile, VAST_KEY: KEY }, encoding: 'utf8' })
    // The account is linked and synced the way a script would (Settings → Accounts has its own test).
    cli('account', 'add', 'vast', '--api-key-env', 'VAST_KEY')
    cli('account', 'sync')
  })

  after(async () => {
    await app?.close()
    standin?.stop()
    await secrets?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  async function openSpot() {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"][data-name="spot"]')
    await s.waitFor('[data-testid="keeper-outbid"]', { timeoutMs: 30_000 })
    await waitFor(async () => (await (await s.find('[data-testid="state"]')).attribute('data-state')) === 'outbid', {
      what: 'the header to say outbid',
    })
  }

  it('en: the outbid rental says so in its header, its storage still billing, Raise the bid first', async () => {
    await openSpot()
    assert.match(await s.text('[data-testid="state"]'), /Outbid/)
    const warning = await s.text('[data-testid="status-warning"][data-code="status.outbid"]')
    assert.match(warning, /storage still bills \$0\.12\/h/)
    assert.match(warning, /\$0\.31/)
    const first = await s.find('[data-testid^="action-"]')
    assert.equal(await first.attribute('data-testid'), 'action-raise_bid', 'raising the bid is the first action')
    assert.match(await s.text('[data-testid="keeper-outbid"]'), /Outbid — stopped, storage still billing \$0\.12/)
    await screenshot(s, 'en/95-keeper-outbid')
  })

  it('en: the bid is raised within the cap and wins the GPU back', async () => {
    await s.click('[data-testid="action-raise_bid"]')
    await waitFor(async () => s.execute('return document.activeElement?.dataset.testid === "keeper-bid-price"'), {
      what: 'Raise the bid to bring the bid field into view',
    })
    await s.type('[data-testid="keeper-bid-cap"]', '0.40')
    await s.click('[data-testid="keeper-bid-cap-save"]')
    await waitFor(async () => /\$0\.40/.test(await s.text('[data-testid="keeper-bid-cap-line"]')), { what: 'the cap saved' })
    // Above the cap nothing can be sent.
    await s.type('[data-testid="keeper-bid-price"]', '0.50')
    assert.equal(await (await s.find('[data-testid="keeper-bid-raise"]')).property('disabled'), true)
    await s.type('[data-testid="keeper-bid-price"]', '0.35')
    await s.click('[data-testid="keeper-bid-raise"]')
    await s.waitFor('[data-testid="keeper-bid-done"]', { timeoutMs: 30_000 })
    const puts = (await standin.control('GET', 'requests')).filter((r) => r.method === 'PUT')
    assert.deepEqual(
      puts.map((r) => [r.path, r.body]),
      [['/api/v0/instances/bid_price/5001/', { client_id: 'me', price: 0.35 }]],
    )
    assert.deepEqual(await standin.control('GET', 'violations'), [])
    await waitFor(async () => (await (await s.find('[data-testid="state"]')).attribute('data-state')) !== 'outbid', {
      timeoutMs: 30_000,
      what: 'the header to stop saying outbid once the bid won',
    })
    await screenshot(s, 'en/96-keeper-bid-raised')
  })

  it('zh-CN: outbid again, and a host’s price rise rejected', async () => {
    await standin.control('POST', 'instances', [SPOT()])
    await standin.control('POST', 'script', {
      price_increases: [
        {
          pending_price_increase_id: 77,
          contract_id: 5001,
          old_gpu_costpersec: 0.0001,
          old_disk_ram_costpersec: 0.0,
          new_gpu_costpersec: 0.0002,
          new_disk_ram_costpersec: 0.0,
        },
      ],
    })
    await switchLanguage(s, 'zh-CN')
    await openSpot()
    assert.match(await s.text('[data-testid="state"]'), /出价被超过/)
    assert.match(await s.text('[data-testid="status-warning"][data-code="status.outbid"]'), /存储仍按/)
    const increase = await s.waitFor('[data-testid="keeper-price-increase"]', { timeoutMs: 30_000 })
    assert.match(await increase.text(), /0\.36/)
    assert.match(await increase.text(), /0\.72/)
    await s.scrollTo('[data-testid="keeper-card"]')
    await screenshot(s, 'zh-CN/95-keeper-outbid')
    await s.click('[data-testid="keeper-increase-reject"]')
    await s.waitFor('[data-testid="keeper-increase-done"]', { timeoutMs: 30_000 })
    const answered = (await standin.control('GET', 'requests')).filter((r) => r.method === 'PUT' && r.path.includes('price-increase'))
    assert.deepEqual(
      answered.map((r) => [r.path, r.body]),
      [['/api/v0/instances/reject-price-increase/', { pending_price_increase_id: 77 }]],
    )
    assert.deepEqual(await standin.control('GET', 'violations'), [])
  })
})

// The instance's one status in the real window: each state's header (the chip, the line with
// what it costs or may cost, only the actions that make sense, the first one filled), the held
// price card and its Accept, the 8-GPU card and its one click, and the watchdog that is "Not
// protecting". What other parts of Leasehold would have recorded (a sync's link, a look after a
// stop, the monitor's minutes, a watchdog look) is written straight into the database first.
// Screenshots in English and Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')

/** A time `minutes` from now as the store writes it (RFC 3339, whole minutes, +00:00). */
function at(minutes) {
  const date = new Date(Date.now() + minutes * 60_000)
  date.setUTCSeconds(0, 0)
  return date.toISOString().replace('.000Z', '+00:00')
}

// name → [state, what its header line says in English, the actions shown in order]
const HEADERS = {
  'created-box': ['created', /Created — is it on\? It may be billing (?:CN)?¥2\.50\/h/, ['record_start', 'power_on', 'release']],
  'running-box': ['running', /Running · (?:CN)?¥2\.50\/h/, ['stop', 'release']],
  'nogpu-box': ['running_no_gpu', /No-GPU mode · (?:CN)?¥0\.20\/h/, ['stop', 'record_start', 'release']],
  'stopped-box': ['stopped', /Stopped · (?:CN)?¥0\.10\/h while stopped/, ['power_on', 'record_start', 'release']],
  'unconfirmed-box': ['stop_unconfirmed', /Stop not confirmed — it may still cost (?:CN)?¥2\.50\/h/, ['check_again', 'record_start', 'release']],
  'missing-pod': ['missing_at_provider', /RunPod no longer lists it .* it may still cost \$0\.69\/h/, ['release', 'record_stop']],
  'released-box': ['released', /^Released$/, []],
  'listed-pod': ['released_but_listed', /Released, but RunPod still lists it — it may still cost \$0\.69\/h/, []],
}

describe('the instance status', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-status-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s

  const cli = (...args) => execFileSync(CLI, [...args, '--db', db], { encoding: 'utf8' })
  const sql = (text) => execFileSync('sqlite3', [db, text], { encoding: 'utf8' })
  const id = (name) => `(SELECT id FROM instances WHERE name = '${name}')`
  const link = (name, state, seen, extra = {}) => {
    const columns = ['instance_id', 'account_id', 'remote_id', 'remote_state', 'seen_at', ...Object.keys(extra)]
    const values = [id(name), '1', `'${name}-id'`, `'${state}'`, `'${seen}'`, ...Object.values(extra).map((v) => `'${v}'`)]
    sql(`INSERT INTO account_instances (${columns.join(', ')}) VALUES (${values.join(', ')})`)
  }

  before(async () => {
    const add = (name, ...rest) =>
      cli('instance', 'add', name, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--at', at(-120), ...rest)
    const pod = (name) =>
      cli('instance', 'add', name, '--provider', 'runpod', '--gpu', 'RTX 4090', '--count', '1', '--price', '0.69', '--currency', 'USD', '--at', at(-120))
    add('created-box', '--billing-starts', 'running')
    add('running-box')
    cli('instance', 'start', 'running-box', '--at', at(-60))
    add('nogpu-box', '--no-gpu-rate', '0.2')
    cli('instance', 'no-gpu', 'nogpu-box', '--at', at(-60))
    add('stopped-box', '--stopped-billing', 'storage:0.10')
    cli('instance', 'start', 'stopped-box', '--at', at(-60))
    cli('instance', 'stop', 'stopped-box', '--at', at(-30))
    add('unconfirmed-box')
    cli('instance', 'start', 'unconfirmed-box', '--at', at(-60))
    cli('instance', 'stop', 'unconfirmed-box', '--at', at(-30))
    add('released-box')
    cli('instance', 'release', 'released-box', '--at', at(-30))
    pod('missing-pod')
    cli('instance', 'start', 'missing-pod', '--at', at(-60))
    pod('listed-pod')
    cli('instance', 'release', 'listed-pod', '--at', at(-30))
    pod('held-pod')
    cli('instance', 'start', 'held-pod', '--at', at(-60))
    for (const name of ['eight-box', 'eight-zh']) {
      add(name)
      cli('instance', 'start', name, '--at', at(-60))
    }

    // A look after the stop found it still answering.
    sql(`INSERT INTO stop_checks (instance_id, checked_at, answered, via) VALUES (${id('unconfirmed-box')}, '${at(-29)}', 1, 'ssh')`)
    // The RunPod account's links, as a sync would have left them.
    sql(`INSERT INTO provider_accounts (id, provider, label, added_at) VALUES (1, 'runpod', 'main', '${at(-200)}')`)
    link('missing-pod', 'missing', at(-10), { missing_since: at(-10) })
    link('listed-pod', 'running', at(-2))
    link('held-pod', 'running', at(-2), { held_price_per_hour: '500.00', held_gpu_count: '1', held_currency: 'USD', held_since: at(-5) })
    // The monitor saw eight GPUs on a rental recorded with one, these last minutes.
    for (const name of ['eight-box', 'eight-zh']) {
      for (let minute = -4; minute <= -1; minute++) {
        for (let gpu = 0; gpu < 8; gpu++) {
          sql(
            `INSERT INTO gpu_minutes (instance_id, gpu_index, minute, samples, utilization_avg, utilization_max, memory_used_max_mib, memory_total_mib)
             VALUES (${id(name)}, ${gpu}, '${at(minute)}', 60, 95.0, 99, 20000, 24576)`,
          )
        }
      }
    }
    // The watchdog's last status read: it cannot read the GPU, so it never powers off.
    sql(
      `INSERT INTO watchdog_looks (instance_id, looked_at, installed, running, phase, unreadable)
       VALUES (${id('running-box')}, '${at(-1)}', 1, 1, 'watching', 'gpu')`,
    )
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  async function openInstance(name) {
    await goTo(s, 'rentals')
    const card = `[data-testid="rental-card"][data-name="${name}"]`
    const row = `[data-testid="history-row"][data-name="${name}"]`
    await waitFor(async () => (await s.findAll(`${card}, ${row}`)).length > 0, { what: `${name} on the Rentals page` })
    // A history row is clicked on its name cell (WebKit does not click a <tr> itself).
    const target = (await s.findAll(card)).length > 0 ? card : `${row} td.name`
    await s.scrollTo(target)
    await s.click(target)
    await waitFor(async () => (await s.text('[data-testid="page-title"]')) === name, { what: `the page of ${name}` })
    await s.waitFor('[data-testid="state-line"]')
  }

  async function shownActions() {
    const buttons = await s.findAll('header [data-testid^="action-"]')
    return Promise.all(buttons.map(async (b) => (await b.attribute('data-testid')).replace('action-', '')))
  }

  it('en: the Rentals page shows each state from the status', async () => {
    await goTo(s, 'rentals')
    const chip = (name) => `[data-testid="rental-card"][data-name="${name}"] [data-testid="state"]`
    await s.waitFor(chip('listed-pod'))
    assert.equal(await (await s.find(chip('unconfirmed-box'))).attribute('data-state'), 'stop_unconfirmed')
    assert.equal(await (await s.find(chip('listed-pod'))).attribute('data-state'), 'released_but_listed', 'still listed: among the active ones')
    assert.match(await s.text(`[data-testid="rental-card"][data-name="unconfirmed-box"] [data-testid="may-cost"]`), /may cost (?:CN)?¥2\.50\/h/)
    assert.equal((await s.findAll('[data-testid="history-row"][data-name="released-box"]')).length, 1)
    await screenshot(s, 'en/90-status-rentals')
  })

  for (const [name, [state, line, actions]] of Object.entries(HEADERS)) {
    it(`en: ${name}'s header reads ${state}`, async () => {
      await openInstance(name)
      assert.equal(await (await s.find('header [data-testid="state"]')).attribute('data-state'), state)
      assert.match(await s.text('[data-testid="state-line"]'), line)
      assert.deepEqual(await shownActions(), actions)
      if (actions.length > 0 && actions[0] !== 'release') {
        const first = await s.find(`header [data-testid="action-${actions[0]}"]`)
        assert.match(await first.attribute('class'), /primary/, 'the first action is the filled one')
      }
      if (state === 'created') assert.equal((await s.findAll('[data-testid="action-stop"]')).length, 0, 'never Stop on created')
      await screenshot(s, `en/91-status-${state}`)
    })
  }

  it('en: the watchdog that cannot read the GPU is "Not protecting", in red', async () => {
    await openInstance('running-box')
    const warning = await s.waitFor('[data-testid="status-warning"][data-code="status.watchdog_not_protecting"]')
    assert.match(await warning.text(), /The watchdog cannot read GPU: it counts that as busy and will never power this instance off/)
    const line = await s.waitFor('[data-testid="watchdog-state"]')
    await waitFor(async () => (await s.text('[data-testid="watchdog-state"]')) === 'Not protecting', { what: 'Not protecting' })
    assert.match(await line.attribute('class'), /\boff\b/, 'red')
    await s.scrollTo('[data-testid="watchdog-card"]')
    await screenshot(s, 'en/92-status-watchdog-not-protecting')
  })

  it('en: the 8-GPU card updates the rules in one click', async () => {
    await openInstance('eight-box')
    const card = await s.waitFor('[data-testid="status-warning"][data-code="status.gpu_count_differs"]')
    assert.match(await card.text(), /This machine has 8 GPUs; the rental says 1 — update to 8 \((?:CN)?¥20\.00\/h\)\?/)
    await screenshot(s, 'en/93-status-eight-gpus')
    await s.click('[data-testid="match-gpu-count"]')
    await s.waitGone('[data-testid="status-warning"][data-code="status.gpu_count_differs"]')
    await waitFor(async () => /(?:CN)?¥20\.00\/h/.test(await s.text('[data-testid="state-line"]')), { what: 'the new hourly price' })
    assert.match(cli('instance', 'show', 'eight-box', '--json'), /"gpu_count": ?8/)
  })

  it('en: the held price card accepts the new price', async () => {
    await openInstance('held-pod')
    const card = await s.waitFor('[data-testid="status-warning"][data-code="status.price_held"]')
    assert.match(await card.text(), /RunPod now bills \$500\.00\/h \(the rules say \$0\.69\/h\) — accept\?/)
    await screenshot(s, 'en/94-status-price-held')
    await s.click('[data-testid="accept-price"]')
    await s.waitGone('[data-testid="status-warning"][data-code="status.price_held"]')
    await waitFor(async () => /\$500\.00\/h/.test(await s.text('[data-testid="state-line"]')), { what: 'the accepted price' })
  })

  it('zh-CN: each state, the watchdog and the cards read as native copy', async () => {
    await switchLanguage(s, 'zh-CN')
    sql(`UPDATE account_instances SET held_price_per_hour = '300.00', held_currency = 'USD', held_since = '${at(-1)}' WHERE instance_id = ${id('held-pod')}`)
    for (const [name, [state]] of Object.entries(HEADERS)) {
      await openInstance(name)
      assert.equal(await (await s.find('header [data-testid="state"]')).attribute('data-state'), state)
      const line = await s.text('[data-testid="state-line"]')
      assert.doesNotMatch(line.replace(/RunPod/g, ''), /[A-Za-z]{3,}/, `${name}: no English left in "${line}"`)
      await screenshot(s, `zh-CN/91-status-${state}`)
    }
    await openInstance('running-box')
    await waitFor(async () => (await s.text('[data-testid="watchdog-state"]')) === '未起保护作用', { what: '未起保护作用' })
    assert.match(await s.text('[data-testid="status-warning"][data-code="status.watchdog_not_protecting"]'), /看门狗读不到/)
    await s.scrollTo('[data-testid="watchdog-card"]')
    await screenshot(s, 'zh-CN/92-status-watchdog-not-protecting')
    await openInstance('held-pod')
    const held = await s.waitFor('[data-testid="status-warning"][data-code="status.price_held"]')
    assert.match(await held.text(), /RunPod 现在按 US\$300\.00\/小时 计费/)
    await screenshot(s, 'zh-CN/94-status-price-held')
    await openInstance('eight-zh')
    const eight = await s.waitFor('[data-testid="status-warning"][data-code="status.gpu_count_differs"]')
    assert.match(await eight.text(), /这台实例有 8 个 GPU，租用记录写的是 1 个——要更新为 8 个（¥20\.00\/小时）吗？/)
    assert.equal(await s.text('[data-testid="match-gpu-count"]'), '更新为 8 个 GPU')
    await screenshot(s, 'zh-CN/93-status-eight-gpus')
  })
})

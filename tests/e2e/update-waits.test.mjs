// An update offered while a backup downloads waits for it: a real sshd behind a link the test can
// stall (so the backup is still running, deterministically), a stand-in update server that offers
// 99.0.0 only once the backup has started. The dialog says what it waits for; "Install and
// restart" waits; once the link flows again the backup finishes with the file intact, and only then
// is the download fetched and checked (the stand-in's package is tampered, so it is refused and
// nothing installed). Screenshots in both languages.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { startCutLink } from './lib/cutlink.mjs'
import { connectWithKey, finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { freePort } from './lib/net.mjs'
import { E2E_USER, startSshd } from './lib/sshd.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const TAURI = path.resolve('ui/node_modules/.bin/tauri')
const WORK = `e2e-update-waits-${process.pid}`
const VERSION = '99.0.0'

function asUser(script) {
  return execFileSync('su', ['-', E2E_USER, '-c', script], { encoding: 'utf8' })
}

describe('an update waits for a running backup', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-update-waits-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s
  let host
  let link
  let home
  let server
  let offering = false
  let downloads = 0

  before(async () => {
    for (const name of ['gpu-update-en', 'gpu-update-zh']) {
      execFileSync(CLI, ['instance', 'add', name, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
      execFileSync(CLI, ['instance', 'start', name, '--db', db])
    }
    host = await startSshd()
    link = await startCutLink(host.port)
    home = asUser('printf %s "$HOME"')
    asUser(`set -e; rm -rf ~/${WORK}; mkdir -p ~/${WORK}/run; head -c 4000000 /dev/urandom > ~/${WORK}/run/model.safetensors`)

    // The package served is not the one signed: whenever the download happens, it is refused.
    const signed = path.join(profile, `Leasehold_${VERSION}_amd64.deb`)
    writeFileSync(signed, 'the genuine package')
    const key = path.join(profile, 'update.key')
    execFileSync(TAURI, ['signer', 'generate', '--ci', '-p', '', '-w', key], { stdio: 'ignore' })
    execFileSync(TAURI, ['signer', 'sign', '--app-version', VERSION, signed], {
      env: { ...process.env, TAURI_SIGNING_PRIVATE_KEY: readFileSync(key, 'utf8').trim(), TAURI_SIGNING_PRIVATE_KEY_PASSWORD: '' },
      stdio: 'ignore',
    })
    const port = await freePort()
    const manifest = JSON.stringify({
      version: VERSION,
      pub_date: '2026-12-01T08:00:00Z',
      notes: 'Stop now works again with RunPod REST v2.',
      platforms: {
        'linux-x86_64': { url: `http://127.0.0.1:${port}/Leasehold_${VERSION}_amd64.deb`, signature: readFileSync(`${signed}.sig`, 'utf8').trim() },
      },
    })
    server = http.createServer((request, response) => {
      if (request.url === '/latest.json' && offering) response.end(manifest)
      else if (request.url.endsWith('.deb')) {
        downloads += 1
        response.end('a tampered package')
      } else response.writeHead(404).end()
    })
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))
    app = await launchApp({
      profile,
      language: 'en_US',
      env: { LEASEHOLD_UPDATE_URLS: `http://127.0.0.1:${port}/latest.json`, LEASEHOLD_UPDATE_PUBKEY: readFileSync(`${key}.pub`, 'utf8').trim() },
    })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    server?.close()
    await link?.stop()
    await host?.stop()
    try {
      asUser(`rm -rf ~/${WORK}`)
    } catch {
      // the user's home is shared by the e2e tests; leaving the folder behind is harmless
    }
    rmSync(profile, { recursive: true, force: true })
  })

  async function connectThroughTheLink(name) {
    await goTo(s, 'rentals')
    await s.click(`[data-testid="rental-card"][data-name="${name}"]`)
    await connectWithKey(s, `ssh -p ${link.port} ${E2E_USER}@127.0.0.1`, host.clientKey)
    await s.click('[data-testid="instance-back"]')
  }

  /** Start a backup of the weights with the link stalled, so it is still running afterwards. */
  async function startStalledBackup(name, dir) {
    await s.waitFor('[data-testid="backup-status"] [data-testid="last-backup"]')
    await s.click('[data-testid="open-backup"]')
    const weight = `[data-testid="weight-check"][data-path="${home}/${WORK}/run/model.safetensors"]`
    await s.waitFor(weight, { timeoutMs: 120_000 })
    await s.type('[data-testid="backup-dir"]', dir)
    link.stall()
    await s.click('[data-testid="backup-run"]')
    await s.waitFor('[data-testid="backup-cancel"]')
  }

  async function backupFinishes(dir) {
    link.flow()
    const local = path.join(dir, 'model.safetensors')
    await waitFor(async () => existsSync(local) && readFileSync(local).length === 4_000_000, {
      timeoutMs: 120_000,
      what: 'the backup to finish once the link flows',
    })
    const sum = (f) => createHash('sha256').update(readFileSync(f)).digest('hex')
    assert.equal(sum(local), sum(`${home}/${WORK}/run/model.safetensors`), 'the backup is whole')
  }

  it('en: Install and restart waits for the backup, then checks the download', async () => {
    await connectThroughTheLink('gpu-update-en')
    const dir = path.join(profile, 'backup-en')
    await startStalledBackup('gpu-update-en', dir)
    offering = true
    await goTo(s, 'settings')
    await s.click('[data-testid="about-check"]')
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-install"]')
    assert.match(await s.text('[data-testid="update-busy"]'), /In progress: a backup\. The update will install once that has ended\./)
    await s.click('[data-testid="update-install"]')
    assert.match(await s.text('[data-testid="update-waiting"]'), /Waiting for a backup to end/)
    await screenshot(s, 'en/update-05-waits-for-backup')
    // Still waiting a moment later: nothing downloaded while the backup runs.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.equal(downloads, 0, 'nothing is downloaded while the backup runs')
    await backupFinishes(dir)
    const error = await s.waitFor('[data-testid="update-error"]', { timeoutMs: 60_000 })
    assert.equal(await error.attribute('data-code'), 'update.bad_signature')
    assert.equal(downloads, 1, 'downloaded once the backup ended')
    await s.click('[data-testid="update-later"]')
    await s.waitGone('dialog[open]')
  })

  it('zh-CN: the same wait in Chinese', async () => {
    offering = false
    await switchLanguage(s, 'zh-CN')
    // The update still pending is offered again in the new language: later.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    if ((await s.findAll('[data-testid="update-dialog"][open]')).length > 0) {
      await s.click('[data-testid="update-later"]')
      await s.waitGone('dialog[open]')
    }
    await connectThroughTheLink('gpu-update-zh')
    const dir = path.join(profile, 'backup-zh')
    await startStalledBackup('gpu-update-zh', dir)
    offering = true
    await goTo(s, 'settings')
    await s.click('[data-testid="about-check"]')
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-install"]')
    await s.click('[data-testid="update-install"]')
    await s.waitFor('[data-testid="update-waiting"]')
    await screenshot(s, 'zh-CN/update-05-waits-for-backup')
    await backupFinishes(dir)
    await s.waitFor('[data-testid="update-error"]', { timeoutMs: 60_000 })
    assert.equal(downloads, 2)
  })
})

// Self-update and the problem report, in both languages: a stand-in update server on loopback
// (the first endpoint down, the second answering) announces 99.0.0 with notes per language; the
// update dialog shows them; Settings → About shows the version, build date and channel and
// "Check now" opens the dialog again; the download's signature does not match the key the app
// trusts (a throwaway key made with the Tauri signer), so the install is refused and nothing
// changes. "Copy a problem report" shows a report without the key, password, token or host
// seeded into the log.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { freePort } from './lib/net.mjs'
import { waitFor } from './lib/webdriver.mjs'

const TAURI = path.resolve('ui/node_modules/.bin/tauri')
const VERSION = '99.0.0'
const SEEDED = ['rpa_SEEDEDKEY0123456789AB', 'Seeded-Pass-77', 'SEEDEDTOKEN42', 'gpu-seeded.autodl.com', '198.51.100.23']

/** A throwaway key pair from the Tauri signer, and the signature of `file` for VERSION. */
function signWithThrowawayKey(dir, file) {
  const key = path.join(dir, 'update.key')
  execFileSync(TAURI, ['signer', 'generate', '--ci', '-p', '', '-w', key], { stdio: 'ignore' })
  const privateKey = readFileSync(key, 'utf8').trim()
  execFileSync(TAURI, ['signer', 'sign', '--app-version', VERSION, file], {
    env: { ...process.env, TAURI_SIGNING_PRIVATE_KEY: privateKey, TAURI_SIGNING_PRIVATE_KEY_PASSWORD: '' },
    stdio: 'ignore',
  })
  return { publicKey: readFileSync(`${key}.pub`, 'utf8').trim(), signature: readFileSync(`${file}.sig`, 'utf8').trim() }
}

/** "Later", and wait until the modal dialog is gone (it would take the next click). */
async function later(s) {
  await s.click('[data-testid="update-later"]')
  await waitFor(async () => !(await s.execute('return document.querySelector(\'[data-testid="update-dialog"]\').open')), {
    what: 'the update dialog to close',
  })
}

describe('self-update and the problem report', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-update-'))
  let server
  let app
  let s
  const binaryBefore = statSync(BINARY).mtimeMs

  before(async () => {
    const installer = path.join(profile, 'Leasehold_99.0.0_amd64.deb')
    writeFileSync(installer, 'the genuine package')
    const { publicKey, signature } = signWithThrowawayKey(profile, installer)
    const port = await freePort()
    const manifest = JSON.stringify({
      version: VERSION,
      pub_date: '2026-12-01T08:00:00Z',
      notes: 'Stop now works again with RunPod REST v2.',
      notes_by_language: {
        en: 'Stop now works again with RunPod REST v2.',
        'zh-CN': '“立即关机”已改用 RunPod REST v2，重新可用。',
      },
      platforms: {
        'linux-x86_64': { url: `http://127.0.0.1:${port}/Leasehold_99.0.0_amd64.deb`, signature },
      },
    })
    // The file served is not the one signed: a tampered download.
    server = http.createServer((request, response) => {
      if (request.url === '/latest.json') response.end(manifest)
      else if (request.url.endsWith('.deb')) response.end('a tampered package')
      else response.writeHead(404).end()
    })
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))

    // A log from an earlier day, seeded with what must never reach a report.
    const logs = path.join(profile, 'data', 'leasehold', 'logs')
    mkdirSync(logs, { recursive: true })
    writeFileSync(
      path.join(logs, 'leasehold.2020-01-01.log'),
      [
        `2020-01-01T10:00:00Z INFO account_add: key="${SEEDED[0]}"`,
        `2020-01-01T10:00:01Z DEBUG team_connect: url=postgres://alice:${SEEDED[1]}@db.team.example:5432/ledger`,
        `2020-01-01T10:00:02Z DEBUG webhook: https://oapi.dingtalk.com/robot/send?access_token=${SEEDED[2]}`,
        `2020-01-01T10:00:03Z ERROR stop_now: ApiError { code: "stop.could_not_confirm", message: "no answer from root@${SEEDED[3]} (${SEEDED[4]})" }`,
        '',
      ].join('\n'),
    )

    const down = `http://127.0.0.1:${await freePort()}/latest.json`
    app = await launchApp({
      profile,
      language: 'en_US',
      env: { LEASEHOLD_UPDATE_URLS: `${down},http://127.0.0.1:${port}/latest.json`, LEASEHOLD_UPDATE_PUBKEY: publicKey },
    })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    server?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('offers the newer version with its date and notes soon after start', async () => {
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-install"]', { timeoutMs: 60_000 })
    assert.match(await s.text('[data-testid="update-dialog"] h2'), /Leasehold 99\.0\.0 is available/)
    assert.match(await s.text('[data-testid="update-meta"]'), /You have 0\.\d+\.\d+ · published/)
    // A key pressed by habit as the dialog opens only closes it: the focus starts on "Later".
    assert.equal(await s.execute('return document.activeElement?.dataset?.testid ?? null'), 'update-later')
    assert.equal(await s.text('[data-testid="update-notes"]'), 'Stop now works again with RunPod REST v2.')
    await screenshot(s, 'en/update-01-dialog')
    await later(s)
  })

  it('shows the version, build date and channel in Settings → About, and Check now finds the update', async () => {
    await goTo(s, 'settings')
    await s.waitFor('[data-testid="about-card"]')
    assert.match(await s.text('[data-testid="about-version"]'), /^0\.\d+\.\d+$/)
    assert.equal(await s.text('[data-testid="about-build-date"]'), 'Development build')
    assert.equal(await s.text('[data-testid="about-channel"]'), 'Development')
    await s.scrollTo('[data-testid="about-card"]')
    await screenshot(s, 'en/update-02-settings-about')
    await s.click('[data-testid="about-check"]')
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-install"]')
  })

  it('refuses a download whose signature does not match, and installs nothing', async () => {
    await s.click('[data-testid="update-install"]')
    const error = await s.waitFor('[data-testid="update-error"]')
    assert.equal(await error.attribute('data-code'), 'update.bad_signature')
    assert.match(await s.text('[data-testid="update-error"]'), /does not match .*Nothing was installed/)
    await screenshot(s, 'en/update-03-refused-signature')
    assert.equal(statSync(BINARY).mtimeMs, binaryBefore, 'the app binary is untouched')
    await later(s)
  })

  it('shows a problem report without the seeded secrets before anything is copied', async () => {
    await s.scrollTo('[data-testid="problem-report-card"]')
    await s.click('[data-testid="problem-report-open"]')
    const area = await s.waitFor('[data-testid="problem-report-text"]')
    const report = await area.property('value')
    assert.match(report, /version: 0\.\d+\.\d+/)
    // The refused download just before is the newest failure; the seeded log's stop comes earlier.
    assert.match(report, /last failed operation: update\.bad_signature/)
    for (const secret of [...SEEDED, 'alice', 'db.team.example', 'dingtalk']) {
      assert.ok(!report.includes(secret), `${secret} must not be in the report`)
    }
    await screenshot(s, 'en/update-04-problem-report')
    await s.click('[data-testid="problem-report-close"]')
  })

  it('says all of it in Chinese', async () => {
    // Still on Settings (scrolled down to the report): the language is switched right here.
    await s.waitGone('dialog[open]')
    await s.select('[data-testid="settings-language"]', 'zh-CN')
    await waitFor(async () => (await s.text('[data-testid="page-title"]')) === '设置', { what: 'Settings in Chinese' })
    await s.scrollTo('[data-testid="about-card"]')
    assert.equal(await s.text('[data-testid="about-channel"]'), '开发版')
    await screenshot(s, 'zh-CN/update-02-settings-about')
    // The offer may already be back on screen (the pending update is offered again in the new
    // language); otherwise Check now brings it.
    if ((await s.findAll('[data-testid="update-dialog"] [data-testid="update-install"]')).length === 0) {
      await s.click('[data-testid="about-check"]')
    }
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-install"]')
    assert.match(await s.text('[data-testid="update-dialog"] h2'), /算力租用管家 99\.0\.0 已发布/)
    assert.equal(await s.text('[data-testid="update-notes"]'), '“立即关机”已改用 RunPod REST v2，重新可用。')
    await screenshot(s, 'zh-CN/update-01-dialog')
    await s.click('[data-testid="update-install"]')
    await s.waitFor('[data-testid="update-error"]')
    assert.match(await s.text('[data-testid="update-error"]'), /签名与算力租用管家的更新密钥不符/)
    await screenshot(s, 'zh-CN/update-03-refused-signature')
    await later(s)
    await s.scrollTo('[data-testid="problem-report-card"]')
    await s.click('[data-testid="problem-report-open"]')
    await s.waitFor('[data-testid="problem-report-text"]')
    await screenshot(s, 'zh-CN/update-04-problem-report')
  })
})

// Connect → Verify → Terminal against a real sshd on 127.0.0.1 whose login shell replays a fake
// GPU (tests/fake-gpu-hosts, profile cpu-torch: a healthy RTX 4090 with a CPU-only torch). In
// each language: paste the provider's command, choose the key, test the connection, confirm the
// fingerprint, run Verify and see the findings, use the terminal and a port forward; then a
// changed host key is a hard stop and a stopped sshd fails at the TCP step. Screenshots of every
// screen in English and Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { startSshd } from './lib/sshd.mjs'
import { waitFor } from './lib/webdriver.mjs'

const INSTANCE = 'gpu-e2e'
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')

/** Read a TCP banner: what a forwarded port answers with. */
function banner(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setTimeout(10_000, () => socket.destroy(new Error('no banner')))
    socket.once('data', (data) => {
      socket.destroy()
      resolve(data.toString('utf8'))
    })
    socket.once('error', reject)
  })
}

describe('connect, verify, terminal', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-connect-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s
  let host

  before(async () => {
    // The rental the target is saved on, recorded through the CLI like a user would.
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await host?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  async function openTool(tool) {
    await s.click(`[data-testid="tab-${tool}"]`)
    await s.waitFor(`[data-testid="screen-${tool}"]`)
  }

  /**
   * Paste the command, choose how to log in, and get to the test page. English logs in with a
   * key file; Chinese lets Leasehold generate a key and "pastes" its public half into the host.
   */
  async function fillWizard(lang) {
    await s.waitFor('[data-testid="connect-where"]')
    await s.type('[data-testid="ssh-command"]', host.sshCommand)
    await waitFor(async () => (await s.text('[data-testid="ssh-preview"]')).includes(String(host.port)), {
      what: 'the preview of where the command points',
    })
    await screenshot(s, `${lang}/10-connect-where`)
    await s.click('[data-testid="connect-next"]')
    await s.waitFor('[data-testid="connect-login"]')
    if (lang === 'en') {
      await s.click('[data-testid="auth-key"]')
      await s.select('[data-testid="key-choice"]', '__custom__')
      await s.type('[data-testid="key-path"]', host.clientKey)
    } else {
      await s.click('[data-testid="auth-generate"]')
      await s.click('[data-testid="generate-key"]')
      const publicKey = await s.text('[data-testid="public-key"]')
      assert.match(publicKey, /^ssh-ed25519 AAAA\S+ leasehold@/, 'a public key line ready to paste')
      host.authorize(publicKey)
    }
    await screenshot(s, `${lang}/11-connect-login`)
    await s.click('[data-testid="connect-next"]')
    await s.waitFor('[data-testid="connect-test"]')
  }

  for (const lang of ['en', 'zh-CN']) {
    it(`${lang}: connects with a key after the fingerprint is confirmed, and saves the target`, async () => {
      host = await startSshd({ fakeGpuProfile: 'cpu-torch' })
      if (lang === 'zh-CN') await switchLanguage(s, 'zh-CN')
      await gotoConnect(lang)
      await fillWizard(lang)
      await s.click('[data-testid="connect-run"]')
      const shown = await s.text('[data-testid="fingerprint"]')
      assert.equal(shown, host.fingerprint, 'the dialog shows the host key fingerprint ssh-keygen -l prints')
      // The test host's key is ed25519: the command to print it there reads that file, with a copy button.
      assert.equal(await s.text('[data-testid="fingerprint-command"]'), 'ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub')
      await s.waitFor('[data-testid="fingerprint-command-copy"]')
      await screenshot(s, `${lang}/12-connect-fingerprint`)
      await s.click('[data-testid="fingerprint-accept"]')
      await s.waitFor('[data-testid="connect-success"]', { timeoutMs: 30_000 })
      for (const step of ['tcp', 'handshake', 'host_key', 'auth', 'first_command']) {
        const state = await (await s.find(`[data-testid="step-${step}"]`)).attribute('data-state')
        assert.equal(state, 'done', `step ${step} ends done`)
      }
      assert.match(await s.text('[data-testid="connect-success"]'), new RegExp(host.user))
      await screenshot(s, `${lang}/13-connect-connected`)
      // The target is saved on the instance: its page now shows where it connects.
      await s.click('[data-testid="instance-back"]')
      const target = await s.text('[data-testid="instance-ssh-target"]')
      assert.equal(target, `${host.user}@127.0.0.1:${host.port}`)
      await screenshot(s, `${lang}/16-instance-connected`)
      await s.click('[data-testid="instance-connect"]')
      await s.waitFor('[data-testid="screen-connect"]')
      await s.click('[data-testid="connect-next"]')
      await s.click('[data-testid="connect-next"]')
      await s.click('[data-testid="connect-run"]')
      await s.waitFor('[data-testid="connect-success"]', { timeoutMs: 30_000 })
    })

    it(`${lang}: Verify runs the checks live and explains the CPU-only torch`, async () => {
      await s.click('[data-testid="connect-done"]')
      await s.waitFor('[data-testid="screen-verify"]')
      await s.click('[data-testid="verify-run"]')
      const verdict = await s.waitFor('[data-testid="verify-verdict"]', { timeoutMs: 60_000 })
      assert.equal(await verdict.attribute('data-verdict'), 'errors', 'a CPU-only torch is a problem to fix')
      const codes = await s.execute(`return [...document.querySelectorAll('[data-testid="finding"]')].map((el) => el.dataset.code)`)
      assert.ok(codes.includes('torch.cpu_build'), `the CPU-only build is named: ${codes}`)
      const first = await s.execute(`return document.querySelector('[data-testid="finding"]').dataset.severity`)
      assert.equal(first, 'error', 'errors come first')
      const torch = await (await s.find('[data-testid="step-torch"]')).attribute('data-state')
      assert.equal(torch, 'failed', 'the torch check is marked failed by its finding')
      const gpu = await (await s.find('[data-testid="step-gpu"]')).attribute('data-state')
      assert.equal(gpu, 'done', 'the healthy RTX 4090 passes')
      assert.match(await s.text('[data-testid="facts-gpu"]'), /RTX 4090/)
      // Every run is kept; the second (Chinese) run is compared with the first.
      const runs = lang === 'en' ? 1 : 2
      await waitFor(async () => (await s.findAll('[data-testid="history-run"]')).length === runs, { what: `${runs} stored runs` })
      if (lang === 'en') await s.waitFor('[data-testid="run-changes-first"]')
      else assert.equal((await s.findAll('[data-testid="run-changes-first"]')).length, 0, 'a second run is compared')
      await screenshot(s, `${lang}/30-verify-findings`)
      await s.execute(`document.querySelector('[data-testid="facts"]').scrollIntoView({ block: 'start' })`)
      await screenshot(s, `${lang}/31-verify-facts`)
    })

    it(`${lang}: the terminal runs commands and a forwarded port reaches the machine`, async () => {
      await openTool('terminal')
      await waitFor(async () => (await (await s.find('[data-testid="terminal"]')).attribute('data-phase')) === 'open', {
        timeoutMs: 30_000,
        what: 'the shell to open',
      })
      // Type once the remote shell has drawn its prompt, as a person would: on a loaded machine
      // the channel opens well before bash has read its profile.
      await waitFor(async () => /[$#]\s*$/.test((await s.text('.xterm-rows')).trimEnd() + ' '), {
        timeoutMs: 30_000,
        what: 'the remote shell to draw its prompt',
      })
      const input = await s.find('.xterm-helper-textarea')
      await input.sendKeys('echo leasehold-$((6*7))\n')
      await waitFor(async () => (await s.text('.xterm-rows')).includes('leasehold-42'), {
        timeoutMs: 30_000,
        what: 'the echo to come back from the remote shell',
      })
      // Forward the machine's own sshd port: the local port must answer with its SSH banner.
      await s.type('[data-testid="forward-remote-port"]', String(host.port))
      await s.click('[data-testid="forward-add"]')
      const row = await s.waitFor('[data-testid^="forward-"][data-local-port]')
      const localPort = Number(await row.attribute('data-local-port'))
      assert.match(await banner(localPort), /^SSH-2\.0-/, 'the forwarded port carries the machine\'s service')
      await s.execute(`arguments[0].scrollIntoView({ block: 'end' })`, [row.ref()])
      await screenshot(s, `${lang}/20-terminal-forwards`)
      await s.click('[data-testid^="forward-close-"]')
      await s.waitFor('[data-testid="forwards-empty"]')
    })

    it(`${lang}: a changed host key stops before login and shows both fingerprints`, async () => {
      const before = host.fingerprint
      host.rotateHostKey()
      await openTool('connect')
      await s.click('[data-testid="connect-next"]')
      await s.click('[data-testid="connect-next"]')
      await s.click('[data-testid="connect-run"]')
      await s.waitFor('[data-testid="host-key-changed"]', { timeoutMs: 30_000 })
      assert.equal(await s.text('[data-testid="old-fingerprint"]'), before)
      assert.equal(await s.text('[data-testid="new-fingerprint"]'), host.fingerprint)
      const auth = await (await s.find('[data-testid="step-auth"]')).attribute('data-state')
      assert.equal(auth, 'pending', 'no login was attempted')
      await s.execute(`document.querySelector('[data-testid="copy-forget-command"]').scrollIntoView({ block: 'end' })`)
      await screenshot(s, `${lang}/14-connect-host-key-changed`)
    })

    it(`${lang}: a machine that stopped listening fails at the TCP step with advice`, async () => {
      await host.stop()
      host = null
      await s.click('[data-testid="connect-run"]')
      const failure = await s.waitFor('[data-testid="connect-failure"]', { timeoutMs: 30_000 })
      assert.equal(await failure.attribute('data-code'), 'ssh.refused')
      const tcp = await (await s.find('[data-testid="step-tcp"]')).attribute('data-state')
      assert.equal(tcp, 'failed')
      await screenshot(s, `${lang}/15-connect-refused`)
    })
  }

  /** Rentals → the rental's page → its SSH card → Connect, as a user gets there. */
  async function gotoConnect(lang) {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    const card = await s.waitFor('[data-testid="screen-instance"] [data-testid="instance-ssh"]')
    if (lang === 'en') {
      assert.equal((await s.findAll('[data-testid="instance-ssh-target"]')).length, 0, 'not connected yet')
      await screenshot(s, 'en/09-instance-not-connected')
    }
    await s.click('[data-testid="instance-connect"]')
    await s.waitFor('[data-testid="screen-connect"]')
  }
})

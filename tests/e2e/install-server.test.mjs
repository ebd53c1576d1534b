// The Ollama recipe from the Install page against a real sshd on 127.0.0.1, with the downloads
// this machine cannot reach served by a local HTTP server: a stand-in install.sh that puts a
// stand-in `ollama` on the host's PATH, whose `serve` answers Ollama's HTTP API (a model three
// quarters in VRAM). The job installs, starts the server, pulls and tries the model; then the
// page checks the server from this computer through a port forward: the answer, its speed and
// the CPU-offload finding, in English and again in Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { connectWithKey, finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { freePort } from './lib/net.mjs'
import { startSshd } from './lib/sshd.mjs'
import { waitFor } from './lib/webdriver.mjs'

const INSTANCE = 'gpu-ollama'
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const STAND_IN = fileURLToPath(new URL('./lib/ollama-standin/', import.meta.url))
const MODEL = `qwen2.5:0.5b-e2e-${process.pid}`

/** Serves the stand-in installer and what it downloads, with its own address filled in. */
async function startDownloads() {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const files = {
    '/install.sh': readFileSync(path.join(STAND_IN, 'install.sh'), 'utf8').replaceAll('@BASE@', base),
    '/ollama': readFileSync(path.join(STAND_IN, 'ollama'), 'utf8'),
    '/server.py': readFileSync(path.join(STAND_IN, 'server.py'), 'utf8'),
  }
  const requests = []
  const server = http.createServer((request, response) => {
    requests.push(request.url)
    const body = files[request.url]
    response.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'text/plain' })
    response.end(body ?? 'not found')
  })
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))
  return { base, requests, stop: () => new Promise((resolve) => server.close(resolve)) }
}

describe('install a model server', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-ollama-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  // Where the stand-in installer puts `ollama`: first on the host's PATH, writable by its user.
  const bin = mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-ollama-bin-'))
  let app
  let s
  let host
  let downloads
  let ollamaPort

  before(async () => {
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    chmodSync(bin, 0o755)
    host = await startSshd({ pathFirst: bin })
    execFileSync('chown', [`${host.user}:`, bin])
    downloads = await startDownloads()
    ollamaPort = await freePort()
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    // `ollama serve` runs in its own session on the host, as a real one would: end it by its pid.
    const home = host && execFileSync('sh', ['-c', `getent passwd ${host.user} | cut -d: -f6`], { encoding: 'utf8' }).trim()
    try {
      process.kill(Number(readFileSync(path.join(home, '.leasehold', 'ollama-serve.pid'), 'utf8').trim()), 'SIGTERM')
    } catch {
      // never started, or already gone
    }
    await host?.stop()
    await downloads?.stop()
    rmSync(bin, { recursive: true, force: true })
    rmSync(profile, { recursive: true, force: true })
  })

  async function waitForServerCheck() {
    await waitFor(async () => (await s.findAll('[data-testid="server-tps"]')).length > 0, {
      timeoutMs: 60_000,
      what: 'the server check through the port forward',
    })
    return s.text('[data-testid="job-server"]')
  }

  it('en: installs Ollama, serves and pulls a model, then checks it through a port forward', async () => {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="screen-instance"] [data-testid="instance-ssh"]')
    await connectWithKey(s, host.sshCommand, host.clientKey)

    await s.click('[data-testid="tab-install"]')
    await s.waitFor('[data-testid="screen-install"]')
    await s.click('[data-testid="recipe-ollama"]')
    await s.waitFor('[data-testid="install-options"]')
    await s.type('[data-testid="option-model"]', MODEL)
    await s.type('[data-testid="option-host"]', `127.0.0.1:${ollamaPort}`)
    await s.type('[data-testid="option-install_url"]', `${downloads.base}/install.sh`)
    await s.click('[data-testid="install-run"]')
    await s.waitFor('[data-testid="job-follow"]', { timeoutMs: 60_000 })
    await waitFor(async () => (await (await s.find('[data-testid="job-follow"]')).attribute('data-state')) !== 'running', {
      timeoutMs: 180_000,
      what: 'the Ollama job to end',
    })
    const log = await s.text('[data-testid="job-log"]')
    assert.equal(await (await s.find('[data-testid="job-follow"]')).attribute('data-state'), 'succeeded', `the job succeeded:\n${log}`)
    assert.match(log, /Install complete/, 'the installer the page was given ran on the host')
    assert.match(log, /pulling 2bada8a74506: 100%/, 'the model was pulled')
    assert.deepEqual(downloads.requests, ['/install.sh', '/ollama', '/server.py'], 'everything came from the given URL')

    const server = await waitForServerCheck()
    assert.match(server, /Hello from the stand-in model\./, 'the answer came through the forward')
    assert.match(await s.text('[data-testid="server-tps"]'), /30(\.0)? tokens per second/)
    assert.match(server, /6\.0 GB of 8\.0 GB in GPU memory/)
    const offload = await s.find('[data-testid="job-server"] [data-testid="finding"]')
    assert.equal(await offload.attribute('data-code'), 'ollama.cpu_offload', 'a model partly in VRAM is the offload finding')
    await screenshot(s, 'en/56-install-ollama-checked')
  })

  it('zh-CN: the job opens again from the list and the check speaks Chinese', async () => {
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.click('[data-testid="instance-install"]')
    await s.waitFor('[data-testid="install-jobs"] [data-testid^="job-j-"]')
    await s.click('[data-testid="install-jobs"] [data-testid^="job-j-"]')
    const server = await waitForServerCheck()
    assert.match(server, /Hello from the stand-in model\./)
    assert.match(await s.text('[data-testid="server-tps"]'), /30(\.0)?/)
    const offload = await s.find('[data-testid="job-server"] [data-testid="finding"]')
    assert.equal(await offload.attribute('data-code'), 'ollama.cpu_offload')
    assert.match(await offload.text(), /[\u4e00-\u9fff]/, 'the finding is written in Chinese')
    assert.match(await s.text('[data-testid="job-follow"] header'), /试用模型/, "the recipe's last step is named in Chinese")
    await screenshot(s, 'zh-CN/56-install-ollama-checked')
  })
})

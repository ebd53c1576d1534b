// The instance page as the place to work, against a real sshd whose fake nvidia-smi replays
// eight A100s with only GPU 0 busy: the compact GPU table (a row per GPU on one 0–100 % scale,
// idle GPUs labelled with what they cost), the process on GPU 0, the
// "only GPU 0 works" finding with its torchrun fix, the port-forward presets and the busy hours.
// A language switch while the page is open re-words it live; leaving the page stops the stream
// on the instance. Screenshots in English and Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { E2E_USER, startSshd } from './lib/sshd.mjs'
import { waitFor } from './lib/webdriver.mjs'

const INSTANCE = 'a100-x8-dash'
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')

/** The PIDs of the instance's looping nvidia-smi processes (the dashboard's GPU stream). */
function loopingSamplerPids() {
  try {
    return execFileSync('pgrep', ['-u', E2E_USER, '-f', 'nvidia-smi --query-gpu.*-lms'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
  } catch {
    return []
  }
}

function loopingSamplers() {
  return loopingSamplerPids().length
}

describe('dashboard', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-dashboard-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s
  let host

  before(async () => {
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'A100', '--count', '8', '--price', '8', '--currency', 'CNY', '--db', db])
    host = await startSshd({ fakeGpuProfile: 'busy-x8' })
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await host?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  async function openInstance() {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="screen-instance"] [data-testid="instance-ssh"]')
  }

  async function waitForLiveDashboard() {
    await s.waitFor('[data-testid="gpu-dashboard"][data-status="live"]', { timeoutMs: 60_000 })
    await waitFor(async () => (await s.findAll('[data-testid="gpu-row"]')).length === 8, { timeoutMs: 30_000, what: 'eight GPU rows' })
    await s.waitFor('[data-testid="live-findings"] [data-code="gpu.idle_peers"]', { timeoutMs: 30_000 })
    await s.waitFor('[data-testid="gpu-process"]', { timeoutMs: 30_000 })
  }

  it('en: connects and shows eight GPUs live, only GPU 0 at work, with the fix', async () => {
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

    await openInstance()
    await waitForLiveDashboard()
    assert.equal(await s.text('[data-testid="gpu-row"][data-gpu="0"] [data-testid="gpu-utilization"]'), '98%')
    assert.equal(await s.text('[data-testid="gpu-row"][data-gpu="5"] [data-testid="gpu-utilization"]'), '0%')
    assert.equal((await s.findAll('[data-testid="gpu-chart"]')).length, 0, 'eight GPUs get rows, not eight tiny charts')
    await waitFor(async () => (await (await s.find('[data-testid="gpu-row"][data-gpu="3"]')).attribute('data-idle')) === 'true', {
      timeoutMs: 30_000,
      what: 'an idle peer marked',
    })
    assert.equal(await s.text('[data-testid="gpu-row"][data-gpu="3"] [data-testid="gpu-idle-cost"]'), 'idle · CN¥8.00/h', 'an idle GPU says what it costs')
    assert.equal((await s.findAll('[data-testid="gpu-row"][data-gpu="0"] [data-testid="gpu-idle-cost"]')).length, 0, 'the busy GPU is not idle')
    const finding = await s.text('[data-testid="live-findings"] [data-code="gpu.idle_peers"]')
    assert.match(finding, /Only GPU 0 is working/)
    assert.match(finding, /torchrun --nproc_per_node=8/)
    assert.match(await s.text('[data-testid="gpu-process"]'), /4242[\s\S]*python train\.py[\s\S]*61200 MiB/)
    assert.match(await s.text('[data-testid="work-tools"]'), /Jupyter[\s\S]*TensorBoard[\s\S]*Ollama[\s\S]*vLLM/)
    assert.equal(loopingSamplers(), 1, 'one nvidia-smi stream serves the whole dashboard')
    await s.scrollTo('[data-testid="gpu-dashboard"]')
    await screenshot(s, 'en/60-dashboard')
    await s.scrollTo('[data-testid="live-findings"]')
    await screenshot(s, 'en/61-dashboard-findings')
  })

  it('a language switch on the open dashboard re-words it, chart legends and findings included, without restarting the stream', async () => {
    const stream = loopingSamplerPids()
    assert.equal(stream.length, 1)
    const legend = '[data-testid="gpu-legend"]'
    assert.equal((await s.findAll(legend)).length, 1, 'one legend for all GPUs')
    assert.match(await s.text(legend), /Utilisation over the last five minutes[\s\S]*0%[\s\S]*100%/)
    await s.click('[data-testid="sidebar-language"]')
    await waitFor(async () => /只有 GPU 0 在干活/.test(await s.text('[data-testid="live-findings"] [data-code="gpu.idle_peers"]')), {
      timeoutMs: 15_000,
      what: 'the finding re-worded in Chinese',
    })
    assert.match(await s.text('[data-testid="live-findings"] [data-code="gpu.idle_peers"]'), /torchrun --nproc_per_node=8/)
    await waitFor(async () => /最近五分钟的利用率/.test(await s.text(legend)), { what: 'the legend in Chinese' })
    assert.match(await s.text('[data-testid="gpu-row"][data-gpu="3"] [data-testid="gpu-idle-cost"]'), /^空闲 · ¥8\.00\/小时$/)
    assert.match(await s.text('[data-testid="gpu-dashboard"]'), /GPU 实时监控/)
    assert.equal(await s.text('[data-testid="gpu-dashboard-status"]'), '实时')
    assert.equal((await s.findAll('[data-testid="gpu-row"]')).length, 8, 'the rows stay')
    assert.deepEqual(loopingSamplerPids(), stream, 'the same nvidia-smi stream goes on')
    await s.scrollTo('[data-testid="gpu-dashboard"]')
    await screenshot(s, 'zh-CN/62-dashboard-switched-live')
    await s.scrollTo('[data-testid="live-findings"]')
    await screenshot(s, 'zh-CN/63-dashboard-switched-findings')

    await s.click('[data-testid="sidebar-language"]')
    await waitFor(async () => /Only GPU 0 is working/.test(await s.text('[data-testid="live-findings"] [data-code="gpu.idle_peers"]')), {
      timeoutMs: 15_000,
      what: 'the finding back in English',
    })
    await waitFor(async () => /Utilisation over/.test(await s.text(legend)), { what: 'the legend in English' })
    assert.deepEqual(loopingSamplerPids(), stream, 'still the same stream')
    await s.scrollTo('[data-testid="gpu-dashboard"]')
    await screenshot(s, 'en/62-dashboard-switched-back')
  })

  it('en: leaving the page stops the stream on the instance', async () => {
    await goTo(s, 'rentals')
    await waitFor(async () => loopingSamplers() === 0, { timeoutMs: 20_000, what: 'the remote nvidia-smi loop to end' })
  })

  it('zh-CN: the same dashboard in Chinese', async () => {
    await switchLanguage(s, 'zh-CN')
    await openInstance()
    await waitForLiveDashboard()
    const finding = await s.text('[data-testid="live-findings"] [data-code="gpu.idle_peers"]')
    assert.match(finding, /只有 GPU 0 在干活/)
    assert.match(await s.text('[data-testid="gpu-dashboard"]'), /GPU 实时监控/)
    await s.scrollTo('[data-testid="gpu-dashboard"]')
    await screenshot(s, 'zh-CN/60-dashboard')
    await s.scrollTo('[data-testid="live-findings"]')
    await screenshot(s, 'zh-CN/61-dashboard-findings')
    // The minutes streamed so far are on the bill: busy hours and the idle GPUs' share.
    await s.waitFor('[data-testid="bill-busy-hours"]', { timeoutMs: 130_000 })
    assert.match(await s.text('[data-testid="bill-busy-hours"]'), /GPU 工作时长[\s\S]*空闲显卡的费用/)
    await s.scrollTo('[data-testid="breakdown"]')
    await screenshot(s, 'zh-CN/64-bill-busy-hours')
    await s.click('[data-testid="sidebar-language"]')
    await waitFor(async () => /GPUs worked/.test(await s.text('[data-testid="bill-busy-hours"]')), { what: 'the bill line in English' })
    await s.scrollTo('[data-testid="breakdown"]')
    await screenshot(s, 'en/64-bill-busy-hours')
  })
})

// Install against a real sshd on 127.0.0.1: connect with a key, open Install, run the pip recipe
// (a real download from the package index this machine reaches), follow its progress and live
// log to the end, see the job on the instance page, run a per-GPU job while the link to the host
// is cut and restored (the page re-attaches and every line arrives once), close the app mid-job
// and start it again (the Install page re-attaches by itself, the log whole), see a job nobody
// follows end on the instance page (the background watch), and run pip again (it skips). The app reaches sshd through a relay that can cut the link. Screenshots in English and
// Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { connectWithKey, finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { startCutLink } from './lib/cutlink.mjs'
import { startSshd } from './lib/sshd.mjs'
import { waitFor } from './lib/webdriver.mjs'

const INSTANCE = 'gpu-install'
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const ENV = `e2e-${process.pid}`

describe('install', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-install-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s
  let host
  let link

  before(async () => {
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    host = await startSshd()
    link = await startCutLink(host.port)
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await link?.stop()
    await host?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

  /** From the rentals list, run the per-GPU recipe with `command` on `gpus` ("0" or "0,1"). */
  async function runPerGpu(command, gpus) {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.click('[data-testid="instance-install"]')
    // The page follows a job it cannot yet read as ended (a link just restored keeps the last
    // job "running" until the instance answers); once it ends, All recipes leads back.
    await waitFor(async () => (await s.findAll('[data-testid="recipe-per-gpu"], [data-testid="job-resumed"]')).length > 0, {
      what: 'the recipes or a resumed job',
    })
    if ((await s.findAll('[data-testid="job-resumed"]')).length > 0) {
      await waitFor(async () => (await (await s.find('[data-testid="job-follow"]')).attribute('data-state')) !== 'running', {
        timeoutMs: 90_000,
        what: 'the resumed job to end',
      })
      await s.click('[data-testid="install-all-recipes"]')
    }
    await s.click('[data-testid="recipe-per-gpu"]')
    await s.waitFor('[data-testid="install-options"]')
    await s.type('[data-testid="option-command"]', command)
    await s.type('[data-testid="option-gpus"]', gpus)
    await s.click('[data-testid="install-run"]')
  }

  async function runPip() {
    await s.click('[data-testid="recipe-pip"]')
    await s.waitFor('[data-testid="install-options"]')
    await s.type('[data-testid="option-env"]', ENV)
    await s.type('[data-testid="option-packages"]', 'six')
    await s.click('[data-testid="install-run"]')
    await s.waitFor('[data-testid="job-follow"]', { timeoutMs: 60_000 })
    await waitFor(async () => (await (await s.find('[data-testid="job-follow"]')).attribute('data-state')) !== 'running', {
      timeoutMs: 180_000,
      what: 'the pip job to end',
    })
    return (await s.find('[data-testid="job-follow"]')).attribute('data-state')
  }

  it('en: connects, runs the pip recipe as a job and follows it to the end', async () => {
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.waitFor('[data-testid="screen-instance"] [data-testid="instance-ssh"]')
    await connectWithKey(s, `ssh -p ${link.port} ${host.user}@127.0.0.1`, host.clientKey)

    await s.click('[data-testid="tab-install"]')
    await s.waitFor('[data-testid="screen-install"]')
    await s.waitFor('[data-testid="recipe-pytorch"]')
    await screenshot(s, 'en/50-install-recipes')
    const state = await runPip()
    const log = await s.text('[data-testid="job-log"]')
    assert.equal(state, 'succeeded', `the job succeeded:\n${log}`)
    assert.match(log, /Successfully installed six/, 'pip really ran on the instance')
    assert.match(await s.text('[data-testid="job-results"]'), /six/)
    await screenshot(s, 'en/51-install-done')
  })

  it('en: the job is listed on the instance page and opens again with its whole log', async () => {
    await s.click('[data-testid="instance-back"]')
    const jobs = await s.waitFor('[data-testid="instance-jobs"]')
    assert.match(await jobs.text(), /Install Python packages/, 'the job by its human name')
    await screenshot(s, 'en/52-instance-jobs')
    await s.click('[data-testid="instance-install"]')
    await s.waitFor('[data-testid="install-jobs"] [data-testid^="job-j-"]')
    await s.click('[data-testid="install-jobs"] [data-testid^="job-j-"]')
    await waitFor(async () => (await s.text('[data-testid="job-log"]')).includes('Successfully installed six'), {
      timeoutMs: 30_000,
      what: 'the whole log streamed again from the instance',
    })
  })

  it('en: a job outlives a cut link; the page re-attaches by itself and every line arrives once', async () => {
    // One copy per GPU (CUDA_VISIBLE_DEVICES set for each), each printing for about 8 s.
    await runPerGpu('for i in $(seq 1 40); do echo "line $i of {gpu} sees $CUDA_VISIBLE_DEVICES"; sleep 0.2; done', '0,1')
    await s.waitFor('[data-testid="job-follow"]', { timeoutMs: 60_000 })
    await waitFor(async () => (await s.text('[data-testid="job-log"]')).includes('line 3 of 1'), {
      timeoutMs: 60_000,
      what: 'the job to print its first lines',
    })
    link.cut()
    const cutAt = (await s.text('[data-testid="job-log"]')).split('\n').length
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    assert.equal((await (await s.find('[data-testid="job-follow"]')).attribute('data-state')), 'running', 'the page waits, it does not give up')
    // It says so: the link is down, the job goes on.
    const banner = await s.waitFor('[data-testid="job-link-lost"]', { timeoutMs: 30_000 })
    assert.match(await banner.text(), /Connection lost — the job goes on/)
    await screenshot(s, 'en/53-install-link-cut')
    link.restore()
    await waitFor(async () => (await (await s.find('[data-testid="job-follow"]')).attribute('data-state')) !== 'running', {
      timeoutMs: 90_000,
      what: 'the job to end after the link came back',
    })
    const log = await s.text('[data-testid="job-log"]')
    assert.equal(await (await s.find('[data-testid="job-follow"]')).attribute('data-state'), 'succeeded', log)
    assert.ok(log.split('\n').length > cutAt, 'lines arrived after the cut')
    for (const gpu of [0, 1]) {
      for (let i = 1; i <= 40; i += 1) {
        const line = `[gpu ${gpu}] line ${i} of ${gpu} sees ${gpu}`
        assert.equal(log.split('\n').filter((l) => l === line).length, 1, `exactly once: ${line}`)
      }
    }
    assert.ok(link.connections > 0, 'the app reconnected through the restored link')
    assert.equal((await s.findAll('[data-testid="job-link-lost"]')).length, 0, 'the banner goes once the link is back')
    await screenshot(s, 'en/54-install-after-cut')
  })

  it('en: a job outlives the app; after a restart the Install page re-attaches by itself and the log is whole', async () => {
    await runPerGpu('for i in $(seq 1 60); do echo "step $i on {gpu}"; sleep 0.2; done', '0')
    await waitFor(async () => (await s.text('[data-testid="job-log"]')).includes('step 3 on 0'), {
      timeoutMs: 60_000,
      what: 'the job to print its first lines',
    })
    // The app goes away mid-job (closed, crashed, laptop restarted); the job goes on.
    await app.close()
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.click('[data-testid="instance-install"]')
    await s.waitFor('[data-testid="job-follow"]', { timeoutMs: 60_000 })
    await waitFor(async () => (await (await s.find('[data-testid="job-follow"]')).attribute('data-state')) !== 'running', {
      timeoutMs: 90_000,
      what: 'the re-attached job to end',
    })
    const log = await s.text('[data-testid="job-log"]')
    assert.equal(await (await s.find('[data-testid="job-follow"]')).attribute('data-state'), 'succeeded', log)
    for (let i = 1; i <= 60; i += 1) {
      const line = `[gpu 0] step ${i} on 0`
      assert.equal(log.split('\n').filter((l) => l === line).length, 1, `exactly once after the restart: ${line}`)
    }
    await screenshot(s, 'en/55-install-after-restart')
  })

  it('en: a job nobody follows is watched in the background; the instance page shows its end', async () => {
    await runPerGpu('for i in $(seq 1 40); do echo "quiet $i"; sleep 0.3; done', '0')
    await waitFor(async () => (await s.text('[data-testid="job-log"]')).includes('quiet 2'), {
      timeoutMs: 60_000,
      what: 'the job to print its first lines',
    })
    // Away from the Install page nothing follows the job; the instance page lists it, newest first.
    await s.click('[data-testid="instance-back"]')
    const newest = '[data-testid="instance-jobs"] [data-testid="instance-job-state"]'
    await s.waitFor(newest)
    assert.equal(await (await s.find(newest)).attribute('data-state'), 'running', 'about 10 s of the job are left')
    await waitFor(async () => (await (await s.find(newest)).attribute('data-state')) === 'succeeded', {
      timeoutMs: 45_000,
      what: 'the background watch to see the job end',
    })
    await s.execute(`document.querySelector('[data-testid="instance-jobs"]').scrollIntoView({ block: 'center' })`)
    await screenshot(s, 'en/57-instance-job-ended-unwatched')
  })

  it('zh-CN: a second run skips what is installed', async () => {
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.click('[data-testid="instance-install"]')
    await s.waitFor('[data-testid="recipe-pip"]')
    await screenshot(s, 'zh-CN/50-install-recipes')
    const state = await runPip()
    assert.equal(state, 'succeeded')
    // The recipe skipped what was there: pip did not install again, and the log keeps its
    // protocol lines (the skip marker among them) out of sight.
    const log = await s.text('[data-testid="job-log"]')
    assert.doesNotMatch(log, /Successfully installed six/)
    assert.doesNotMatch(log, /::leasehold::/)
    // What was skipped is said above the log: the count in Chinese, the script's words inside.
    assert.match(await s.text('[data-testid="job-skipped"] summary'), /^已安装，跳过 \d+ 步$/)
    await s.click('[data-testid="job-skipped"] summary')
    assert.match(await s.text('[data-testid="job-skipped"]'), /already installed: six/)
    await screenshot(s, 'zh-CN/51-install-skipped')
  })

  it('zh-CN: a failed job hands its log to Explain ("Why did it fail?") and shows the findings', async () => {
    await runPerGpu(
      'echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free."; exit 3',
      '0',
    )
    await waitFor(async () => (await (await s.find('[data-testid="job-follow"]')).attribute('data-state')) === 'failed', {
      timeoutMs: 60_000,
      what: 'the job to fail',
    })
    await s.click('[data-testid="job-why"]')
    await s.waitFor('[data-testid="job-why-result"] [data-testid="finding"]', { timeoutMs: 30_000 })
    const codes = await s.execute(
      `return [...document.querySelectorAll('[data-testid="job-why-result"] [data-testid="finding"]')].map((el) => el.dataset.code)`,
    )
    assert.ok(codes.some((code) => code.includes('oom')), `an out-of-memory finding: ${codes}`)
    assert.match(await s.text('[data-testid="job-why-result"]'), /显存|内存/)
    await screenshot(s, 'zh-CN/52-install-why-failed')
  })
})

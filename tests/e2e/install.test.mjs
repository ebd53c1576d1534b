// Install against a real sshd on 127.0.0.1: connect with a key, open Install, run the pip recipe
// (a real download from the package index this machine reaches), follow its progress and live
// log to the end, see the job on the instance page, and run it again (it skips). Screenshots in
// English and Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
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

  before(async () => {
    execFileSync(CLI, ['instance', 'add', INSTANCE, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
    host = await startSshd()
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await host?.stop()
    rmSync(profile, { recursive: true, force: true })
  })

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
    assert.match(await jobs.text(), /pip/)
    await screenshot(s, 'en/52-instance-jobs')
    await s.click('[data-testid="instance-install"]')
    await s.waitFor('[data-testid="install-jobs"] [data-testid^="job-j-"]')
    await s.click('[data-testid="install-jobs"] [data-testid^="job-j-"]')
    await waitFor(async () => (await s.text('[data-testid="job-log"]')).includes('Successfully installed six'), {
      timeoutMs: 30_000,
      what: 'the whole log streamed again from the instance',
    })
  })

  it('zh-CN: a second run skips what is installed', async () => {
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'rentals')
    await s.click('[data-testid="rental-card"]')
    await s.click('[data-testid="instance-install"]')
    await s.waitFor('[data-testid="recipe-pip"]')
    const state = await runPip()
    assert.equal(state, 'succeeded')
    assert.match(await s.text('[data-testid="job-log"]'), /::leasehold::skip already installed: six/)
    await screenshot(s, 'zh-CN/51-install-skipped')
  })
})

// Back up and Release against a real sshd on 127.0.0.1: connect, open Back up from the instance
// page, see the at-risk list (a repository with unpushed commits, a weights file), download the
// weights with the environment export, then the Release wizard: live checks block, each is
// overridden with a reason, the name is typed, and the final bill shows the saved backup. Once
// in English, once in Chinese (a second instance), with screenshots.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { E2E_USER, startSshd } from './lib/sshd.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const WORK = `e2e-backup-${process.pid}`

function asUser(script) {
  return execFileSync('su', ['-', E2E_USER, '-c', script], { encoding: 'utf8' })
}

describe('backup and release', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-backup-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  let app
  let s
  let host
  let home

  before(async () => {
    for (const name of ['gpu-backup', 'gpu-backup-zh']) {
      execFileSync(CLI, ['instance', 'add', name, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
      execFileSync(CLI, ['instance', 'start', name, '--db', db])
    }
    host = await startSshd()
    home = asUser('printf %s "$HOME"')
    // Work that exists only on the instance: a repository two commits ahead of its remote, and weights.
    asUser(
      [
        `set -e; rm -rf ~/${WORK}; mkdir -p ~/${WORK}; cd ~/${WORK}`,
        'G="git -c user.name=e2e -c user.email=e2e@example.com -c init.defaultBranch=main"',
        '$G init -q --bare origin.git',
        '$G clone -q origin.git train 2>/dev/null; cd train',
        'echo a > a; $G add a; $G commit -qm a; $G push -q origin HEAD 2>/dev/null',
        'echo b > b; $G add b; $G commit -qm b; echo c > c; $G add c; $G commit -qm c',
        'head -c 2000000 /dev/urandom > model.safetensors',
      ].join('\n'),
    )
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await host?.stop()
    try {
      asUser(`rm -rf ~/${WORK}`)
    } catch {
      // the user's home is shared by the e2e tests; leaving the folder behind is harmless
    }
    rmSync(profile, { recursive: true, force: true })
  })

  async function openInstance(name) {
    await goTo(s, 'rentals')
    await s.click(`[data-testid="rental-card"][data-name="${name}"]`)
    await s.waitFor('[data-testid="screen-instance"] [data-testid="backup-status"]')
  }

  async function connect() {
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
    // The first instance meets the host key for the first time; the second finds it trusted.
    const seen = await waitFor(
      async () => {
        if ((await s.findAll('[data-testid="connect-success"]')).length > 0) return 'success'
        if ((await s.findAll('[data-testid="fingerprint-accept"]')).length > 0) return 'accept'
        return null
      },
      { timeoutMs: 30_000, what: 'the host key prompt or a connection' },
    )
    if (seen === 'accept') await s.click('[data-testid="fingerprint-accept"]')
    await s.waitFor('[data-testid="connect-success"]', { timeoutMs: 30_000 })
    await s.click('[data-testid="instance-back"]')
  }

  async function backUpAndRelease(name, lang) {
    await openInstance(name)
    await connect()
    await s.waitFor('[data-testid="backup-status"] [data-testid="last-backup"]')
    await s.click('[data-testid="open-backup"]')
    await s.waitFor('[data-testid="at-risk"]', { timeoutMs: 120_000 })
    const repoPath = `${home}/${WORK}/train`
    const repos = await s.text('[data-testid="risk-repos"]')
    assert.ok(repos.includes(repoPath), `the repository is listed:\n${repos}`)
    assert.match(repos, lang === 'en' ? /2 commits not pushed/ : /2 个提交未推送/)
    const weight = `[data-testid="weight-check"][data-path="${home}/${WORK}/train/model.safetensors"]`
    await s.waitFor(weight)
    // The repository with unpushed commits and the weight trained in it (not in a download
    // cache) are ticked before the user does anything; the user keeps only the weight.
    const repoCheck = `[data-testid="repo-check"][data-path="${repoPath}"]`
    assert.equal(await (await s.find(repoCheck)).property('checked'), true, 'work at risk is pre-selected')
    assert.equal(await (await s.find(weight)).property('checked'), true, 'so is the trained weight')
    // Release comes after a backup: none exists yet for this instance.
    assert.equal((await s.findAll('[data-testid="go-release"]')).length, 0, 'no Go to Release before a backup')
    await screenshot(s, `${lang}/60-backup-at-risk`)
    // What the chosen paths weigh: a repository has no measured size, so "at least" the weight's.
    assert.match(await s.text('[data-testid="backup-chosen"]'), lang === 'en' ? /paths chosen · at least [\d.,]+ (B|kB|MB)/ : /已选 \d+ 个路径 · 至少 [\d.,]+ (B|kB|MB)/)
    await s.click(repoCheck)
    assert.match(await s.text('[data-testid="backup-chosen"]'), lang === 'en' ? /^1 path chosen · [\d.,]+ (B|kB|MB)/ : /^已选 1 个路径 · [\d.,]+ (B|kB|MB)/)
    const dir = path.join(profile, `backups-${lang}`)
    await s.type('[data-testid="backup-dir"]', dir)
    await s.click('[data-testid="backup-run"]')
    await s.waitFor('[data-testid="backup-done"]', { timeoutMs: 120_000 })
    await s.waitFor('[data-testid="backup-record"]')
    await screenshot(s, `${lang}/61-backup-done`)
    const local = path.join(dir, 'model.safetensors')
    assert.ok(existsSync(local), 'the weights arrived')
    const sum = (f) => createHash('sha256').update(readFileSync(f)).digest('hex')
    assert.equal(sum(local), sum(`${home}/${WORK}/train/model.safetensors`))
    assert.ok(existsSync(path.join(dir, 'environment')), 'the environment export was saved')

    // A training job still runs on the instance: the check sees it, the wizard stops it.
    const job = JSON.parse(
      execFileSync(
        CLI,
        ['job', 'start', '--ssh', host.sshCommand, '-i', host.clientKey, '--known-hosts', path.join(profile, 'cli_known_hosts'), '--accept-new-host-key'].concat(
          ['--instance', name, '--name', 'train', '--json', '--db', db, '--', 'sleep', '600'],
        ),
        { encoding: 'utf8' },
      ),
    )
    await s.click('[data-testid="go-release"]')
    await s.waitFor('[data-testid="release-verdict"]', { timeoutMs: 120_000 })
    assert.equal(await (await s.find('[data-testid="check-jobs.running"]')).attribute('data-status'), 'blocked', 'the running job blocks')
    const unpushed = await s.find('[data-testid="check-git.unpushed"]')
    assert.equal(await unpushed.attribute('data-status'), 'blocked', 'unpushed commits block the release')
    assert.equal(await (await s.find('[data-testid="check-backup.never"]')).attribute('data-status'), 'ok', 'the backup counts')
    await screenshot(s, `${lang}/62-release-checks`)
    await s.click('[data-testid="release-next"]')
    await s.waitFor('[data-testid="release"][data-step="resolve"]')
    await s.scrollTo(`[data-testid="resolve-jobs.running"]`)
    await screenshot(s, `${lang}/63-release-stop-job`)
    await s.click(`[data-testid="release-stop-job-${job.id}"]`)
    await waitFor(async () => (await s.findAll('[data-testid="resolve-jobs.running"]')).length === 0, {
      timeoutMs: 60_000,
      what: 'the stopped job no longer blocks',
    })
    const state = JSON.parse(execFileSync(CLI, ['job', 'status', job.id, '--json', '--db', db], { encoding: 'utf8' }))
    assert.equal(state.state, 'cancelled', 'the job was stopped on the instance')
    // Next without reasons is refused: the blocked checks need one each, named by their titles.
    await s.click('[data-testid="release-next"]')
    await s.waitFor('[data-testid="form-error"]')
    assert.match(await s.text('[data-testid="form-error"]'), lang === 'en' ? /Unpushed commits/ : /未推送的提交/)
    for (const field of await s.findAll('[data-testid^="override-"]')) {
      await field.click()
      await field.sendKeys(lang === 'en' ? 'scratch work, not needed' : '临时试验，不需要')
    }
    await screenshot(s, `${lang}/64-release-resolve`)
    await s.click('[data-testid="release-next"]')
    await s.waitFor('[data-testid="release-confirm"]')
    await s.type('[data-testid="release-confirm"]', name)
    await screenshot(s, `${lang}/65-release-confirm`)
    await s.click('[data-testid="release-do"]')
    await s.waitFor('[data-testid="final-bill"]', { timeoutMs: 30_000 })
    const backups = await s.text('[data-testid="bill-backups"]')
    assert.ok(backups.includes(dir), `the bill lists the backup:\n${backups}`)
    assert.match(await s.text('[data-testid="bill-overrides"]'), lang === 'en' ? /Unpushed commits: scratch/ : /未推送的提交: 临时试验/)
    await screenshot(s, `${lang}/66-release-bill`)
    const shown = JSON.parse(execFileSync(CLI, ['cost', name, '--json', '--db', db], { encoding: 'utf8' }))
    assert.equal(shown.state, 'released', 'the ledger records the release')
  }

  it('en: scan, download, release wizard, bill', async () => {
    await backUpAndRelease('gpu-backup', 'en')
  })

  it('zh-CN: the same journey in Chinese', async () => {
    await switchLanguage(s, 'zh-CN')
    await backUpAndRelease('gpu-backup-zh', 'zh-CN')
  })
})

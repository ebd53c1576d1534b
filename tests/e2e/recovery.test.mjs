// A database that cannot be opened shows the recovery screen instead of ending the app: a damaged
// file, one written by a newer version, a full disk and a file locked by another program, each in
// English and Chinese (screenshots of every screen), and the ways out that apply to each.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const GARBAGE = 'this is not a database, just bytes left by a crashed copy\n'.repeat(200)

const TITLES = {
  corrupt: { en_US: 'The database file is damaged', zh_CN: '数据库文件已损坏' },
  newer_version: { en_US: 'This database comes from a newer Leasehold', zh_CN: '这个数据库来自更新版本的算力租用管家' },
  disk_full: { en_US: 'The disk is full', zh_CN: '磁盘已满' },
  locked: { en_US: 'Another program is using the database', zh_CN: '另一个程序正在使用数据库' },
}
const LANG_DIR = { en_US: 'en', zh_CN: 'zh-CN' }

/** A profile folder whose database is prepared by `prepare(dbPath)`. */
function profileWith(prepare) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-recovery-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  prepare(db)
  return { profile, db }
}

/** A real Leasehold database (made by the CLI) whose migration table names a migration from the future. */
function newerVersionDb(db) {
  execFileSync(CLI, ['instance', 'add', 'box', '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY', '--db', db])
  execFileSync(CLI, ['instance', 'start', 'box', '--db', db])
  execFileSync('python3', [
    '-c',
    `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (99990101, 'from a newer version', 1, x'00', 0)")
c.commit()
c.close()`,
    db,
  ])
}

/** Another process holding an exclusive lock on the database until it is killed. */
async function lockHolder(db) {
  const child = spawn('python3', [
    '-c',
    `import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA locking_mode=EXCLUSIVE")
c.execute("BEGIN EXCLUSIVE")
c.execute("CREATE TABLE IF NOT EXISTS held (x)")
print("locked", flush=True)
time.sleep(600)`,
    db,
  ])
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('locked') && resolve())
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)))
  })
  return child
}

async function expectRecovery(s, problem, language) {
  const screen = await s.waitFor('[data-testid="screen-recovery"]', { timeoutMs: 60_000 })
  assert.equal(await screen.attribute('data-problem'), problem)
  assert.equal(await s.text('h1'), TITLES[problem][language])
  await screenshot(s, `${LANG_DIR[language]}/recovery-${problem}`)
}

const buttons = (s) => s.execute('return [...document.querySelectorAll(\'button[data-testid^="recovery-"]\')].map((b) => b.dataset.testid)')

describe('recovery screen', () => {
  const cleanup = []
  after(() => {
    for (const step of cleanup.reverse()) step()
  })

  async function open(prepare, language) {
    const { profile, db } = profileWith(prepare)
    const app = await launchApp({ profile, language })
    cleanup.push(() => rmSync(profile, { recursive: true, force: true }))
    cleanup.push(() => app.close())
    return { app, s: app.session, profile, db }
  }

  it('a damaged file: explains it, keeps the file and starts fresh (English)', async () => {
    const { app, s, profile, db } = await open((db) => writeFileSync(db, GARBAGE), 'en_US')
    await expectRecovery(s, 'corrupt', 'en_US')
    assert.equal(await s.text('[data-testid="recovery-path"]'), db)
    assert.deepEqual(await buttons(s), ['recovery-open_copy', 'recovery-start_fresh', 'recovery-quit'])

    // Not a database at all: even a copy cannot be read, and the screen says so.
    await s.click('[data-testid="recovery-open_copy"]')
    await s.waitFor('[data-testid="recovery-error"]')
    await screenshot(s, 'en/recovery-corrupt-copy-failed')

    await s.click('[data-testid="recovery-start_fresh"]')
    await s.waitFor('[data-testid="onboarding-language"]', { timeoutMs: 60_000 })
    const kept = await s.text('[data-testid="kept-as-banner"]')
    const keptFile = readdirSync(profile).find((name) => /^leasehold-broken-\d{8}-\d{6}\.sqlite3$/.test(name))
    assert.ok(keptFile, `the damaged file is kept under a timestamped name (${readdirSync(profile)})`)
    assert.equal(readFileSync(path.join(profile, keptFile), 'utf8'), GARBAGE, 'the kept file is the damaged one, untouched')
    assert.ok(kept.includes(keptFile), `the banner names the kept file: ${kept}`)
    await screenshot(s, 'en/recovery-corrupt-started-fresh')
    await app.close()
  })

  it('a damaged file, in Chinese', async () => {
    const { app, s } = await open((db) => writeFileSync(db, GARBAGE), 'zh_CN')
    await expectRecovery(s, 'corrupt', 'zh_CN')
    assert.equal(await s.text('[data-testid="recovery-start_fresh"]'), '重新开始')
    await app.close()
  })

  for (const language of ['en_US', 'zh_CN']) {
    it(`a database from a newer version opens as a read-only copy (${language})`, async () => {
      const { app, s } = await open(newerVersionDb, language)
      await expectRecovery(s, 'newer_version', language)
      await s.click('[data-testid="recovery-open_copy"]')
      const banner = await s.text('[data-testid="read-only-banner"]')
      assert.match(banner, language === 'en_US' ? /Read-only/ : /只读/)
      // The copy shows what the database holds: the rental recorded by the newer version.
      await s.waitFor('[data-testid="screen-rentals"]')
      await s.waitFor('[data-testid="rental-card"]')
      const card = await s.execute('return document.querySelector(\'[data-testid="rental-card"]\').textContent')
      assert.ok(card.includes('box'), `the copy shows the rental it holds: ${card}`)
      // Nothing that would write can be clicked on the screens that stay open: the card's Stop,
      // the instance page's actions, the reminder rules.
      await s.waitFor('[data-testid="rental-card"] [data-testid="rental-stop"]')
      assert.equal(await s.execute('return document.querySelector(\'[data-testid="rental-stop"]\').disabled'), true, 'Stop on the card')
      await screenshot(s, `${LANG_DIR[language]}/recovery-newer-version-read-only`)
      await s.click('[data-testid="rental-card"][data-name="box"]')
      await s.waitFor('[data-testid="screen-instance"] header [data-testid="action-stop"]')
      const actions = await s.execute(
        'return [...document.querySelectorAll(\'header [data-testid^="action-"]\')].map((b) => [b.dataset.testid, b.disabled])',
      )
      assert.ok(actions.length >= 2 && actions.every(([, disabled]) => disabled), `every header action disabled: ${JSON.stringify(actions)}`)
      assert.equal(await s.execute('return document.querySelector(\'[data-testid="project-edit"]\').disabled'), true, 'the project')
      await screenshot(s, `${LANG_DIR[language]}/recovery-read-only-instance`)
      await s.click('[data-testid="nav-settings"]')
      await s.waitFor('[data-testid="remind-rows"]')
      assert.equal(await s.execute('return document.querySelector(\'[data-testid="remind-rows"]\').disabled'), true, 'the reminder rules')
      assert.equal(await s.execute('return document.querySelector(\'[data-testid="account-add"]\').disabled'), true, 'adding an account')
      // Screens that write say why they cannot, instead of failing at the first click.
      await s.click('[data-testid="nav-new-rental"]')
      const blocked = await s.text('[data-testid="read-only-blocked"]')
      assert.match(blocked, language === 'en_US' ? /read-only copy/ : /只读副本/)
      await screenshot(s, `${LANG_DIR[language]}/recovery-read-only-new-rental`)
      await app.close()
    })

    it(`a full disk offers to try again, not to start fresh (${language})`, async () => {
      // The database path is a link to /dev/full: every write SQLite makes fails with ENOSPC,
      // exactly as on a full disk.
      const { app, s } = await open((db) => symlinkSync('/dev/full', db), language)
      await expectRecovery(s, 'disk_full', language)
      assert.deepEqual(await buttons(s), ['recovery-retry', 'recovery-open_copy', 'recovery-quit'])
      await s.click('[data-testid="recovery-retry"]')
      await s.waitFor('[data-testid="recovery-still-failing"]')
      await app.close()
    })

    it(`a locked file can be retried once the other program lets go (${language})`, async () => {
      const { profile, db } = profileWith(() => {})
      cleanup.push(() => rmSync(profile, { recursive: true, force: true }))
      const holder = await lockHolder(db)
      cleanup.push(() => holder.kill('SIGKILL'))
      const app = await launchApp({ profile, language })
      cleanup.push(() => app.close())
      const s = app.session
      await expectRecovery(s, 'locked', language)
      assert.deepEqual(await buttons(s), ['recovery-retry', 'recovery-open_copy', 'recovery-quit'])
      holder.kill('SIGTERM')
      await waitFor(() => holder.exitCode !== null || holder.signalCode !== null, { what: 'the lock holder to exit' })
      await s.click('[data-testid="recovery-retry"]')
      await s.waitFor('[data-testid="onboarding-language"]', { timeoutMs: 60_000 })
      await app.close()
    })
  }
})

// Team mode through the real window against a real PostgreSQL (Debian's server, tests/e2e/lib/
// postgres.mjs) and a real keychain (a private Secret Service, tests/e2e/lib/secret-service.mjs):
// Bob, a second laptop (the CLI with its own database and HOME), records a running 2 × A100 and
// syncs; in the app, Settings → Team connects this ledger to the same team with the password typed
// into the form (it lands in the keychain; the app never sees PGPASSWORD), and the Team page shows
// the members, Bob's running instance with its burn rate, the month's spend and, once this laptop's
// monitor history says its GPUs sat idle for 45 minutes, the "left running" alert; a team budget set
// in the page reaches Bob's CLI and fires the app's team reminder, which the popup lists under the
// team's name with a way to the Team page. Alice then names herself to be told about any member's
// instance left running (after 40 idle minutes): Bob's CLI sees the setting, and the app raises a
// team "left running" reminder for Bob's idle A100. Bob opts in to share his last Verify result and
// the Team page shows it. Then Bob and Carol (a third
// laptop) both record the release of one shared instance while apart: the Team page shows the
// conflict with both sides, "Keep carol's" settles it, and Bob's next sync bills Carol's release.
// Last, this laptop and Carol's each rent an instance of the same name: Carol's is shown here as
// "lab-h100@carol" with a notice, dismissed once read. Screenshots in English and Chinese.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun, goTo, switchLanguage } from './lib/flows.mjs'
import { PG_PASSWORD, startPostgres } from './lib/postgres.mjs'
import { keychainHas, startSecretService } from './lib/secret-service.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const MINUTE = 60_000
const idle = '[data-testid="reminder"][data-instance="bob-a100"][data-kind="gpu_idle"]'

/** A minute as the monitor's history stores it (sqlx's RFC 3339 text). */
const minuteText = (ms) => new Date(Math.floor(ms / MINUTE) * MINUTE).toISOString().replace('.000Z', '+00:00')

/** The monitor's minute history for `instance` in `db`: both GPUs at 0 % for each minute given,
 * as the background sampler records an idle instance. */
function recordIdleMinutes(db, instance, minutes) {
  execFileSync(
    'python3',
    [
      '-c',
      `import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
(iid,) = c.execute('SELECT id FROM instances WHERE name = ?', (sys.argv[2],)).fetchone()
for minute in sys.argv[3:]:
    for gpu in (0, 1):
        c.execute('INSERT OR IGNORE INTO gpu_minutes (instance_id, gpu_index, minute, samples, utilization_avg, '
                  'utilization_max, memory_used_max_mib, memory_total_mib) VALUES (?, ?, ?, 12, 0.0, 0, 512, 81920)',
                  (iid, gpu, minute))
c.commit()`,
      db,
      instance,
      ...minutes,
    ],
    { stdio: 'inherit' },
  )
}

describe('team mode', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-team-'))
  const db = path.join(profile, 'leasehold.sqlite3')
  const laptops = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-team-laptops-'))
  let pg
  let secrets
  let app
  let s

  /** The CLI on another member's laptop: its own database and HOME, the password from PGPASSWORD. */
  function laptop(member, ...args) {
    return execFileSync(CLI, [...args, '--db', path.join(laptops, `${member}.sqlite3`)], {
      env: { ...process.env, HOME: path.join(laptops, member), PGPASSWORD: PG_PASSWORD, TEAM_PW: PG_PASSWORD },
      encoding: 'utf8',
    })
  }
  const at = (msAgo) => new Date(Date.now() - msAgo).toISOString()

  before(async () => {
    pg = await startPostgres()
    secrets = await startSecretService()
    laptop('bob', 'team', 'connect', '--url', pg.url, '--member', 'bob', '--team', 'lab', '--password-env', 'TEAM_PW')
    const started = at(60 * MINUTE)
    laptop('bob', 'instance', 'add', 'bob-a100', '--gpu', 'A100', '--count', '2', '--price', '12', '--currency', 'CNY', '--project', 'llm-finetune', '--at', started)
    laptop('bob', 'instance', 'start', 'bob-a100', '--at', started)
    laptop('bob', 'team', 'sync')
    // The app gets the keychain and nothing else: no PGPASSWORD, no ~/.pgpass.
    const env = { ...secrets.env }
    delete process.env.PGPASSWORD
    app = await launchApp({ profile, language: 'en_US', env })
    s = app.session
    await finishFirstRun(s)
  })

  after(async () => {
    await app?.close()
    await pg?.stop()
    await secrets?.stop()
    rmSync(profile, { recursive: true, force: true })
    rmSync(laptops, { recursive: true, force: true })
  })

  it('connects in Settings → Team with the password kept in the keychain', async () => {
    await goTo(s, 'settings')
    await s.scrollTo('[data-testid="team-settings"]')
    await s.type('[data-testid="team-url-input"]', 'not a url')
    await s.type('[data-testid="team-member-input"]', 'alice')
    await s.type('[data-testid="team-team-input"]', 'lab')
    await s.click('[data-testid="team-connect"]')
    const invalid = await s.waitFor('[data-testid="team-settings"] [data-code="team.invalid_url"]')
    assert.match(await invalid.text(), /postgres:\/\/USER@HOST:PORT\/DATABASE/)

    await s.type('[data-testid="team-url-input"]', pg.url)
    await s.type('[data-testid="team-password-input"]', 'not-the-password')
    await s.click('[data-testid="team-connect"]')
    const refused = await s.waitFor('[data-testid="team-settings"] [data-code="team.wrong_password"]', { timeoutMs: 30_000 })
    assert.match(await refused.text(), /leasehold/, 'names the user')
    assert.equal(keychainHas(secrets.address, `${new URL(pg.url).port}`), false, 'a refused password is not kept')

    await s.type('[data-testid="team-password-input"]', PG_PASSWORD)
    await s.click('[data-testid="team-connect"]')
    const report = await s.waitFor('[data-testid="team-report"]', { timeoutMs: 60_000 })
    assert.equal(await report.text(), 'Sent 0, received 2.')
    assert.equal(await s.text('[data-testid="team-url"]'), pg.url, 'the URL is shown without a password')
    assert.equal((await s.findAll('[data-testid="team-keychain-missing"]')).length, 0, 'the password is in the keychain')
    assert.ok(keychainHas(secrets.address, `@127.0.0.1:${new URL(pg.url).port}/team`), 'the keychain holds the team password')

    // The next sync logs in with the kept password alone.
    await s.click('[data-testid="team-sync"]')
    await waitFor(async () => (await s.text('[data-testid="team-report"]')) === 'Sent 0, received 0.', { what: 'a second sync' })
    await s.scrollTo('[data-testid="team-settings"]')
    await screenshot(s, 'en/60-team-settings')
  })

  it('shows members, running instances with their burn, the month, the team budget and a left-running alert', async () => {
    const now = Date.now()
    recordIdleMinutes(db, 'bob-a100', Array.from({ length: 45 }, (_, i) => minuteText(now - (44 - i) * MINUTE)))
    await goTo(s, 'team')
    const row = await s.waitFor('[data-testid="team-running-row"]', { timeoutMs: 30_000 })
    const text = await row.text()
    assert.match(text, /bob-a100/)
    assert.match(text, /bob/)
    assert.match(text, /2 × A100/)
    assert.match(text, /24\.00/, 'two GPUs at 12 an hour')
    const members = await s.text('[data-testid="team-members"]')
    assert.match(members, /alice/)
    assert.match(members, /bob/)
    assert.match(members, /24\.00/, "bob's burn")
    const month = await s.text('[data-testid="team-month"]')
    assert.match(month, /bob/)
    assert.match(month, /A100/)
    assert.match(month, /llm-finetune/, 'the spend by project')
    const alert = await s.waitFor('[data-testid="team-left-running-row"]', { timeoutMs: 30_000 })
    const alertText = await alert.text()
    assert.match(alertText, /bob-a100/)
    assert.match(alertText, /bob/)
    assert.match(alertText, /45 min/)
    assert.match(alertText, /18\.00/, '45 idle minutes at 24 an hour')
    // Alice sets the team's budget for the month: Bob's A100 has spent about 24 of 40 so far.
    await s.type('[data-testid="team-budget-amount"]', 'forty')
    await s.click('[data-testid="team-budget-save"]')
    await s.waitFor('[data-testid="team-budget-error"]')
    await s.type('[data-testid="team-budget-amount"]', '40')
    await s.click('[data-testid="team-budget-save"]')
    const budget = await s.waitFor('[data-testid="team-budgets"] [data-testid="budget"]', { timeoutMs: 30_000 })
    assert.equal(await budget.attribute('data-threshold'), '50')
    assert.equal(JSON.parse(laptop('bob', 'team', 'status', '--json')).budgets[0].amount, '40.00', 'the team shares it')
    await screenshot(s, 'en/61-team-page')
    // The app's reminder scheduler tells this member too (desktop and webhooks; under Xvfb there is
    // no notification service, so the app's log is where it shows).
    const logs = path.join(profile, 'data', 'leasehold', 'logs')
    await waitFor(
      () => readdirSync(logs).some((file) => /team reminder fired.*budget_50/.test(readFileSync(path.join(logs, file), 'utf8'))),
      { timeoutMs: 90_000, intervalMs: 1000, what: 'the team budget reminder to fire' },
    )
  })

  it('lists team reminders in the popup and tells the members the team names about an instance left running', async () => {
    const budgetReminder = '[data-testid="reminder"][data-scope="team"][data-kind="budget_50"]'
    const leftRunning = '[data-testid="reminder"][data-scope="team"][data-kind="gpu_idle"]'
    await goTo(s, 'settings')
    await s.waitFor(budgetReminder, { timeoutMs: 90_000 })
    const budgetText = await s.text(budgetReminder)
    assert.match(budgetText, /Team lab/, 'the team is named')
    // The title says how much is used now (Bob's A100 has spent about 24 of 40: about 60 %), the
    // same figure as the line under it, never the 50 % tier that fired the reminder. Both are read
    // from one look at the card, so a refresh in between cannot split them.
    const used = /Team budget: (\d+(?:\.\d)?)% used/.exec(budgetText)
    assert.ok(used, `the title names the figure used: ${budgetText}`)
    const figure = Number(used[1])
    assert.ok(figure >= 50 && figure < 100, `about 24 of 40 spent, past the first tier and within the budget: ${used[0]}`)
    assert.notEqual(used[1], '50', `the figure now, not the tier: ${used[0]}`)
    const below = /(\d+(?:\.\d)?)% of the budget/.exec(budgetText)
    assert.equal(below?.[1], used[1], 'the title and the line under it say the same figure')
    await s.click(`${budgetReminder} [data-testid="reminder-open-team"]`)
    await waitFor(async () => (await s.text('[data-testid="page-title"]')) === 'Team', { what: 'the Team page' })

    // Nobody named yet: only an instance's own member is told, and Alice is not bob-a100's.
    const summary = '[data-testid="team-alerts-summary"]'
    assert.match(await s.text(summary), /Each instance's own member is told after 30 idle minutes/)
    assert.match(await s.text(summary), /This is the default; any member can change it/)
    assert.equal((await s.findAll(leftRunning)).length, 0, 'no team alert for Alice yet')

    // The monitor goes on seeing bob-a100 idle (the stretch that began in the last test).
    const now = Date.now()
    recordIdleMinutes(db, 'bob-a100', Array.from({ length: 45 }, (_, i) => minuteText(now - (44 - i) * MINUTE)))
    await s.scrollTo('[data-testid="team-alerts"]')
    await s.type('[data-testid="team-alerts-minutes"]', '2')
    await s.click('[data-testid="team-alerts-save"]')
    assert.match(await (await s.waitFor('[data-testid="team-alerts-error"]')).text(), /between 5 and 1440/)
    await s.click('[data-testid="team-alerts-member"][data-member="alice"]')
    await s.type('[data-testid="team-alerts-minutes"]', '40')
    await s.click('[data-testid="team-alerts-save"]')
    await waitFor(async () => /own member and alice are told after 40 idle minutes\. Set by alice/.test(await s.text(summary)), {
      what: 'the saved alert setting',
    })
    laptop('bob', 'team', 'sync')
    const bobs = JSON.parse(laptop('bob', 'team', 'status', '--json'))
    assert.deepEqual(bobs.alerts, { recipients: ['alice'], after_minutes: 40, set_by: 'alice' }, 'the team shares it')

    // One card per problem: while this laptop's own idle reminder for bob-a100 is open, the team's
    // alert about the same instance is not shown beside it. Dismissed, the own one stays away (the
    // idle stretch keeps its start, so it is the same occurrence every minute) and the team's
    // alert, which names bob, takes its place.
    await s.waitFor(idle, { timeoutMs: 90_000 })
    assert.equal((await s.findAll(leftRunning)).length, 0, 'the same idle instance is not told twice')
    await s.click(`${idle} [data-testid="reminder-dismiss"]`)
    await s.waitGone(idle)
    await s.waitFor(leftRunning, { timeoutMs: 90_000 })
    const alertText = await s.text(leftRunning)
    assert.match(alertText, /bob left bob-a100 running/)
    assert.match(alertText, /Team lab/)
    assert.match(alertText, /idle for 4\d min/)
    await s.scrollTo('[data-testid="team-left-running"]')
    await screenshot(s, 'en/63-team-alerts')

    // Bob shares his last Verify (off until he says so); the Team page shows it at its next look.
    laptop('bob', 'team', 'share-verify', 'on')
    execFileSync(
      'python3',
      [
        '-c',
        `import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
(iid,) = c.execute("SELECT id FROM instances WHERE name = 'bob-a100'").fetchone()
c.execute("INSERT INTO probe_runs (instance_id, target, collected_at, facts, findings, finding_keys, errors, warnings) "
          "VALUES (?, 'root@gpu:22', ?, '{}', '[]', '[\\"driver.mismatch@gpu0\\"]', 1, 2)", (iid, sys.argv[2]))
c.commit()`,
        path.join(laptops, 'bob.sqlite3'),
        minuteText(Date.now() - 5 * MINUTE),
      ],
      { stdio: 'inherit' },
    )
    laptop('bob', 'team', 'sync')
    const verifyRow = await s.waitFor('[data-testid="team-verify-row"]', { timeoutMs: 60_000 })
    const verifyText = await verifyRow.text()
    assert.match(verifyText, /bob-a100/)
    assert.match(verifyText, /1 error, 2 warnings/)
    assert.match(verifyText, /bob/)
    assert.equal(await (await s.find('[data-testid="team-share-verify"]')).property('checked'), false, "Alice's own sharing is off by default")

    // Closed, a team reminder stays closed.
    await s.click(`${budgetReminder} [data-testid="reminder-dismiss"]`)
    await s.waitGone(budgetReminder)
    await new Promise((resolve) => setTimeout(resolve, 35_000))
    assert.equal((await s.findAll(budgetReminder)).length, 0, 'the next tick does not bring it back')
    assert.equal((await s.findAll(idle)).length, 0, 'nor the dismissed idle reminder')
  })

  it('shows the same team page in Chinese', async () => {
    await switchLanguage(s, 'zh-CN')
    await s.scrollTo('[data-testid="team-settings"]')
    await screenshot(s, 'zh-CN/60-team-settings')
    await goTo(s, 'team')
    await s.waitFor('[data-testid="team-running-row"]', { timeoutMs: 30_000 })
    await waitFor(async () => (await s.text('[data-testid="page-title"]')) === '团队', { what: 'Team page in Chinese' })
    assert.match(await s.text('[data-testid="team-alerts-summary"]'), /空闲 40 分钟后，提醒实例所属的成员以及 alice。\s*由 alice 设置。/)
    assert.match(await s.text('[data-testid="reminder"][data-scope="team"][data-kind="gpu_idle"]'), /bob 的 bob-a100 还开着/)
    await s.scrollTo('[data-testid="team-left-running"]')
    await screenshot(s, 'zh-CN/63-team-alerts')
    assert.match(await s.text('[data-testid="team-verify-row"]'), /1 个错误，2 个警告/)
    assert.match(await s.text('[data-testid="team-running"]'), /正在运行/)
    // 45 idle minutes or more: the stretch has gone on since the English page was looked at.
    assert.match(await s.text('[data-testid="team-left-running-row"]'), /空闲 4\d 分钟/)
    assert.equal((await s.findAll(idle)).length, 0, 'the idle reminder dismissed in English stays away')
    await screenshot(s, 'zh-CN/61-team-page')
    // A team reminder can be put off like an instance's: an hour later it comes back once (core's
    // tick, tested there); with nothing left open the popup is gone.
    const teamIdle = '[data-testid="reminder"][data-scope="team"][data-kind="gpu_idle"]'
    await s.click(`${teamIdle} [data-testid="reminder-snooze-hour"]`)
    await s.waitGone('[data-testid="reminder-popup"]')
    const snoozed = execFileSync('python3', ['-c', 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM team_reminders WHERE kind = \'gpu_idle\' AND julianday(snoozed_until) > julianday(\'now\', \'+50 minutes\')").fetchone()[0])', db], { encoding: 'utf8' })
    assert.equal(snoozed.trim(), '1', 'put off for an hour')
    await s.scrollTo('[data-testid="team-verify"]')
    await screenshot(s, 'zh-CN/64-team-verify')
  })
  it('shows a release recorded on two laptops with both sides, and keeps the one chosen for everyone', async () => {
    const created = at(120 * MINUTE)
    laptop('bob', 'instance', 'add', 'shared-4090', '--gpu', 'RTX 4090', '--count', '1', '--price', '3', '--currency', 'CNY', '--at', created)
    laptop('bob', 'instance', 'start', 'shared-4090', '--at', created)
    laptop('bob', 'team', 'sync')
    laptop('carol', 'team', 'connect', '--url', pg.url, '--member', 'carol', '--team', 'lab', '--password-env', 'TEAM_PW')
    laptop('carol', 'team', 'sync')
    // Offline from each other, both record the release: Bob an hour ago, Carol half an hour ago.
    laptop('bob', 'instance', 'release', 'shared-4090', '--at', at(60 * MINUTE))
    laptop('carol', 'instance', 'release', 'shared-4090', '--at', at(30 * MINUTE))
    laptop('bob', 'team', 'sync')
    laptop('carol', 'team', 'sync')
    const cost = () => JSON.parse(laptop('bob', 'cost', 'shared-4090', '--json')).total
    assert.equal(cost(), '3.00', "one hour at 3: the first release, Bob's, stands")

    await goTo(s, 'settings')
    await s.click('[data-testid="team-sync"]')
    await waitFor(async () => /收到 [1-9]/.test(await s.text('[data-testid="team-report"]')), { what: 'the releases to arrive' })
    await goTo(s, 'team')
    const card = '[data-testid="team-conflicts-card"]'
    await s.waitFor(`${card} [data-testid="team-conflict"]`, { timeoutMs: 30_000 })
    assert.match(await s.text(`${card} [data-testid="team-conflict-standing"]`), /当前计入账单/)
    await s.scrollTo(card)
    await screenshot(s, 'zh-CN/62-team-conflict')

    await switchLanguage(s, 'en')
    await goTo(s, 'team')
    await s.waitFor(`${card} [data-testid="team-conflict"]`)
    assert.match(await s.text(`${card} [data-testid="team-conflict-standing"]`), /bob.*Released/s)
    assert.match(await s.text(`${card} [data-testid="team-conflict-refused"]`), /carol.*Released/s)
    assert.match(await s.text(`${card} [data-testid="team-conflict"]`), /shared-4090/)
    await s.scrollTo(card)
    assert.equal((await s.findAll(idle)).length, 0, 'the dismissed idle reminder did not come back')
    await screenshot(s, 'en/62-team-conflict')
    await s.scrollTo('[data-testid="team-verify"]')
    await screenshot(s, 'en/64-team-verify')

    // Carol was right: keep hers. The choice is a new record; it reaches Bob at his next sync.
    await s.click(`${card} [data-testid="team-conflict-keep-refused"]`)
    await s.waitGone('[data-testid="team-conflict"]', { timeoutMs: 30_000 })
    await s.waitFor(`${card} [data-testid="team-no-conflicts"]`)
    await goTo(s, 'settings')
    await s.click('[data-testid="team-sync"]')
    await waitFor(async () => (await s.text('[data-testid="team-report"]')) === 'Sent 0, received 0.', { what: 'the sync to finish' })
    const bobs = JSON.parse(laptop('bob', 'team', 'sync', '--json'))
    assert.deepEqual(bobs.conflicts, [], "Bob's laptop settles the same way")
    assert.equal(cost(), '4.50', "an hour and a half at 3: Carol's release is the one billed now")
  })
  it("keeps a teammate's instance whose name is taken here under another name, with a notice dismissed once read", async () => {
    // This laptop and Carol's each rent an H100 named "lab-h100".
    const rented = at(10 * MINUTE)
    execFileSync(CLI, ['instance', 'add', 'lab-h100', '--gpu', 'H100', '--count', '1', '--price', '20', '--currency', 'CNY', '--at', rented, '--db', db])
    laptop('carol', 'instance', 'add', 'lab-h100', '--gpu', 'H100', '--count', '1', '--price', '18', '--currency', 'CNY', '--at', rented)
    laptop('carol', 'team', 'sync')

    await goTo(s, 'settings')
    await s.click('[data-testid="team-sync"]')
    await waitFor(async () => /^Sent 1, received [1-9]/.test(await s.text('[data-testid="team-report"]')), { what: "Carol's H100 to arrive" })
    await goTo(s, 'team')
    const notice = '[data-testid="team-conflicts-card"] [data-testid="team-conflict"][data-kind="name_collision"]'
    await s.waitFor(notice, { timeoutMs: 30_000 })
    assert.match(await s.text(notice), /carol has an instance with the same name as one of yours; it is shown here as lab-h100@carol/)
    await s.scrollTo(notice)
    await screenshot(s, 'en/65-team-name-notice')
    await switchLanguage(s, 'zh-CN')
    await goTo(s, 'team')
    await s.waitFor(notice)
    assert.match(await s.text(notice), /在这里显示为 lab-h100@carol/)
    await s.scrollTo(notice)
    await screenshot(s, 'zh-CN/65-team-name-notice')

    await s.click(`${notice} [data-testid="team-conflict-dismiss"]`)
    await s.waitGone(notice, { timeoutMs: 30_000 })
    await s.waitFor('[data-testid="team-conflicts-card"] [data-testid="team-no-conflicts"]')
    // Both instances stay, each billed on its own.
    const names = JSON.parse(execFileSync(CLI, ['instance', 'list', '--json', '--db', db], { encoding: 'utf8' })).map((i) => i.name)
    assert.ok(names.includes('lab-h100') && names.includes('lab-h100@carol'), names.join(', '))
  })

})

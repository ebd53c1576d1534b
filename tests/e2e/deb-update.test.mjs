// The self-update for real on Linux: the build under test is packaged twice with Tauri's own
// bundler (as the installed version and as 99.0.0, each shipping a marker file with its version),
// the older .deb is installed with dpkg, the installed app is started from /usr/bin, and it is
// offered the newer one from a loopback server, signed with a throwaway key. "Install and
// restart" must download it, check its signature, install it through the updater's own path
// (pkexec, a graphical sudo or sudo → dpkg -i) and start the app again from the new package.
// Installing a system package needs root: CI runs as root; elsewhere this file is skipped.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { finishFirstRun } from './lib/flows.mjs'
import { freePort } from './lib/net.mjs'
import { waitFor } from './lib/webdriver.mjs'

const TAURI = path.resolve('ui/node_modules/.bin/tauri')
const INSTALLED = '/usr/bin/leasehold-app'
const MARKER = '/usr/share/leasehold/release'
const NEW_VERSION = '99.0.0'
const PACKAGE = 'leasehold'

const isRoot = process.getuid?.() === 0
const alreadyInstalled = () => {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Status}', PACKAGE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('installed')
  } catch {
    return false
  }
}
const why = !isRoot ? 'installing a .deb needs root (CI runs as root)' : alreadyInstalled() ? `a ${PACKAGE} package is installed on this machine; not replacing it` : false

const installedVersion = () => execFileSync('dpkg-query', ['-W', '-f=${Version}', PACKAGE], { encoding: 'utf8' }).trim()

/** Processes running the installed app, by their executable (the restarted one has a new pid). */
function installedAppPids() {
  const pids = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readlinkSync(`/proc/${entry}/exe`).replace(/ \(deleted\)$/, '') === INSTALLED) pids.push(Number(entry))
    } catch {
      // gone, or not ours to read
    }
  }
  return pids
}

/** The build under test, packaged by Tauri's bundler as `version`, with its version in MARKER. */
function packageAs(stage, version) {
  const marker = path.join(stage, `release-${version}`)
  writeFileSync(marker, `${version}\n`)
  const config = { version, bundle: { linux: { deb: { files: { [MARKER]: marker } } } } }
  execFileSync(TAURI, ['bundle', '--debug', '--bundles', 'deb', '--config', JSON.stringify(config)], {
    env: { ...process.env, CARGO_TARGET_DIR: stage },
    stdio: 'ignore',
  })
  return path.join(stage, 'debug', 'bundle', 'deb', `Leasehold_${version}_amd64.deb`)
}

describe('a .deb update installs and the app restarts from the new package', { skip: why }, () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-deb-update-'))
  const stage = path.join(profile, 'stage')
  let server
  let app
  let s
  let before_pids = []
  let currentVersion

  before(async () => {
    // The bundler reads the binary from CARGO_TARGET_DIR/debug: a copy, so the build under test
    // stays exactly as built.
    mkdirSync(path.join(stage, 'debug'), { recursive: true })
    copyFileSync(BINARY, path.join(stage, 'debug', 'leasehold-app'))
    currentVersion = JSON.parse(readFileSync('src-tauri/tauri.conf.json', 'utf8')).version
    const older = packageAs(stage, currentVersion)
    const newer = packageAs(stage, NEW_VERSION)
    execFileSync('dpkg', ['-i', older], { stdio: 'ignore' })
    assert.equal(installedVersion(), currentVersion)

    const key = path.join(profile, 'update.key')
    execFileSync(TAURI, ['signer', 'generate', '--ci', '-p', '', '-w', key], { stdio: 'ignore' })
    execFileSync(TAURI, ['signer', 'sign', '--app-version', NEW_VERSION, newer], {
      env: { ...process.env, TAURI_SIGNING_PRIVATE_KEY: readFileSync(key, 'utf8').trim(), TAURI_SIGNING_PRIVATE_KEY_PASSWORD: '' },
      stdio: 'ignore',
    })
    const port = await freePort()
    const manifest = JSON.stringify({
      version: NEW_VERSION,
      pub_date: '2026-12-01T08:00:00Z',
      notes: 'Stop now works again with RunPod REST v2.',
      platforms: {
        'linux-x86_64': { url: `http://127.0.0.1:${port}/${path.basename(newer)}`, signature: readFileSync(`${newer}.sig`, 'utf8').trim() },
      },
    })
    server = http.createServer((request, response) => {
      if (request.url === '/latest.json') response.end(manifest)
      else if (request.url === `/${path.basename(newer)}`) response.end(readFileSync(newer))
      else response.writeHead(404).end()
    })
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))

    app = await launchApp({
      profile,
      binary: INSTALLED,
      env: { LEASEHOLD_UPDATE_URLS: `http://127.0.0.1:${port}/latest.json`, LEASEHOLD_UPDATE_PUBKEY: readFileSync(`${key}.pub`, 'utf8').trim() },
    })
    s = app.session
    await finishFirstRun(s)
    before_pids = installedAppPids()
  })

  after(async () => {
    // The restarted app is no child of the WebDriver session: end it by hand.
    for (const pid of installedAppPids()) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    await app?.close()
    server?.close()
    try {
      execFileSync('dpkg', ['--purge', PACKAGE], { stdio: 'ignore' })
    } catch {
      // nothing was installed
    }
    rmSync(profile, { recursive: true, force: true })
  })

  it('runs the installed package, which is offered the newer version', async () => {
    assert.equal(before_pids.length, 1, `one installed app running (${before_pids})`)
    assert.equal(readFileSync(MARKER, 'utf8').trim(), currentVersion)
    await s.waitFor('[data-testid="update-dialog"] [data-testid="update-install"]', { timeoutMs: 60_000 })
    assert.match(await s.text('[data-testid="update-dialog"] h2'), /Leasehold 99\.0\.0 is available/)
    await screenshot(s, 'en/deb-update-01-offered')
  })

  it('installs the signed package with dpkg and starts the app again from it', async () => {
    await s.click('[data-testid="update-install"]')
    await waitFor(() => installedVersion() === NEW_VERSION, { timeoutMs: 120_000, intervalMs: 500, what: `dpkg to list ${PACKAGE} ${NEW_VERSION}` })
    assert.equal(readFileSync(MARKER, 'utf8').trim(), NEW_VERSION, 'the new package’s files are in place')
    // What was last seen goes into the failure message: an old app still running and no new one
    // are different bugs. 120 s: make test runs this beside the Windows cross-build on two cores.
    let seen = ''
    const restarted = await waitFor(
      () => {
        const now = installedAppPids().filter((pid) => !before_pids.includes(pid))
        const oldAlive = before_pids.filter((pid) => existsSync(`/proc/${pid}`))
        seen = `old still running: [${oldAlive}], new: [${now}]`
        return oldAlive.length === 0 && now.length === 1 ? now[0] : null
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the old app to exit and a new one to start from the installed package' },
    ).catch((error) => {
      throw new Error(`${error.message} (${seen})`)
    })
    // The new process got as far as opening its database with the same data folder.
    const logs = path.join(profile, 'data', 'leasehold', 'logs')
    await waitFor(
      () => readdirSync(logs).some((file) => (readFileSync(path.join(logs, file), 'utf8').match(/ starting/g) ?? []).length >= 2),
      { timeoutMs: 30_000, what: 'the restarted app to log its start' },
    )
    assert.ok(existsSync(`/proc/${restarted}`), 'the restarted app keeps running')
  })
})

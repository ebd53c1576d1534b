// Launches the real Leasehold binary through tauri-driver (which drives WebKitWebDriver) with a
// private home and database, and tears everything down again. One tauri-driver per launch, so each
// launch can get its own environment (system language) and relaunching tests "close and reopen".
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { freePort } from './net.mjs'
import { Session, waitFor } from './webdriver.mjs'

export const BINARY = process.env.LEASEHOLD_APP_BIN
export const SCREENSHOT_DIR = process.env.LEASEHOLD_SCREENSHOT_DIR

function portAnswers(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Processes started with this `LEASEHOLD_DB` (the app and its WebKit helpers), by pid. */
function processesUsing(db) {
  const marker = `LEASEHOLD_DB=${db}\0`
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(marker)
      } catch {
        return false
      }
    })
    .map(Number)
}

function signal(pids, sig) {
  for (const pid of pids) {
    try {
      process.kill(pid, sig)
    } catch {
      // already gone
    }
  }
}

/**
 * Provider APIs point at a closed port on this machine unless a test passes its stand-in: the
 * app's background refreshes (accounts, market) never reach the internet from a test.
 */
const OFFLINE_PROVIDERS = Object.fromEntries(
  ['RUNPOD', 'VAST', 'LAMBDA', 'AUTODL'].map((provider) => [`LEASEHOLD_${provider}_API_URL`, 'http://127.0.0.1:9']),
)

/** Where the browser stand-in writes each address the app asked the system to open. */
export const openedUrlsFile = (profile) => path.join(profile, 'opened-urls.txt')

/**
 * A PATH whose `xdg-open` writes the address it was given to `openedUrlsFile` instead of
 * starting a browser: the tests see what the app opened, and nothing opens on the test machine.
 */
function browserStandIn(profile, callerPath = '') {
  const bin = path.join(profile, 'browser-bin')
  mkdirSync(bin, { recursive: true })
  const script = path.join(bin, 'xdg-open')
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${openedUrlsFile(profile).replace(/'/g, "'\\''")}'\n`)
  chmodSync(script, 0o755)
  return `${bin}:${callerPath}`
}

/**
 * Start the app. `profile` is a folder used as HOME and XDG data/config home; `language` is the
 * system locale the app sees (e.g. "en_US"); `env` adds variables (e.g. `GTK_THEME`).
 * `locale` instead sets LANG to exactly that (e.g. "C.UTF-8", with no LANGUAGE or LC_ALL), as a
 * minimal Debian install has it; `plain` leaves out the rendering variables the tests set, so the
 * app starts the way `make run` starts it from the caller's environment. `binary` starts another
 * copy of the app (an installed one) instead of the build under test.
 */
export async function launchApp({ profile, language = 'en_US', locale, plain = false, env: extraEnv = {}, binary = BINARY }) {
  if (!binary) throw new Error('LEASEHOLD_APP_BIN is not set; run through tests/e2e/run.sh')
  const [port, nativePort] = [await freePort(), await freePort()]
  const db = path.join(profile, 'leasehold.sqlite3')
  const caller = { ...process.env }
  let system
  if (locale !== undefined) {
    for (const name of Object.keys(caller)) if (name.startsWith('LC_') || name === 'LANGUAGE') delete caller[name]
    system = { LANG: locale }
  } else {
    // navigator.language follows LANG; run.sh compiles the locales into LOCPATH.
    system = { LANG: `${language}.UTF-8`, LC_ALL: '', LANGUAGE: language }
  }
  const rendering = plain
    ? {}
    : {
        // Xvfb has no GPU: render in software, without accelerated compositing (GL emulated on
        // the CPU only costs time on a 2-core machine).
        WEBKIT_DISABLE_COMPOSITING_MODE: '1',
        // Under a Chinese locale GTK defaults to the XIM input method; with no XIM server on
        // Xvfb, the window stops repainting once a text field has focus. GTK's own method avoids it.
        GTK_IM_MODULE: 'gtk-im-context-simple',
      }
  const forced = plain ? {} : { WEBKIT_DISABLE_DMABUF_RENDERER: '1', LIBGL_ALWAYS_SOFTWARE: '1', PATH: browserStandIn(profile, extraEnv.PATH ?? caller.PATH) }
  const env = {
    ...caller,
    HOME: profile,
    XDG_DATA_HOME: path.join(profile, 'data'),
    XDG_CONFIG_HOME: path.join(profile, 'config'),
    XDG_CACHE_HOME: path.join(profile, 'cache'),
    LEASEHOLD_DB: db,
    ...system,
    ...rendering,
    ...OFFLINE_PROVIDERS,
    ...extraEnv,
    ...forced,
  }
  // Output goes to a file, not to this process: an app outliving its session must not hold the
  // test runner's pipes open.
  const log = openSync(path.join(profile, `tauri-driver-${port}.log`), 'a')
  const driver = spawn('tauri-driver', ['--port', String(port), '--native-port', String(nativePort)], {
    env,
    stdio: ['ignore', log, log],
  })
  const exited = new Promise((resolve) => driver.once('exit', resolve))
  try {
    await waitFor(() => portAnswers(port), { timeoutMs: 30_000, what: `tauri-driver on port ${port}` })
    await waitFor(() => portAnswers(nativePort), { timeoutMs: 30_000, what: `WebKitWebDriver on port ${nativePort}` })
    const session = await waitFor(
      () => Session.create(`http://127.0.0.1:${port}`, { 'tauri:options': { application: binary } }),
      { timeoutMs: 60_000, intervalMs: 500, what: 'a WebDriver session with the app' },
    )
    return {
      session,
      async close() {
        await session.close().catch(() => {})
        driver.kill('SIGTERM')
        await exited
        // WebKitWebDriver exits after its session; wait until its port is really released.
        await waitFor(async () => !(await portAnswers(nativePort)), { timeoutMs: 15_000, what: 'WebKitWebDriver to exit' })
        // Normally the app quit with the session; if it did not, end it (found by its database).
        signal(processesUsing(db), 'SIGTERM')
        await waitFor(() => processesUsing(db).length === 0, { timeoutMs: 10_000, what: 'the app to exit' }).catch(() =>
          signal(processesUsing(db), 'SIGKILL'),
        )
      },
    }
  } catch (error) {
    driver.kill('SIGTERM')
    await exited
    signal(processesUsing(db), 'SIGKILL')
    throw error
  }
}

export const WINDOW_TITLE = 'Leasehold · 算力租用管家'

/** The X window id of the app's main window (found by its title). */
function windowId() {
  const tree = execFileSync('xwininfo', ['-root', '-tree'], { encoding: 'utf8' })
  const line = tree.split('\n').find((row) => row.includes(`"${WINDOW_TITLE}"`))
  const id = line?.trim().split(/\s+/)[0]
  if (!id) throw new Error(`no window titled ${WINDOW_TITLE} on ${process.env.DISPLAY}`)
  return id
}

/**
 * Save the window as `<SCREENSHOT_DIR>/<name>.png`; returns the file path. Captured from the X
 * server (ImageMagick's `import`) after the page has painted two frames: WebKitWebDriver's own
 * screenshot command hangs at random under Xvfb.
 */
export async function screenshot(session, name) {
  await session.executeAsync('const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done(true)))')
  const file = path.join(SCREENSHOT_DIR, `${name}.png`)
  mkdirSync(path.dirname(file), { recursive: true })
  execFileSync('import', ['-window', windowId(), file])
  return file
}

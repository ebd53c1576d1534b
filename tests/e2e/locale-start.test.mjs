// The window opens whatever the system's locale: under C.UTF-8 (minimal Debian and Ubuntu,
// containers, WSL), under a locale no one knows, and the way `make run` starts it — the caller's
// own environment with none of the rendering variables the other GUI tests set. Each time the
// first screen (the language choice) and then the welcome must be on screen, in English, never a
// blank page or the start-up failure screen.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { launchApp, screenshot } from './lib/app.mjs'

async function welcomeUnder(options, shot) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-locale-'))
  const app = await launchApp({ profile, ...options })
  try {
    const s = app.session
    await s.waitFor('[data-testid="onboarding-language"], [data-testid="startup-failure"]', { timeoutMs: 60_000 })
    const failure = await s.execute(
      'const f = document.querySelector(\'[data-testid="startup-failure"]\'); return f ? f.textContent : null',
    )
    assert.equal(failure, null, `the page failed to start: ${failure}`)
    assert.match(await s.text('h1'), /Choose your language/)
    await s.click('[data-testid="onboarding-next"]')
    await s.waitFor('[data-testid="onboarding-welcome"]')
    assert.match(await s.text('h1'), /Welcome to Leasehold/)
    await screenshot(s, shot)
  } finally {
    await app.close()
    rmSync(profile, { recursive: true, force: true })
  }
}

describe('starting under any system locale', () => {
  it('shows the welcome in English under C.UTF-8', async () => {
    await welcomeUnder({ locale: 'C.UTF-8' }, 'en/00-start-c-utf8')
  })

  it('shows the welcome in English under a locale the system does not know', async () => {
    await welcomeUnder({ locale: 'xx_YY.UTF-8' }, 'en/00-start-unknown-locale')
  })

  it('shows the welcome started as make run starts it (no test-only variables, POSIX locale)', async () => {
    await welcomeUnder({ locale: 'POSIX', plain: true }, 'en/00-start-plain')
  })
})

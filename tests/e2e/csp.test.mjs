// The content security policy is live in the real window: an inline script injected into the page
// does not run, eval is refused, and the violation is reported; the app itself (its own bundle,
// its styles, IPC to the backend) still works under it.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { launchApp, screenshot } from './lib/app.mjs'

describe('content security policy', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-csp-'))
  let app
  let s

  before(async () => {
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('runs the app under the policy: its bundle, styles and IPC work', async () => {
    // The welcome screen needs the backend (preferences come over IPC) and the bundled CSS.
    await s.waitFor('[data-testid="onboarding-language"]')
    const button = await s.execute(
      'return getComputedStyle(document.querySelector(\'[data-testid="onboarding-next"]\')).backgroundColor',
    )
    assert.equal(button, 'rgb(15, 118, 110)', 'the bundled stylesheet applied (the accent colour)')
    await screenshot(s, 'en/csp-welcome')
  })

  it('blocks an inline script and eval, and reports the violation', async () => {
    const result = await s.executeAsync(`
      const done = arguments[arguments.length - 1]
      const violations = []
      document.addEventListener('securitypolicyviolation', (event) => violations.push(event.violatedDirective))
      window.__leaseholdInlineRan = false
      const script = document.createElement('script')
      script.textContent = 'window.__leaseholdInlineRan = true'
      document.body.appendChild(script)
      let evalRefused = false
      try {
        window.eval('window.__leaseholdEvalRan = true')
      } catch (error) {
        evalRefused = true
      }
      setTimeout(() => done({ ran: window.__leaseholdInlineRan, evalRefused, evalRan: !!window.__leaseholdEvalRan, violations }), 300)
    `)
    assert.equal(result.ran, false, 'an injected inline script must not run')
    assert.equal(result.evalRan, false, 'eval must not run code')
    assert.equal(result.evalRefused, true, 'eval must throw under the policy')
    assert.ok(
      result.violations.some((directive) => directive.startsWith('script-src')),
      `the inline script is reported as a script-src violation (got ${JSON.stringify(result.violations)})`,
    )
  })
})

// Steps several GUI tests share, written the way a person clicks through them.
import { waitFor } from './webdriver.mjs'

/** First run with the system language kept: language → welcome → currency → New rental. */
export async function finishFirstRun(s) {
  await s.click('[data-testid="onboarding-next"]')
  await s.click('[data-testid="onboarding-start"]')
  await s.click('[data-testid="onboarding-finish"]')
  await s.waitFor('[data-testid="screen-new-rental"] [data-testid="wizard"]')
}

export async function fill(s, field, text) {
  await s.type(`[data-testid="field-${field}"]`, text)
}

export async function value(s, field) {
  return (await s.waitFor(`[data-testid="field-${field}"]`)).property('value')
}

/** Wait until the wizard shows `step`. */
export function onStep(s, step) {
  return s.waitFor(`[data-testid="wizard"][data-step="${step}"]`)
}

export async function next(s, toStep) {
  await s.click('[data-testid="wizard-next"]')
  await onStep(s, toStep)
}

export async function goTo(s, section) {
  await s.click(`[data-testid="nav-${section}"]`)
  await s.waitFor(`[data-testid="screen-${section}"]`)
}

/** Wait until the text of `css` differs from `before` (a ticking number); returns the new text. */
export function changedText(s, css, before, what) {
  return waitFor(
    async () => {
      const text = await s.text(css)
      return text !== before ? text : null
    },
    { timeoutMs: 30_000, intervalMs: 250, what },
  )
}

export async function switchLanguage(s, language) {
  await goTo(s, 'settings')
  await s.select('[data-testid="settings-language"]', language)
  const expected = language === 'en' ? 'Settings' : '设置'
  await waitFor(async () => (await s.text('[data-testid="page-title"]')) === expected, { what: `Settings in ${language}` })
}

/**
 * From an instance page: Connect with `sshCommand` and the key file `keyPath`, trusting the host
 * key the first time it is met, until the connection succeeds.
 */
export async function connectWithKey(s, sshCommand, keyPath) {
  await s.click('[data-testid="instance-connect"]')
  await s.waitFor('[data-testid="connect-where"]')
  await s.type('[data-testid="ssh-command"]', sshCommand)
  await s.click('[data-testid="connect-next"]')
  await s.waitFor('[data-testid="connect-login"]')
  await s.click('[data-testid="auth-key"]')
  await s.select('[data-testid="key-choice"]', '__custom__')
  await s.type('[data-testid="key-path"]', keyPath)
  await s.click('[data-testid="connect-next"]')
  await s.waitFor('[data-testid="connect-test"]')
  await s.click('[data-testid="connect-run"]')
  // The first connection to a host meets its key; a later one finds it trusted already.
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
}

// Choose GPU: pick a model and a task, see the memory parts and the cards that fit (a 7B LoRA
// fits a 24 GB card), see the price paid for an earlier rental, type a price and see the plan
// cost, and "Plan this rental" opens New rental with the choice in its draft. This machine has no
// NVIDIA GPU, which must read as a calm note. Screenshots of the screen in both languages.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CARD_4090 = '[data-testid="choose-candidate-rtx-4090x1"]'
const CARD_3090 = '[data-testid="choose-candidate-rtx-3090x1"]'
/** The CLI is built next to the app; it records the earlier rental the screen learns a price from. */
const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')

describe('choose GPU', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-choose-gpu-'))
  let app
  let s

  const attr = async (css, name) => (await s.waitFor(css)).attribute(name)
  const scrollTo = (css) =>
    s.execute('document.querySelector(arguments[0]).scrollIntoView({ block: "start" })', [css])
  /** Nothing on the screen is wider than the window (long Chinese or English text wraps). */
  const overflowing = () =>
    s.execute(`
      const main = document.querySelector('main')
      return main.scrollWidth > main.clientWidth + 1
        ? 'main scrolls sideways: ' + main.scrollWidth + ' > ' + main.clientWidth
        : [...main.querySelectorAll('*')]
            .filter((el) => el.clientWidth > 1 && el.scrollWidth > el.clientWidth + 1
              && (getComputedStyle(el).overflow === 'hidden' || el.matches('td, th'))
              && getComputedStyle(el).textOverflow !== 'ellipsis')
            .map((el) => (el.dataset.testid || el.className || el.tagName) + ' ' + el.scrollWidth + '>' + el.clientWidth
              + ' [' + [...el.children].map((c) => c.tagName + ':' + c.scrollWidth + '/' + c.clientWidth).join(' ') + ']')
            .join(', ')
    `)

  before(async () => {
    execFileSync(CLI, ['instance', 'add', 'last-month-3090', '--gpu', 'RTX 3090', '--count', '1', '--price', '1.32',
      '--currency', 'USD', '--db', path.join(profile, 'leasehold.sqlite3'), '--at', '2026-01-05T09:00:00Z'])
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    // First run, the quick way: welcome → language → currency (English system: USD proposed).
    await s.click('[data-testid="onboarding-next"]')
    await s.click('[data-testid="onboarding-start"]')
    await s.click('[data-testid="onboarding-finish"]')
    await s.waitFor('[data-testid="screen-new-rental"]')
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('opens from the sidebar with an estimate for the default model already there', async () => {
    await s.click('[data-testid="nav-choose-gpu"]')
    await s.waitFor('[data-testid="screen-choose-gpu"]')
    assert.equal(await s.text('[data-testid="page-title"]'), 'Choose a GPU')
    await s.waitFor('[data-testid="choose-memory"]')
    await s.waitFor('[data-testid="choose-candidates"]')
  })

  it('says calmly that this computer has no NVIDIA GPU, without any error', async () => {
    const note = await s.waitFor('[data-testid="choose-local"]')
    assert.equal(await note.attribute('data-state'), 'none')
    assert.match(await note.text(), /No local NVIDIA GPU/)
    const alerts = await s.findAll('[role="alert"]')
    assert.equal(alerts.length, 0, 'a laptop without an NVIDIA GPU is normal, not an error')
  })

  it('shows the memory parts of a 7B LoRA, with the formula behind each', async () => {
    await s.select('[data-testid="choose-model"]', 'qwen2.5-7b')
    await s.click('[data-testid="choose-task-lora"]')
    await s.waitFor('[data-testid="choose-training"]')
    // LoRA trains adapters: gradients and optimizer states appear in the bar.
    await waitFor(
      async () => (await s.findAll('[data-testid="choose-bar"] [data-part="optimizer"]')).length === 1,
      { what: 'the optimizer part in the bar after switching to LoRA' },
    )
    for (const part of ['weights', 'kv_cache', 'activations', 'gradients', 'optimizer', 'overhead']) {
      await s.waitFor(`[data-testid="choose-part-${part}"]`)
    }
    const parts = await s.execute(
      'return [...document.querySelectorAll("[data-testid=choose-bar] [data-part]")].map((el) => el.dataset.part)',
    )
    assert.deepEqual(parts, ['weights', 'activations', 'gradients', 'optimizer', 'overhead'],
      'training keeps no KV cache; every other part is drawn, in legend order')
    assert.match(await s.text('[data-testid="choose-total"]'), /^\d+(\.\d)? GiB$/)
    await s.click('[data-testid="choose-part-weights"] button')
    assert.match(await s.text('[data-testid="choose-formula-weights"]'), /7\.62B parameters × 2 bytes/)
    await s.click('[data-testid="choose-part-activations"] button')
    await s.waitFor('[data-testid="choose-formula-activations"]')
  })

  it('lists a 24 GB card as fitting a 7B LoRA on its own', async () => {
    const row = await s.waitFor(`[data-testid="choose-group-single"] ${CARD_4090}`)
    assert.equal(await row.attribute('data-fits'), 'true')
    assert.match(await row.text(), /RTX 4090/)
    assert.match(await row.text(), /24 GiB/)
    // The 3090 rented last month brings its price along; it is the only priced card, so first.
    const first = await s.execute(
      'return document.querySelector("[data-testid=choose-group-single] tr[data-fits]").dataset.testid',
    )
    assert.equal(first, 'choose-candidate-rtx-3090x1', 'the card with a known price comes first')
    assert.match(await s.text(`${CARD_3090} [data-testid="choose-price-rtx-3090-1"]`), /^\$1\.32\s+paid before$/)
    assert.equal(await s.text('[data-testid="choose-plan-rtx-3090x1"]'), '$13.20', '10 h × $1.32')
    assert.match(await s.text('[data-testid="choose-price-hint"]'), /Prices in USD/)
    assert.equal(await overflowing(), '', 'no text may overflow its box in English')
    await screenshot(s, 'en/choose-gpu-1-estimate')
  })

  it('ranks by plan cost once a price is typed next to a card', async () => {
    await s.click('[data-testid="choose-price-rtx-4090-1"]')
    await s.type('[data-testid="choose-price-rtx-4090-1-input"]', '2.5\uE007')
    await waitFor(async () => (await s.text('[data-testid="choose-plan-rtx-4090x1"]')) === '$25.00', {
      what: 'the 10-hour plan cost of the 4090 at $2.5/h',
    })
    const order = await s.execute(
      'return [...document.querySelectorAll("[data-testid=choose-group-single] tr[data-fits]")].slice(0, 2).map((r) => r.dataset.testid)',
    )
    assert.deepEqual(order, ['choose-candidate-rtx-3090x1', 'choose-candidate-rtx-4090x1'], 'priced cards first, cheapest plan first')
    await s.click(`${CARD_4090} .name`)
    await s.waitFor('[data-testid="choose-details-rtx-4090x1"]')
    await scrollTo('[data-testid="choose-candidates"]')
    await screenshot(s, 'en/choose-gpu-2-candidates')
  })

  it('reads in Chinese after switching the language, keeping the inputs', async () => {
    await s.click('[data-testid="nav-settings"]')
    await s.select('[data-testid="settings-language"]', 'zh-CN')
    await waitFor(async () => (await s.text('[data-testid="nav-choose-gpu"]')) === '选择 GPU', {
      what: 'the sidebar in Chinese',
    })
    await s.click('[data-testid="nav-choose-gpu"]')
    await waitFor(async () => (await s.text('[data-testid="page-title"]')) === '选择 GPU', { what: 'the title in Chinese' })
    await s.waitFor('[data-testid="choose-training"]') // LoRA came back from the draft
    // Chinese writes US dollars as US$, apart from the yuan's ¥ (the one money format, lib/format.ts).
    await waitFor(async () => (await s.text('[data-testid="choose-plan-rtx-4090x1"]')) === 'US$25.00', {
      what: 'the typed price to come back from the draft',
    })
    assert.match(await s.text('[data-testid="choose-local"]'), /本机没有 NVIDIA GPU/)
    await s.click('[data-testid="choose-part-weights"] button')
    await s.waitFor('[data-testid="choose-formula-weights"]')
    assert.equal(await overflowing(), '', 'no text may overflow its box in Chinese')
    await screenshot(s, 'zh-CN/choose-gpu-1-estimate')
    await s.click(`${CARD_4090} .name`)
    await scrollTo('[data-testid="choose-candidates"]')
    await screenshot(s, 'zh-CN/choose-gpu-2-candidates')
    await s.click('[data-testid="choose-toggle-too-small"]')
    await s.waitFor('[data-testid="choose-group-too-small"] tr[data-fits="false"]')
    await scrollTo('[data-testid="choose-group-too-small"]')
    await screenshot(s, 'zh-CN/choose-gpu-3-too-small')
  })

  it('"Plan this rental" opens New rental with the GPU, count, hours and price filled in', async () => {
    await s.click('[data-testid="choose-rent-rtx-4090x1"]')
    await s.waitFor('[data-testid="screen-new-rental"]')
    const draft = await s.executeAsync(`
      const done = arguments[0]
      window.__TAURI_INTERNALS__.invoke('load_draft', { wizard: 'new_rental' }).then(done, (e) => done({ error: e }))
    `)
    assert.equal(draft.step, null, 'New rental opens at its first step')
    assert.deepEqual(
      draft.values,
      { gpu_model: 'RTX 4090', gpu_count: '1', planned_hours: '10', price_per_gpu_hour: '2.5', currency: 'USD' },
      'the choice is in the New rental draft the form restores',
    )
    assert.equal(await attr('[data-testid="nav-new-rental"]', 'aria-current'), 'page')
  })

  it('a 70B model quantised to int4 needs a 48 GB card, or two 24 GB cards', async () => {
    await s.click('[data-testid="nav-choose-gpu"]')
    await s.select('[data-testid="choose-model"]', 'llama3.1-70b')
    await s.click('[data-testid="choose-task-inference"]')
    await s.select('[data-testid="choose-precision"]', 'int4')
    await s.waitFor('[data-testid="choose-group-single"] [data-testid="choose-candidate-l20x1"]')
    assert.equal((await s.findAll('[data-testid="choose-group-single"] [data-testid="choose-candidate-rtx-4090x1"]')).length, 0,
      'a single 24 GB card cannot hold 70B even at int4')
    await s.waitFor('[data-testid="choose-group-multi"] [data-testid="choose-candidate-rtx-4090x2"]')
    await s.click('[data-testid="choose-candidate-rtx-4090x2"] .name')
    assert.match(await s.text('[data-testid="choose-details-rtx-4090x2"]'), /张量并行|tensor-parallel/)
    assert.equal(await overflowing(), '', 'no text may overflow its box with the multi-GPU rows open')
    await scrollTo('[data-testid="choose-group-multi"]')
    await screenshot(s, 'zh-CN/choose-gpu-4-70b-int4')
  })
})

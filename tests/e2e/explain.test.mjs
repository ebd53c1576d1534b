// "Paste an error" on the instance page, through the real window: a CUDA OOM pasted with the
// task the renter planned gives the numbers, the cause, and the estimator's figures for each
// remedy; where the estimate is far above what the run measured it says so and leads with the
// smallest step that fits the measurement. In English and then in Chinese (the plan is kept with
// the instance in between).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BINARY, launchApp, screenshot } from './lib/app.mjs'
import { goTo, switchLanguage } from './lib/flows.mjs'
import { waitFor } from './lib/webdriver.mjs'

const CLI = path.join(path.dirname(BINARY ?? ''), 'leasehold')
const NAME = 'lora-box'
// The seeds' example: a 7B LoRA at batch 16 on a 24 GB card.
const OOM =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 23.70 GiB total capacity; ' +
  '22.14 GiB already allocated; 1.02 GiB free; 22.35 GiB reserved in total by PyTorch)'

describe('explain an error on the instance page', () => {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'leasehold-e2e-explain-'))
  let app
  let s

  async function openInstance() {
    await goTo(s, 'rentals')
    await s.click(`[data-testid="rental-card"][data-name="${NAME}"]`)
    await s.waitFor('[data-testid="screen-instance"] [data-testid="explain-box"]')
    await s.scrollTo('[data-testid="explain-box"]')
  }

  async function explainOom() {
    await s.type('[data-testid="explain-text"]', OOM)
    await s.click('[data-testid="explain-submit"]')
    return s.waitFor('[data-testid="oom-breakdown"]')
  }

  before(async () => {
    execFileSync(CLI, ['instance', 'add', NAME, '--gpu', 'RTX 4090', '--count', '1', '--price', '2.5', '--currency', 'CNY',
      '--db', path.join(profile, 'leasehold.sqlite3')])
    app = await launchApp({ profile, language: 'en_US' })
    s = app.session
    await s.click('[data-testid="onboarding-next"]')
    await s.click('[data-testid="onboarding-start"]')
    await s.click('[data-testid="onboarding-finish"]')
    await s.waitFor('[data-testid="screen-new-rental"]')
  })

  after(async () => {
    await app?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('shows the cause and the estimator figures for a pasted OOM, in English', async () => {
    await openInstance()
    await s.click('[data-testid="explain-use-plan"]')
    await s.select('[data-testid="explain-plan-task"]', 'lora')
    await s.type('[data-testid="explain-plan-params"]', '7')
    await s.select('[data-testid="explain-plan-precision"]', 'bf16')
    await s.type('[data-testid="explain-plan-context"]', '4096')
    await s.type('[data-testid="explain-plan-batch"]', '16')
    const breakdown = await explainOom()
    assert.equal(await breakdown.attribute('data-cause'), 'too_big')
    assert.equal(await s.text('[data-testid="oom-cause"]'), 'The job is too big')
    assert.equal(await s.text('[data-testid="oom-total"]'), '23.70 GiB', 'the card as the message gave it')
    assert.equal(await s.text('[data-testid="oom-tried"]'), '512 MiB')
    await s.waitFor('[data-testid="oom-plan"]')
    const halve = await s.text('[data-testid="oom-remedy"][data-remedy="halve_batch"]')
    assert.match(halve, /batch 16 → 8, gradient accumulation ×2/)
    assert.match(halve, /\d+\.\d GiB/, 'the estimator says what half the batch needs')
    await s.waitFor('[data-testid="oom-remedy"][data-remedy="qlora_instead_of_lora"]')
    assert.match(await s.text('[data-testid="oom-plan"]'), /Your planned task \(7B\) needs about \d+\.\d GiB\. This card offers 23\.7 GiB\./)
    // The plan's estimate is far above what the run had reached (23.2 GiB): said, and the
    // smallest change that fits the measurement leads, before the estimate's bigger cut.
    const disagrees = await s.waitFor('[data-testid="oom-disagrees"]')
    assert.equal(await disagrees.attribute('data-kind'), 'estimate_above_measurement')
    assert.match(await disagrees.text(), /The estimate \(\d+\.\d GiB\) is far above what the run had reached when it failed \(at least 23\.2 GiB\)/)
    const first = await s.waitFor('[data-testid="oom-measured-step"]')
    assert.equal(await first.attribute('data-fits'), 'true')
    assert.match(await first.text(), /Try this first — it fits what the run used\s+batch 16 → 8, gradient accumulation ×2 — about \d+\.\d GiB scaled to the measurement, fits this card\./)
    // Then the estimate's cheapest change that closes its gap; a bigger card comes last.
    const best = await s.waitFor('[data-testid="oom-best"]')
    assert.match(await best.text(), /^If that still runs out, the estimate's change:/)
    assert.equal(await best.attribute('data-fits'), 'true', 'a smaller batch with accumulation fits the 4090')
    assert.match(await best.text(), /batch 16 → \d+, gradient accumulation ×\d+ — about \d+\.\d GiB, fits this card/)
    assert.match(await s.text('[data-testid="oom-cards"]'), /Only if the setting cannot change — a bigger card: \S/)
    const steps = await s.text('[data-testid="explain-result"] [data-testid="finding"][data-code="oom.cuda"]')
    assert.doesNotMatch(steps, /turn on gradient checkpointing/, 'the estimate already assumes checkpointing')
    assert.match(steps, /The cheapest change that fits: batch 16 → \d+/)
    const finding = await s.waitFor('[data-testid="explain-result"] [data-testid="finding"][data-code="oom.cuda"]')
    assert.match(await finding.text(), /the job itself needs more than this card has/)
    await s.scrollTo('[data-testid="oom-breakdown"]')
    await screenshot(s, 'en/40-explain-oom')
    await s.scrollTo('[data-testid="oom-plan"]')
    await screenshot(s, 'en/41-explain-oom-plan')
  })

  it('says the same in Chinese, with the plan kept for the instance', async () => {
    await switchLanguage(s, 'zh-CN')
    await openInstance()
    await waitFor(async () => (await s.findAll('[data-testid="explain-plan-params"]')).length === 1, { what: 'the saved plan to fill the fields' })
    assert.equal(await (await s.find('[data-testid="explain-plan-params"]')).property('value'), '7')
    assert.equal(await (await s.find('[data-testid="explain-plan-batch"]')).property('value'), '16')
    const breakdown = await explainOom()
    assert.equal(await breakdown.attribute('data-cause'), 'too_big')
    assert.equal(await s.text('[data-testid="oom-cause"]'), '任务本身太大')
    assert.match(await s.text('[data-testid="oom-plan"]'), /你计划的任务（7B）约需 \d+\.\d GiB。这张卡可用 23\.7 GiB。/)
    assert.match(await s.text('[data-testid="oom-remedy"][data-remedy="halve_batch"]'), /batch 16 → 8，梯度累积 ×2/)
    assert.match(await s.text('[data-testid="oom-disagrees"]'), /估算（\d+\.\d GiB）远高于这次运行出错时实际用到的（至少 23\.2 GiB）/)
    assert.match(await s.text('[data-testid="oom-measured-step"]'), /先试这个：按实测放得下\s+batch 16 → 8，梯度累积 ×2：按实测折算约 \d+\.\d GiB，这张卡放得下。/)
    assert.match(await s.text('[data-testid="oom-best"]'), /batch 16 → \d+，梯度累积 ×\d+：约 \d+\.\d GiB，这张卡放得下。/)
    const finding = await s.waitFor('[data-testid="explain-result"] [data-testid="finding"][data-code="oom.cuda"]')
    assert.match(await finding.text(), /任务本身需要的显存超过了这张卡/)
    await s.scrollTo('[data-testid="oom-breakdown"]')
    await screenshot(s, 'zh-CN/40-explain-oom')
    await s.scrollTo('[data-testid="oom-plan"]')
    await screenshot(s, 'zh-CN/41-explain-oom-plan')
  })

  it('cannot be sent empty', async () => {
    // Empty the box; WebDriver's clear() fires no input event for the bound value.
    await s.execute(
      `const el = document.querySelector('[data-testid="explain-text"]'); el.value = ''; el.dispatchEvent(new Event('input', {bubbles: true}))`,
    )
    const disabled = await (await s.find('[data-testid="explain-submit"]')).property('disabled')
    assert.equal(disabled, true, 'nothing to explain, nothing to click')
  })
})

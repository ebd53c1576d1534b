import { describe, expect, it } from 'vitest'
import { DRAFT_VERSION, FORM_ERROR, REQUIRED_CODE, Wizard, type DraftStorage, type FieldErrors } from './wizard.svelte'

type Values = { name: string; price: string; budget: string }

const steps = [
  { id: 'what', fields: ['name'], required: ['name'] },
  { id: 'price', fields: ['price'], required: ['price'] },
  { id: 'budget', fields: ['budget'] },
] as const

/** Stands in for the backend's draft table: keeps what was saved, like the real one across restarts. */
class MemoryStorage implements DraftStorage {
  saved: unknown = null
  async load() {
    return this.saved === null ? null : structuredClone(this.saved)
  }
  async save(draft: unknown) {
    this.saved = structuredClone(draft)
  }
  async clear() {
    this.saved = null
  }
}

function makeWizard(storage: DraftStorage, validate: (v: Values) => Promise<FieldErrors> = async () => ({})) {
  return new Wizard<Values>({ steps, initial: { name: '', price: '', budget: '' }, storage, validate })
}

describe('Wizard', () => {
  it('keeps what was typed when stepping back and forward', async () => {
    const wizard = makeWizard(new MemoryStorage())
    wizard.set('name', 'lora-4090')
    expect(await wizard.next()).toBe(true)
    wizard.set('price', '2.50')
    await wizard.back()
    expect(wizard.step.id).toBe('what')
    expect(wizard.values.name).toBe('lora-4090')
    expect(await wizard.next()).toBe(true)
    expect(wizard.values.price, 'the price typed before stepping back must still be there').toBe('2.50')
  })

  it('resumes a new wizard (the app reopened) at the saved step with the saved values', async () => {
    const storage = new MemoryStorage()
    const first = makeWizard(storage)
    first.set('name', 'a100-run')
    await first.next()
    first.set('price', '8.90')
    await first.save()

    const reopened = makeWizard(storage)
    expect(await reopened.restore()).toBe(true)
    expect(reopened.step.id).toBe('price')
    expect(reopened.values).toEqual({ name: 'a100-run', price: '8.90', budget: '' })
    expect(reopened.furthest).toBe(1)
  })

  it('blocks Next on an empty required field without asking the backend', async () => {
    let asked = false
    const wizard = makeWizard(new MemoryStorage(), async () => {
      asked = true
      return {}
    })
    expect(await wizard.next()).toBe(false)
    expect(wizard.step.id).toBe('what')
    expect(wizard.errors.name?.code).toBe(REQUIRED_CODE)
    expect(asked, 'a missing field is caught locally; only real rules go to core').toBe(false)
  })

  it("shows core's error next to the step's own field and ignores errors of later steps", async () => {
    const core = async (values: Values): Promise<FieldErrors> => ({
      ...(values.name.includes(' ') ? { name: { code: 'billing.invalid_input', message: 'no spaces' } } : {}),
      price: { code: 'billing.invalid_input', message: 'price must be above zero' },
    })
    const wizard = makeWizard(new MemoryStorage(), core)
    wizard.set('name', 'bad name')
    expect(await wizard.next()).toBe(false)
    expect(Object.keys(wizard.errors)).toEqual(['name'])

    wizard.set('name', 'good-name')
    expect(wizard.errors.name, 'editing a field clears its error').toBeUndefined()
    expect(await wizard.next(), 'the price error belongs to the next step').toBe(true)
    wizard.set('price', '0')
    expect(await wizard.next()).toBe(false)
    expect(wizard.errors.price?.message).toBe('price must be above zero')
  })

  it('ignores a draft from an older format or for a step that no longer exists', async () => {
    const storage = new MemoryStorage()
    storage.saved = { version: DRAFT_VERSION + 1, step: 'price', furthest: 1, values: { name: 'x' } }
    expect(await makeWizard(storage).restore()).toBe(false)
    storage.saved = { version: DRAFT_VERSION, step: 'gone', furthest: 1, values: { name: 'x' } }
    expect(await makeWizard(storage).restore()).toBe(false)
    storage.saved = 'garbage'
    expect(await makeWizard(storage).restore()).toBe(false)
  })

  it('opens a draft another screen prepared (no step yet) at the first step with its values', async () => {
    const storage = new MemoryStorage()
    storage.saved = { version: DRAFT_VERSION, step: null, furthest: 2, values: { price: '2.20', extra: 'ignored' } }
    const wizard = makeWizard(storage)
    expect(await wizard.restore()).toBe(true)
    expect(wizard.step.id, 'a prepared draft starts where the user reviews everything').toBe('what')
    expect(wizard.values).toEqual({ name: '', price: '2.20', budget: '' })
    expect(wizard.furthest, 'steps already reached stay reachable').toBe(2)
  })

  it('only jumps back to steps already reached, and reset forgets the draft', async () => {
    const storage = new MemoryStorage()
    const wizard = makeWizard(storage)
    await wizard.goTo(2)
    expect(wizard.index, 'cannot skip ahead past unchecked steps').toBe(0)
    wizard.set('name', 'n')
    await wizard.next()
    wizard.set('price', '1')
    await wizard.next()
    await wizard.goTo(0)
    expect(wizard.step.id).toBe('what')
    await wizard.goTo(2)
    expect(wizard.step.id).toBe('budget')

    await wizard.reset()
    expect(storage.saved).toBeNull()
    expect(wizard.values.name).toBe('')
    expect(wizard.index).toBe(0)
  })
})

describe('Wizard errors outside the current step', () => {
  it('blocks on an error about the whole form', async () => {
    const wizard = makeWizard(new MemoryStorage(), async () => ({
      [FORM_ERROR]: { code: 'store.query', message: 'database is locked' },
    }))
    wizard.set('name', 'x')
    expect(await wizard.next()).toBe(false)
    expect(wizard.errors[FORM_ERROR]?.code).toBe('store.query')
  })

  it('jumps to the step that owns a field refused at the end', async () => {
    const wizard = makeWizard(new MemoryStorage())
    wizard.set('name', 'x')
    await wizard.next()
    wizard.set('price', '1')
    await wizard.next()
    wizard.showErrors({ name: { code: 'billing.duplicate_name', message: 'taken' } })
    expect(wizard.step.id).toBe('what')
    expect(wizard.errors.name?.code).toBe('billing.duplicate_name')
  })
})

describe('Wizard.isPristine', () => {
  it('is true until something is typed, so an untouched form leaves no draft behind', async () => {
    const wizard = makeWizard(new MemoryStorage())
    expect(wizard.isPristine).toBe(true)
    wizard.set('name', 'x')
    expect(wizard.isPristine).toBe(false)
    await wizard.reset()
    expect(wizard.isPristine).toBe(true)
  })
})

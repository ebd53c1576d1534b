// The step framework behind every multi-step flow ("New rental" now; Connect, Verify, Install …
// later). It owns: which step is showing, the values typed so far (kept when stepping back),
// per-field errors, and a draft saved after every change so closing the app loses nothing.
// What a step checks is not decided here: required fields are checked locally, every other
// rule comes from core through the `validate` callback.
import type { ApiError } from '../bindings/ApiError'

export interface StepDefinition<V extends object> {
  id: string
  /** Fields this step edits; errors on other fields do not block its Next button. */
  fields: readonly (keyof V & string)[]
  required?: readonly (keyof V & string)[]
}

/** Field name → the error to show next to it. */
export type FieldErrors = Record<string, ApiError>

export interface DraftStorage {
  load(): Promise<unknown>
  save(draft: unknown): Promise<void>
  clear(): Promise<void>
}

/** Key of an error about the whole form rather than one field; it always blocks. */
export const FORM_ERROR = '_form'

/** The required-field error; its code has a localized text like any backend code. */
export const REQUIRED_CODE = 'form.required'

/** Bumped when the shape of `values` changes incompatibly; older drafts are then ignored. */
export const DRAFT_VERSION = 1

interface SavedDraft<V> {
  version: number
  /** Null when another screen prepared the draft (Choose GPU's "Rent this"): start at step one. */
  step: string | null
  furthest: number
  values: Partial<V>
}

export class Wizard<V extends object> {
  readonly steps: readonly StepDefinition<V>[]
  index = $state(0)
  /** The furthest step reached; the progress indicator lets the user jump back to any step up to it. */
  furthest = $state(0)
  values: V
  errors = $state<FieldErrors>({})
  busy = $state(false)
  #initial: V
  #storage: DraftStorage
  #validate: (values: V) => Promise<FieldErrors>

  constructor(options: {
    steps: readonly StepDefinition<V>[]
    initial: V
    storage: DraftStorage
    validate: (values: V) => Promise<FieldErrors>
  }) {
    this.steps = options.steps
    this.#initial = options.initial
    this.values = $state({ ...options.initial })
    this.#storage = options.storage
    this.#validate = options.validate
  }

  get step(): StepDefinition<V> {
    return this.steps[this.index]
  }

  get isFirst(): boolean {
    return this.index === 0
  }

  get isLast(): boolean {
    return this.index === this.steps.length - 1
  }

  /** Nothing typed and nothing stepped through: not worth keeping as a draft. */
  get isPristine(): boolean {
    return (
      this.furthest === 0 &&
      (Object.keys(this.#initial) as (keyof V)[]).every((key) => this.values[key] === this.#initial[key])
    )
  }

  /** Bring back a saved draft, if there is a usable one. Returns whether it did. */
  async restore(): Promise<boolean> {
    const saved = (await this.#storage.load()) as SavedDraft<V> | null
    if (!saved || typeof saved !== 'object' || saved.version !== DRAFT_VERSION) return false
    const index = saved.step === null ? 0 : this.steps.findIndex((step) => step.id === saved.step)
    if (index < 0 || typeof saved.values !== 'object' || saved.values === null) return false
    for (const key of Object.keys(this.#initial) as (keyof V)[]) {
      if (key in saved.values) this.values[key] = saved.values[key] as V[keyof V]
    }
    this.index = index
    this.furthest = Math.min(Math.max(index, Number(saved.furthest) || 0), this.steps.length - 1)
    return true
  }

  /** Save the current state as the draft. Called after every change. */
  save(): Promise<void> {
    const draft: SavedDraft<V> = {
      version: DRAFT_VERSION,
      step: this.step.id,
      furthest: this.furthest,
      values: $state.snapshot(this.values) as Partial<V>,
    }
    return this.#storage.save(draft)
  }

  set<K extends keyof V>(field: K, value: V[K]): void {
    this.values[field] = value
    if (field in this.errors) {
      const { [field as string]: _cleared, ...rest } = this.errors
      this.errors = rest
    }
  }

  /** Check the current step (required fields here, every other rule in core) and go on if clean. */
  async next(): Promise<boolean> {
    this.busy = true
    try {
      const errors = await this.check(this.step)
      this.errors = errors
      if (Object.keys(errors).length > 0) return false
      if (!this.isLast) {
        this.index += 1
        this.furthest = Math.max(this.furthest, this.index)
      }
      await this.save()
      return true
    } finally {
      this.busy = false
    }
  }

  /** Check every step; on a failure, show the first step that has one. */
  async checkAll(): Promise<boolean> {
    for (const [index, step] of this.steps.entries()) {
      const errors = await this.check(step)
      if (Object.keys(errors).length > 0) {
        this.index = index
        this.errors = errors
        return false
      }
    }
    return true
  }

  /** Show errors found later (e.g. when saving): go to the first step owning one of the fields. */
  showErrors(errors: FieldErrors): void {
    const index = this.steps.findIndex((step) => step.fields.some((field) => field in errors))
    if (index >= 0) this.index = index
    this.errors = errors
  }

  async back(): Promise<void> {
    if (this.isFirst) return
    this.index -= 1
    this.errors = {}
    await this.save()
  }

  async goTo(index: number): Promise<void> {
    if (index < 0 || index > this.furthest || index === this.index) return
    this.index = index
    this.errors = {}
    await this.save()
  }

  /** Forget the draft and start over (after finishing, or when the user discards it). */
  async reset(): Promise<void> {
    for (const key of Object.keys(this.#initial) as (keyof V)[]) this.values[key] = this.#initial[key]
    this.index = 0
    this.furthest = 0
    this.errors = {}
    await this.#storage.clear()
  }

  private async check(step: StepDefinition<V>): Promise<FieldErrors> {
    const errors: FieldErrors = {}
    for (const field of step.required ?? []) {
      const value = this.values[field]
      if (value === undefined || value === null || String(value).trim() === '') {
        errors[field] = { code: REQUIRED_CODE, message: `${field} is required` }
      }
    }
    if (Object.keys(errors).length > 0) return errors
    const found = await this.#validate($state.snapshot(this.values) as V)
    for (const field of [...step.fields, FORM_ERROR]) {
      if (found[field]) errors[field] = found[field]
    }
    return errors
  }
}

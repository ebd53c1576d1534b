// "Wait until the typing stops, ask, and keep only the latest answer": the one helper every
// screen that asks core as the user types uses (Choose GPU, the estimate cards, Connect's preview).
// A task gets `isLatest`; an answer that arrives after a newer question was asked is dropped.

/** True while no newer question has been asked since this one. */
export type IsLatest = () => boolean

export type Task = (isLatest: IsLatest) => unknown

export class Debouncer {
  readonly delayMs: number
  #timer: ReturnType<typeof setTimeout> | undefined
  #generation = 0

  constructor(delayMs: number) {
    this.delayMs = delayMs
  }

  /** Run `task` once nothing else was scheduled for `delayMs`; a later call replaces it. */
  schedule(task: Task): void {
    clearTimeout(this.#timer)
    const isLatest = this.#next()
    this.#timer = setTimeout(() => void task(isLatest), this.delayMs)
  }

  /** Run `task` now, superseding what was scheduled or is still waiting for an answer. */
  async run(task: Task): Promise<void> {
    clearTimeout(this.#timer)
    await task(this.#next())
  }

  /** Forget what was scheduled, and drop the answer of what is running (the screen is closing). */
  cancel(): void {
    clearTimeout(this.#timer)
    this.#next()
  }

  #next(): IsLatest {
    const generation = ++this.#generation
    return () => generation === this.#generation
  }
}

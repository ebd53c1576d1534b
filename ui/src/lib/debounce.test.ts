import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Debouncer } from './debounce'

/** A question whose answer the test releases by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe('Debouncer', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('asks once, after the typing stops, with the last thing typed', () => {
    const debouncer = new Debouncer(250)
    const asked: string[] = []
    for (const text of ['s', 'ss', 'ssh']) {
      debouncer.schedule(() => asked.push(text))
      vi.advanceTimersByTime(100)
    }
    expect(asked, 'nothing while keys keep coming').toEqual([])
    vi.advanceTimersByTime(250)
    expect(asked).toEqual(['ssh'])
  })

  it('drops an answer that arrives after a newer question was asked', async () => {
    const debouncer = new Debouncer(10)
    const shown: string[] = []
    const slow = deferred<string>()
    const fast = deferred<string>()
    const ask = (answer: Promise<string>) => async (isLatest: () => boolean) => {
      const value = await answer
      if (isLatest()) shown.push(value)
    }
    debouncer.schedule(ask(slow.promise))
    vi.advanceTimersByTime(10)
    debouncer.schedule(ask(fast.promise))
    vi.advanceTimersByTime(10)
    fast.resolve('new')
    slow.resolve('old')
    await vi.runAllTimersAsync()
    await Promise.resolve()
    expect(shown, 'the older, slower answer must not overwrite the newer one').toEqual(['new'])
  })

  it('runs at once when asked to, replacing what was scheduled', async () => {
    const debouncer = new Debouncer(200)
    const asked: string[] = []
    debouncer.schedule(() => asked.push('scheduled'))
    await debouncer.run(() => asked.push('now'))
    vi.advanceTimersByTime(500)
    expect(asked).toEqual(['now'])
  })

  it('after cancel, nothing runs and a running question no longer counts', async () => {
    const debouncer = new Debouncer(50)
    const asked: string[] = []
    let stillLatest: (() => boolean) | undefined
    await debouncer.run((isLatest) => (stillLatest = isLatest))
    debouncer.schedule(() => asked.push('late'))
    debouncer.cancel()
    vi.advanceTimersByTime(100)
    expect(asked).toEqual([])
    expect(stillLatest?.()).toBe(false)
  })
})

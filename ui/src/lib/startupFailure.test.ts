import { describe, expect, it } from 'vitest'
import { failureDetails, showStartupFailure } from './startupFailure'

describe('the start-up failure screen', () => {
  it('replaces a blank page with what happened, in both languages, and the details to copy', () => {
    const target = document.createElement('div')
    const error = new RangeError('Incorrect locale information provided')
    showStartupFailure(target, error, 'navigator.language: "c"')
    const text = target.textContent ?? ''
    expect(text).toMatch(/Leasehold could not start/)
    expect(text).toMatch(/算力租用管家没能打开/)
    const details = target.querySelector('[data-testid="startup-failure-details"]')?.textContent ?? ''
    expect(details).toMatch(/RangeError: Incorrect locale information provided/)
    expect(details).toMatch(/navigator.language: "c"/)
    expect(target.querySelector('button')?.textContent).toMatch(/Copy the details/)
  })

  it('keeps the first cause when a second error follows it', () => {
    const target = document.createElement('div')
    showStartupFailure(target, new Error('first'), '')
    showStartupFailure(target, new Error('second'), '')
    expect(target.textContent).toMatch(/first/)
    expect(target.textContent).not.toMatch(/second/)
  })

  it('never treats what it is given as markup', () => {
    const target = document.createElement('div')
    showStartupFailure(target, '<img src=x onerror=alert(1)>', '')
    expect(target.querySelector('img')).toBeNull()
  })

  it('words errors that are not Error objects', () => {
    expect(failureDetails('plain words')).toBe('plain words')
    expect(failureDetails({ code: 'store.locked' })).toBe('{"code":"store.locked"}')
  })
})

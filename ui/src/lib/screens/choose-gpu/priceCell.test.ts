// The price cell opens its field focused with the text selected (an attachment forwarded through
// Input to the real <input>), so a price is typed over at once.
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Candidate } from '../../bindings/Candidate'
import { setupI18n } from '../../i18n'
import PriceCell from './PriceCell.svelte'

describe('price cell', () => {
  beforeAll(() => setupI18n('en'))
  afterEach(cleanup)

  it('opens a focused field with the price selected', async () => {
    const candidate = { gpu: 'NVIDIA GeForce RTX 4090', gpu_id: 'rtx-4090', count: 1, price_per_hour: '2.50', price_origin: 'entered' } as Candidate
    render(PriceCell, { candidate, currency: 'CNY', language: 'en', onsave: () => true })
    await fireEvent.click(screen.getByTestId('choose-price-rtx-4090-1'))
    const field = (await screen.findByTestId('choose-price-rtx-4090-1-input')) as HTMLInputElement
    expect(field.tagName).toBe('INPUT')
    expect(field.classList.contains('price-input')).toBe(true)
    expect(document.activeElement).toBe(field)
    expect(field.value).toBe('2.50')
    expect([field.selectionStart, field.selectionEnd]).toEqual([0, 4])
  })
})

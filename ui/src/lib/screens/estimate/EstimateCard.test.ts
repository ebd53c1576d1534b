import { cleanup, render, screen } from '@testing-library/svelte'
import { createRawSnippet } from 'svelte'
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { setupI18n } from '../../i18n'
import EstimateCard from './EstimateCard.svelte'

const form = createRawSnippet(() => ({ render: () => '<div class="grid">inputs</div>' }))
const result = createRawSnippet((answer: () => string) => ({
  render: () => `<output data-testid="answer">${answer()}</output>`,
}))

function card(run: (request: string) => Promise<string>, request: string | null) {
  return render(EstimateCard<string, string>, {
    inputs: { price: request ?? '' },
    build: () => ({ request, errors: {} }),
    run,
    testid: 'card',
    fillIn: 'Fill in the price.',
    form,
    result,
  })
}

describe('EstimateCard', () => {
  beforeAll(() => setupI18n('en'))
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => {
    cleanup()
    vi.useRealTimers()
  })

  it('asks core shortly after a change and shows its answer, with the inputs beside it', async () => {
    const run = vi.fn(async (request: string) => `total for ${request}`)
    card(run, '2.50')
    expect(screen.getByTestId('card').dataset.pending, 'waiting for the typing to stop').toBe('true')
    await vi.runAllTimersAsync()
    expect(run).toHaveBeenCalledWith('2.50')
    expect(screen.getByTestId('answer').textContent).toBe('total for 2.50')
    expect(screen.getByText('inputs')).toBeTruthy()
    expect(screen.getByTestId('card').dataset.pending).toBe('false')
  })

  it('shows the hint while incomplete and a refusal about the whole form as an alert', async () => {
    card(async () => 'never', null)
    await vi.runAllTimersAsync()
    expect(screen.getByTestId('card-fill-in').textContent).toBe('Fill in the price.')
    cleanup()

    card(() => Promise.reject({ code: 'billing.invalid_input', message: 'hours too large' }), '1')
    await vi.runAllTimersAsync()
    expect(screen.getByRole('alert').dataset.code).toBe('billing.invalid_input')
    expect(screen.queryByTestId('card-fill-in'), 'an error replaces the hint').toBeNull()
  })
})

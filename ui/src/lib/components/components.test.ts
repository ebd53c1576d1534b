// The one set of components renders what the screens and the GUI tests rely on: the test ids and
// attributes passed through, the checkbox a real keyboard-reachable checkbox, the variants' classes.
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { setupI18n } from '../i18n'
import Checkbox from './Checkbox.svelte'
import Input, { textWidth } from './Input.svelte'
import UnitInput from './UnitInput.svelte'

describe('components', () => {
  beforeAll(() => setupI18n('en'))
  afterEach(cleanup)

  it('Checkbox is a real checkbox that toggles and keeps its test id', async () => {
    render(Checkbox, { checked: false, 'data-testid': 'box' })
    const box = screen.getByTestId('box') as HTMLInputElement
    expect(box.type).toBe('checkbox')
    expect(box.classList.contains('checkbox')).toBe(true)
    expect(box.tabIndex).not.toBe(-1)
    await fireEvent.click(box)
    expect(box.checked).toBe(true)
  })

  it('Checkbox as a switch says so to screen readers', () => {
    render(Checkbox, { checked: true, switch: true, 'data-testid': 'sw' })
    expect(screen.getByTestId('sw').getAttribute('role')).toBe('switch')
  })

  it('Input renders a select sized to its longest option with fit', () => {
    render(Input, {
      value: 'min',
      fit: true,
      options: [
        { value: 'min', label: 'minutes' },
        { value: 'h', label: 'hours' },
      ],
      'data-testid': 'unit',
    })
    const select = screen.getByTestId('unit') as HTMLSelectElement
    expect(select.tagName).toBe('SELECT')
    expect(select.value).toBe('min')
    expect(select.style.width).toContain('8ch')
  })

  it('counts a CJK character as two Latin ones', () => {
    expect(textWidth('minutes')).toBe(7)
    expect(textWidth('分钟')).toBe(4)
  })

  it('UnitInput keeps its field-<id> test id and shows its unit inside', () => {
    render(UnitInput, { id: 'price', label: 'Price', value: '2.5', unit: '元/卡·时' })
    const input = screen.getByTestId('field-price') as HTMLInputElement
    expect(input.value).toBe('2.5')
    expect(input.id).toBe('price')
    expect(input.classList.contains('input')).toBe(true)
    expect(input.parentElement?.textContent).toContain('元/卡·时')
  })
})

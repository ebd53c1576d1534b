// The text on every button variant reads at 4.5:1 or better (WCAG AA) in the light and the dark
// theme, computed from app.css's own variables, so a new colour cannot quietly fail it.
import { describe, expect, it } from 'vitest'
import css from '../../app.css?raw'

/** The `--name: #hex` pairs of the first block that starts with `selector {`. */
function variables(selector: string): Record<string, string> {
  const start = css.indexOf(`${selector} {`)
  expect(start, `app.css has ${selector}`).toBeGreaterThanOrEqual(0)
  const body = css.slice(start, css.indexOf('}', start))
  return Object.fromEntries([...body.matchAll(/(--[\w-]+):\s*(#[0-9a-fA-F]{6})\s*;/g)].map((m) => [m[1], m[2]]))
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (hi + 0.05) / (lo + 0.05)
}

const light = variables(':root')
const dark = { ...light, ...variables(":root[data-theme='dark']") }

// Each variant's text colour on its background, at rest and hovered (`.btn` rules in app.css).
const PAIRS: [variant: string, text: string, background: string][] = [
  ['primary', '--accent-text', '--accent'],
  ['danger', '--danger-text', '--danger'],
  ['secondary', '--text', '--surface'],
  ['secondary hovered', '--text', '--surface-2'],
  ['danger-outline', '--danger', '--surface'],
  ['danger-outline hovered', '--danger', '--danger-soft'],
  ['quiet', '--accent', '--surface'],
  ['quiet hovered', '--accent', '--accent-soft'],
  ['quiet on the page', '--accent', '--bg'],
]

describe('button text contrast', () => {
  it('finds the palette of both themes', () => {
    expect(Object.keys(light).length).toBeGreaterThan(15)
    expect(dark['--surface']).not.toBe(light['--surface'])
  })
  for (const [theme, palette] of [
    ['light', light],
    ['dark', dark],
  ] as const) {
    for (const [variant, text, background] of PAIRS) {
      it(`${theme}: ${variant} is at least 4.5:1`, () => {
        const ratio = contrast(palette[text]!, palette[background]!)
        expect(ratio, `${text} on ${background}: ${ratio.toFixed(2)}:1`).toBeGreaterThanOrEqual(4.5)
      })
    }
  }
  it('computes the known ratios', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5)
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2)
  })
})

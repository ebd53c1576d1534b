// Every component says what it is for in its first lines, so a reader knows before reading the
// code: a comment right after the opening `<script>`, or an HTML comment at the top.
import { describe, expect, it } from 'vitest'

const components = import.meta.glob<string>('/src/**/*.svelte', { query: '?raw', import: 'default', eager: true })

describe('Svelte components', () => {
  it('each open with a comment saying what they are for', () => {
    expect(Object.keys(components).length).toBeGreaterThan(50)
    const silent = Object.entries(components)
      .filter(([, text]) => {
        const [first = '', second = ''] = text.split('\n')
        return !(first.startsWith('<!--') || (first.startsWith('<script') && second.trim().startsWith('//')))
      })
      .map(([file]) => file)
    expect(silent, 'components without a purpose comment').toEqual([])
  })
})

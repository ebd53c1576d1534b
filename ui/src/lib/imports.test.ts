// The UI's import graph has no circles, neither between files nor between folders (a screen's
// folder, `components`, `shell`, `backend` …): shared pieces live in their own module, so a
// screen never reaches back into what hosts it. Vite follows relative imports only, so reading
// them is enough; bindings are generated and left out (all leaves but calls.ts, which imports
// backend/ipc's `call` and is re-exported by backend/index: a circle between the two folders only
// by design, not between files). Timers live in the helpers that own
// them (debounce, poll), not hand-rolled in screens.
import { describe, expect, it } from 'vitest'

/** Every source file (tests and generated bindings left out), by its path under `src/`. */
const SOURCES: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(['/src/**/*.svelte', '/src/**/*.ts', '!/src/**/*.test.ts', '!/src/lib/bindings/**'], {
      query: '?raw',
      import: 'default',
      eager: true,
    }),
  ).map(([file, text]) => [file.replace(/^\/src\//, ''), text]),
)
const EXTENSIONS = ['', '.ts', '.svelte.ts', '.svelte', '.js']
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g

const path = {
  dirname: (file: string) => file.split('/').slice(0, -1).join('/'),
  /** `dir` + a relative specifier, with `.` and `..` resolved. */
  join(dir: string, spec: string): string {
    const parts = dir === '' ? [] : dir.split('/')
    for (const part of spec.split('/')) {
      if (part === '..') parts.pop()
      else if (part !== '.') parts.push(part)
    }
    return parts.join('/')
  },
}

/** File → the files it imports (paths under `src/`). */
export function fileGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const [file, text] of Object.entries(SOURCES)) {
    const edges = new Set<string>()
    for (const [, spec] of text.matchAll(IMPORT)) {
      const base = path.join(path.dirname(file), spec)
      const target = EXTENSIONS.map((ext) => base + ext).find((candidate) => candidate in SOURCES)
      if (target) edges.add(target)
    }
    graph.set(file, edges)
  }
  return graph
}

/** The same graph between folders: an edge when a file of one imports a file of another. */
export function folderGraph(files: Map<string, Set<string>>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const [file, targets] of files) {
    const from = path.dirname(file)
    const edges = graph.get(from) ?? new Set<string>()
    for (const target of targets) if (path.dirname(target) !== from) edges.add(path.dirname(target))
    graph.set(from, edges)
  }
  return graph
}

/** Every strongly connected group of more than one node (or a node importing itself). */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  // Tarjan's algorithm; the graph is a few hundred nodes, recursion depth is fine.
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter)
    counter += 1
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        group.push(member)
      } while (member !== node)
      if (group.length > 1 || graph.get(node)?.has(node)) found.push(group.sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

describe('the import graph', () => {
  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['shell', new Set(['screens/a'])],
      ['screens/a', new Set(['components'])],
      ['components', new Set(['shell'])],
      ['backend', new Set<string>()],
    ])
    expect(cycles(graph)).toEqual([['components', 'screens/a', 'shell']])
  })

  const files = fileGraph()

  it('reads the real imports', () => {
    expect(files.get('lib/shell/Shell.svelte'), 'the shell hosts the screens').toContain(
      'lib/screens/rentals/Rentals.svelte',
    )
  })

  it('has no circle between files', () => {
    expect(cycles(files)).toEqual([])
  })

  it('has no circle between folders', () => {
    expect(cycles(folderGraph(files))).toEqual([])
  })

  it('has one definition of each exported function (one formatMoney, one debounce …)', () => {
    const definedIn = new Map<string, string[]>()
    for (const file of files.keys()) {
      const text = SOURCES[file]
      for (const [, name] of text.matchAll(/export (?:async )?function (\w+)/g)) {
        definedIn.set(name, [...(definedIn.get(name) ?? []), file])
      }
    }
    const doubled = [...definedIn].filter(([, where]) => where.length > 1)
    expect(doubled, 'import the one there is instead of writing another').toEqual([])
  })

  it('keeps timers in the helpers: screens debounce with lib/debounce.ts', () => {
    const allowed = ['lib/debounce.ts', 'lib/poll.ts', 'lib/components/CopyButton.svelte']
    const handRolled = [...files.keys()].filter((file) => /\bsetTimeout\(/.test(SOURCES[file]) && !allowed.includes(file))
    expect(handRolled).toEqual([])
  })

  it('keeps every screen in a folder of its own, with its parts', () => {
    const flat = [...files.keys()].filter((file) => path.dirname(file) === 'lib/screens')
    expect(flat, 'one convention: lib/screens/<name>/').toEqual([])
  })
})

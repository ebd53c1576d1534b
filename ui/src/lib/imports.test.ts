// The UI's import graph has no circles, neither between files nor between folders (a screen's
// folder, `components`, `shell`, `backend` …): shared pieces live in their own module, so a
// screen never reaches back into what hosts it. Vite follows relative imports only, so reading
// them is enough; bindings are generated leaves and left out.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(__dirname, '..')
const EXTENSIONS = ['', '.ts', '.svelte.ts', '.svelte', '.js']
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'bindings' ? [] : sourceFiles(full)
    return /\.(ts|svelte)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [full] : []
  })
}

/** File → the files it imports (relative to `src`). */
export function fileGraph(): Map<string, Set<string>> {
  const files = sourceFiles(SRC)
  const known = new Set(files)
  const graph = new Map<string, Set<string>>()
  for (const file of files) {
    const edges = new Set<string>()
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const base = path.resolve(path.dirname(file), spec)
      const target = EXTENSIONS.map((ext) => base + ext).find((candidate) => known.has(candidate))
      if (target) edges.add(path.relative(SRC, target))
    }
    graph.set(path.relative(SRC, file), edges)
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

  it('keeps every screen in a folder of its own, with its parts', () => {
    const flat = [...files.keys()].filter((file) => path.dirname(file) === 'lib/screens')
    expect(flat, 'one convention: lib/screens/<name>/').toEqual([])
  })
})

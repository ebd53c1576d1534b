// The live log of a job: the last `keep` lines are kept (Explain reads the end of it), and only
// the last `view` of them are ever handed to the page, so the DOM and the memory stay the same
// size at a million lines as at 100. Text arrives in pieces cut anywhere; a line ends at `\n`,
// `\r\n`, or a bare `\r`, which a progress bar (`ollama pull`, curl) uses to redraw its line:
// what it drew is replaced, not kept. Each character is looked at once, and a line that never
// ends is passed on in pieces of `MAX_LINE`, so a hostile or binary log costs linear time.

/** Longest line held before it is passed on in pieces. */
export const MAX_LINE = 64 * 1024

/** The recipes' progress markers (`::leasehold::step 2/5 …`): read by core, never shown. */
export function isProtocolLine(line: string): boolean {
  return line.startsWith('::leasehold::')
}

export class LogBuffer {
  private lines: string[] = []
  /** The lines people read: the log without the protocol lines. */
  private readable: string[] = []
  private partial = ''
  /** A `\r` ended the last piece: the next may start with its `\n`. */
  private pendingReturn = false
  private seen = 0

  constructor(
    readonly view: number,
    readonly keep: number = Math.max(view, 20_000),
  ) {}

  /** Add a piece of the log. */
  append(text: string): void {
    let start = 0
    if (this.pendingReturn) {
      this.pendingReturn = false
      if (text.startsWith('\n')) {
        this.push(this.partial)
        this.partial = ''
        start = 1
      } else {
        this.partial = ''
      }
    }
    const ends = /[\r\n]/g
    ends.lastIndex = start
    for (let match = ends.exec(text); match; match = ends.exec(text)) {
      const at = match.index
      const line = this.partial + text.slice(start, at)
      start = at + 1
      if (text[at] === '\n') {
        this.push(line)
        this.partial = ''
      } else if (at + 1 === text.length) {
        // Maybe `\r\n` cut between two pieces: decided by the next one.
        this.partial = line
        this.pendingReturn = true
      } else if (text[at + 1] === '\n') {
        this.push(line)
        this.partial = ''
        start = at + 2
        ends.lastIndex = start
      } else {
        // A redraw: the line drawn so far is replaced by what follows.
        this.partial = ''
      }
    }
    if (this.pendingReturn) return
    this.partial += text.slice(start)
    while (this.partial.length >= MAX_LINE) {
      this.push(this.partial.slice(0, MAX_LINE))
      this.partial = this.partial.slice(MAX_LINE)
    }
  }

  private push(line: string): void {
    this.lines.push(line)
    if (!isProtocolLine(line)) this.readable.push(line)
    this.seen += 1
    // Trimmed in batches, so dropping old lines costs a constant per line.
    if (this.lines.length >= this.keep * 2) this.lines = this.lines.slice(-this.keep)
    if (this.readable.length >= this.keep * 2) this.readable = this.readable.slice(-this.keep)
  }

  /** Complete lines so far, including those no longer kept. */
  get total(): number {
    return this.seen
  }

  /** Lines held right now (at most twice `keep`). */
  get held(): number {
    return this.lines.length
  }

  /** What the page shows: the last `view` readable lines, and the line being written. */
  shown(): string[] {
    const tail = this.readable.slice(-this.view)
    return this.partial && !isProtocolLine(this.partial) ? tail.concat([this.partial]) : tail
  }

  /** The last `count` lines (markers included: Explain reads the failure marker) as one text. */
  tail(count: number): string {
    return this.lines
      .slice(-count)
      .concat(this.partial ? [this.partial] : [])
      .join('\n')
  }

  clear(): void {
    this.lines = []
    this.readable = []
    this.partial = ''
    this.pendingReturn = false
    this.seen = 0
  }
}

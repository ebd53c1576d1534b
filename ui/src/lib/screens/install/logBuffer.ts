// The live log of a job: every line is kept (Explain reads the end of it), but only the last
// `view` lines are ever handed to the page, so the DOM stays the same size at 100 000 lines as
// at 100. Text arrives in pieces cut anywhere; a line is complete at its newline.

/** The recipes' progress markers (`::leasehold::step 2/5 …`): read by core, never shown. */
export function isProtocolLine(line: string): boolean {
  return line.startsWith('::leasehold::')
}

export class LogBuffer {
  private lines: string[] = []
  /** The lines people read: the log without the protocol lines. */
  private readable: string[] = []
  private partial = ''

  constructor(readonly view: number) {}

  /** Add a piece of the log. */
  append(text: string): void {
    const parts = (this.partial + text).split(/\r?\n/)
    this.partial = parts.pop() ?? ''
    for (const line of parts) {
      this.lines.push(line)
      if (!isProtocolLine(line)) this.readable.push(line)
    }
  }

  /** Complete lines so far. */
  get total(): number {
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
  }
}

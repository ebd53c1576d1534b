// The live log of a job: every line is kept (Explain reads the end of it), but only the last
// `view` lines are ever handed to the page, so the DOM stays the same size at 100 000 lines as
// at 100. Text arrives in pieces cut anywhere; a line is complete at its newline.

export class LogBuffer {
  private lines: string[] = []
  private partial = ''

  constructor(readonly view: number) {}

  /** Add a piece of the log. */
  append(text: string): void {
    const parts = (this.partial + text).split(/\r?\n/)
    this.partial = parts.pop() ?? ''
    for (const line of parts) this.lines.push(line)
  }

  /** Complete lines so far. */
  get total(): number {
    return this.lines.length
  }

  /** What the page shows: the last `view` lines, and the line being written. */
  shown(): string[] {
    const tail = this.lines.slice(-this.view)
    return this.partial ? tail.concat([this.partial]) : tail
  }

  /** The last `count` lines with the line being written, as one text. */
  tail(count: number): string {
    return this.lines
      .slice(-count)
      .concat(this.partial ? [this.partial] : [])
      .join('\n')
  }

  clear(): void {
    this.lines = []
    this.partial = ''
  }
}

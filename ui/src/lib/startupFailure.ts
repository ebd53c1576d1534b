// The screen shown when the page itself fails to start: plain DOM, no Svelte, no i18n, no
// backend — any of those may be what failed. A window that stays blank tells the user nothing;
// this says what happened in both languages (the chosen one may be unknown yet) and gives the
// details to copy into a problem report.

/** The error's own words with its stack, as one text to copy. */
export function failureDetails(error: unknown): string {
  if (error instanceof AggregateError) {
    return error.errors.map(failureDetails).join('\n\n')
  }
  if (error instanceof Error) {
    const stack = error.stack && !error.stack.includes(error.message) ? `${error.message}\n${error.stack}` : error.stack
    return stack || `${error.name}: ${error.message}`
  }
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error)
  } catch {
    return String(error)
  }
}

function element(tag: string, text?: string, className?: string): HTMLElement {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  if (className) node.className = className
  return node
}

/** Replace whatever is in `target` with the failure screen; shown once, the first cause kept. */
export function showStartupFailure(target: HTMLElement, error: unknown, environment: string): void {
  if (target.querySelector('[data-testid="startup-failure"]')) return
  const details = `${failureDetails(error)}\n\n${environment}`
  const screen = element('main', undefined, 'startup-failure')
  screen.dataset.testid = 'startup-failure'
  screen.setAttribute('role', 'alert')
  screen.append(
    element('h1', '算力租用管家没能打开 · Leasehold could not start'),
    element('p', '界面在启动时出错，你的数据没有改动。请重启应用；如果仍然出现，请把下面的详情复制到问题反馈里。'),
    element('p', 'The window failed while starting; nothing in your data was changed. Restart the app; if this comes back, copy the details below into a problem report.'),
  )
  const pre = element('pre', details)
  pre.dataset.testid = 'startup-failure-details'
  const copy = element('button', '复制详情 · Copy the details', 'btn primary') as HTMLButtonElement
  copy.type = 'button'
  copy.addEventListener('click', () => {
    navigator.clipboard?.writeText(details).then(
      () => (copy.textContent = '已复制 · Copied'),
      () => {
        const range = document.createRange()
        range.selectNodeContents(pre)
        getSelection()?.removeAllRanges()
        getSelection()?.addRange(range)
      },
    )
  })
  screen.append(copy, pre)
  target.replaceChildren(screen)
}

/** What a report needs to know about where the page ran (no secrets: language tags and agent). */
export function startupEnvironment(): string {
  const languages = (navigator.languages ?? []).join(', ')
  return `navigator.language: ${JSON.stringify(navigator.language)}; languages: [${languages}]; agent: ${navigator.userAgent}`
}

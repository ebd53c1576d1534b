// A small W3C WebDriver client over fetch: the handful of endpoints the GUI tests need, with no
// dependency to install. Every wait polls; nothing sleeps for a fixed time to make a test pass.

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'

export class WebDriverError extends Error {
  constructor(method, path, status, value) {
    super(`${method} ${path} → ${status}: ${value?.error ?? ''} ${value?.message ?? JSON.stringify(value)}`)
    this.error = value?.error
  }
}

async function request(base, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  const value = text ? JSON.parse(text).value : null
  if (!response.ok) throw new WebDriverError(method, path, response.status, value)
  return value
}

/** Poll `probe` until it returns a truthy value or `timeoutMs` passes; returns that value. */
export async function waitFor(probe, { timeoutMs = 30_000, intervalMs = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs
  let lastError
  for (;;) {
    try {
      const value = await probe()
      if (value) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError.message}` : ''}`)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

export class Session {
  constructor(base, id) {
    this.base = base
    this.id = id
  }

  static async create(base, capabilities) {
    const value = await request(base, 'POST', '/session', { capabilities: { alwaysMatch: capabilities } })
    return new Session(base, value.sessionId)
  }

  cmd(method, path, body) {
    return request(this.base, method, `/session/${this.id}${path}`, body)
  }

  async find(css) {
    const value = await this.cmd('POST', '/element', { using: 'css selector', value: css })
    return new Element(this, value[ELEMENT])
  }

  async findAll(css) {
    const values = await this.cmd('POST', '/elements', { using: 'css selector', value: css })
    return values.map((value) => new Element(this, value[ELEMENT]))
  }

  /** Wait until an element matching `css` exists and is displayed. */
  waitFor(css, options = {}) {
    return waitFor(
      async () => {
        const element = await this.find(css)
        return (await element.displayed()) ? element : null
      },
      { what: `element ${css}`, ...options },
    )
  }

  waitGone(css, options = {}) {
    return waitFor(async () => (await this.findAll(css)).length === 0, { what: `${css} to go away`, ...options })
  }

  /** The element, scrolled to the middle of the window as a person would before using it:
   * WebKit's own scroll puts it at the top edge, under the instance page's sticky header, and
   * then refuses the click or the typing as "not interactable". */
  async inView(css) {
    const element = await this.waitFor(css)
    // A smooth scroll the page started (Raise the bid brings its field into view that way) would
    // carry the element on after ours and a click at its old place would land elsewhere: scroll,
    // then wait until it stands still for 40 ms.
    await this.executeAsync(
      `const [el, done] = arguments
       const top = () => el.getBoundingClientRect().top
       let last = NaN, still = 0, frames = 0
       el.scrollIntoView({ block: 'center', inline: 'nearest' })
       const tick = () => {
         const now = top()
         still = now === last ? still + 1 : 0
         last = now
         if (still >= 2 || ++frames > 120) {
           if (Math.abs(now - (innerHeight - el.getBoundingClientRect().height) / 2) > innerHeight / 2) el.scrollIntoView({ block: 'center' })
           done(null)
         } else setTimeout(tick, 20)
       }
       setTimeout(tick, 20)`,
      [element.ref()],
    )
    return element
  }

  async click(css) {
    // Focus first, then click where the element stands after that. WebKitGTK sometimes keeps a
    // stale, taller layout (a restored wizard step's card) until focus moves; the move then
    // shrinks the page mid-click, the mouse-up lands elsewhere and no click happens.
    await this.execute('arguments[0].focus({ preventScroll: true })', [(await this.waitFor(css)).ref()])
    const element = await this.inView(css)
    await element.click()
    return element
  }

  async text(css) {
    return (await this.waitFor(css)).text()
  }

  /** Replace the text of an input or textarea by typing, as a user would. */
  async type(css, text) {
    const element = await this.inView(css)
    await element.clear()
    if (text !== '') await element.sendKeys(text)
    return element
  }

  /** Select the option with `value` in a <select>. */
  async select(css, value) {
    const element = await this.waitFor(css)
    await this.execute(
      `const el = arguments[0]; el.value = arguments[1]; el.dispatchEvent(new Event('change', {bubbles: true}))`,
      [element.ref(), value],
    )
  }

  /** Scroll the element matching `css` to the top of its scrolling container. */
  async scrollTo(css) {
    const element = await this.waitFor(css)
    await this.execute(`arguments[0].scrollIntoView({block: 'start'})`, [element.ref()])
  }

  execute(script, args = []) {
    return this.cmd('POST', '/execute/sync', { script, args })
  }

  /** Run `script` in the page; it finishes by calling its last argument with the result. */
  executeAsync(script, args = []) {
    return this.cmd('POST', '/execute/async', { script, args })
  }

  /** Resize the window (the page's viewport follows), as a person drags its corner. */
  async resize(width, height) {
    await this.cmd('POST', '/window/rect', { width, height })
    await waitFor(async () => (await this.execute('return window.innerWidth')) > 0, { what: 'the resized window' })
  }

  async close() {
    await this.cmd('DELETE', '')
  }
}

export class Element {
  constructor(session, id) {
    this.session = session
    this.id = id
  }

  ref() {
    return { [ELEMENT]: this.id }
  }

  cmd(method, path, body) {
    return this.session.cmd(method, `/element/${this.id}${path}`, body)
  }

  click() {
    return this.cmd('POST', '/click', {})
  }

  clear() {
    return this.cmd('POST', '/clear', {})
  }

  sendKeys(text) {
    return this.cmd('POST', '/value', { text })
  }

  text() {
    return this.cmd('GET', '/text')
  }

  attribute(name) {
    return this.cmd('GET', `/attribute/${name}`)
  }

  property(name) {
    return this.cmd('GET', `/property/${name}`)
  }

  displayed() {
    return this.cmd('GET', '/displayed')
  }
}

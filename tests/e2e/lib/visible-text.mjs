// "Nothing internal on screen": the text a person sees on a screen (not commands in code
// blocks, not what sits behind a closed "Details"), checked for what only a developer should
// read — protocol lines, code-like ids (`torch.cpu_build`), message keys, unfilled placeholders —
// and, in Chinese, for English left in the sentences and ASCII question marks standing in for
// missing text. The rules are pure (tested in visible-text-rules.test.mjs); `screenText` reads the
// page.

/**
 * Latin words a Chinese screen may show: product and provider names, hardware and protocol
 * names, units. Anything else in Latin letters is English left untranslated. Compared
 * case-sensitively, so "Stop" or "idle" in a Chinese sentence is caught.
 */
export const ZH_ALLOWED = new Set(
  `Leasehold GPU GPUs CPU CUDA cuDNN SSH SFTP API URL HTTP HTTPS IP TCP PCIe NVLink NVIDIA NVML ECC Xid
  PyTorch torch torchrun Python pip conda Miniconda venv wheel Docker Ollama vLLM TGI Hugging Face Jupyter
  TensorBoard Git git LoRA QLoRA OOM VRAM TFLOPS FLOPS MIG SM Linux Ubuntu Windows macOS WebDriver
  GeForce AutoDL RunPod Vast ai Lambda AWS GCP OpenAI Qwen Llama DeepSeek RTX Tesla Ada Hopper Blackwell Ampere
  WeCom Slack ServerChan PostgreSQL SQLite KiB MiB GiB TiB kB KB MB GB TB Hz MHz GHz ms
  W kW kWh h min s token tokens CNY USD EUR HKD JPY GBP CN HK US A H L T V P RAM SSD NVMe OS ID
  nvidia-smi nvidia smi sm systemd cron dmesg df lsmod pid tmux screen ssh-agent known_hosts root ok
  Webhook webhook push stash Stash commit ssh sshd ssh-add ssh-keygen setsid Container Toolkit PGPASSWORD JSON GGUF VPN Ctrl Shift Conda Google Cloud SHA freeze Server POST hf-mirror transformers peft all agent Batch Cache
  DataLoader Killed GitHub PyPI English SFF Generation Ti Super SUPER Max-Q Laptop Ultra Pro Mini
  python True False None PM AM fp fp16 bf16 fp32 int8 int4 FP BF INT AdamW Adam SGD KV batch`
    .split(/\s+/)
    .filter(Boolean),
)

/** Names a fix step asks people to type or look for, written as they are in code. */
export const CODE_WORDS = new Set(['num_workers', 'known_hosts', 'authorized_keys'])

/** Chinese text an English screen may show: the product's own name and language names. */
export const EN_ALLOWED_CJK = ['算力租用管家', '简体中文', '并行计算云', '企业微信', '飞书', '钉钉', '酱', '恒源云', '酷虎云', '并行科技', '阿里云', '腾讯云', '华为云']

const FILE_EXTENSIONS = /\.(py|sh|txt|json|jsonl|yaml|yml|toml|log|gz|tgz|tar|zip|csv|md|ipynb|pt|pth|bin|safetensors|gguf|ckpt|whl|deb|so|pub|conf|cfg|ini|sqlite3|db|lock)$/i
const DOMAINS = /\.(com|cn|org|net|io|ai|dev|edu|cloud|co|app|sh)$/i

/** Offending snippets in `text`, each as `kind: snippet`. */
export function offenders(text, language) {
  const found = []
  const add = (kind, snippet) => found.push(`${kind}: ${snippet}`)

  if (text.includes('::leasehold::')) add('protocol line', '::leasehold::')
  for (const m of text.matchAll(/\{[A-Za-z_]\w*(?:, ?(?:plural|select|number)[^}]*)?\}/g)) add('unfilled placeholder', m[0])

  // Dotted words: an id such as torch.cpu_build or per_gpu.failed, or a message key such as
  // monitor.status.live; file names and web addresses are fine.
  for (const m of text.matchAll(/[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)+/g)) {
    const token = m[0]
    // A function people type (torch.cuda.is_available()) is quoted on purpose.
    if (text[m.index + token.length] === '(') continue
    if (FILE_EXTENSIONS.test(token) || DOMAINS.test(token) || /^[\d.]+$/.test(token)) continue
    if (/^v?\d/.test(token) || /\d\.\d/.test(token)) continue // versions, sizes: 12.4, Qwen2.5
    const lowerParts = token.split('.').every((part) => /^[a-z][a-z0-9_]*$/.test(part))
    if (lowerParts && (token.includes('_') || token.split('.').length >= 3)) add('code-like token', token)
  }
  // snake_case words outside dotted ids (a raw enum value such as no_gpu or power_off_failed);
  // a keyword argument people type (low_cpu_mem_usage=True) and the names in CODE_WORDS are code.
  for (const m of text.matchAll(/(?<![\w./~-])[a-z]+(?:_[a-z0-9]+)+(?![\w./-])/g)) {
    if (text[m.index + m[0].length] === '=' || CODE_WORDS.has(m[0]) || ZH_ALLOWED.has(m[0])) continue
    add('code-like token', m[0])
  }
  // The watchdog's raw status: gpu=unreadable, cpu=first; any other key=value pair as well.
  for (const m of text.matchAll(/\b[a-z]+=(?:unreadable|first|\d+%?)/g)) add('raw status', m[0])
  for (const m of text.matchAll(/(?<![\w-])[a-z][a-z_]*=[A-Za-z0-9_.:-]+/g)) {
    // A keyword argument people type (low_cpu_mem_usage=True) is code, quoted on purpose.
    if (/=(?:unreadable|first|\d+%?|True|False|None)$/.test(m[0]) || CODE_WORDS.has(m[0].split('=')[0])) continue
    add('key=value', m[0])
  }
  // A job id (j-20261204-143040-b3316c) or a machine timestamp (2026-12-04T14:30:40Z).
  for (const m of text.matchAll(/\bj-\d{8}-\d{6}-[0-9a-f]{4,}\b/g)) add('job id', m[0])
  for (const m of text.matchAll(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g)) add('ISO timestamp', m[0])
  // Markdown that was never rendered: `a command` in backticks.
  for (const m of text.matchAll(/`[^`\n]+`/g)) add('backticks', m[0])
  // A "?" standing in for a missing figure beside a unit ("? GiB", "¥?", "? %").
  for (const m of text.matchAll(/(?:(?<![\w?])\?\s?(?:GiB|MiB|GB|MB|%|h|min|元|\/h)(?![\w])|[¥$€]\?)/g)) add('missing figure', m[0])
  // A lower-case step id used as a title (install.cuda_toolkit, step_3) is caught above; a bare
  // currency code standing alone on a line (a label, a field's unit) is one too on a Chinese screen
  // ("CNY" where 元 belongs). An English screen writes amounts as "100 CNY", so a code there is a unit.
  if (language === 'zh-CN') {
    for (const m of text.matchAll(/^[ \t]*(CNY|USD|EUR|HKD|JPY|GBP)[ \t]*$/gm)) add('bare currency code', m[1])
  }

  if (language === 'zh-CN') {
    // What a program printed, quoted in a Chinese sentence (“no kernel image …”), stays verbatim.
    const unquoted = text.replace(/“[^”]*”/g, '“”')
    for (const m of unquoted.matchAll(/(?<![A-Za-z0-9])\?(?![A-Za-z0-9=])/g)) {
      add('ASCII question mark', unquoted.slice(Math.max(0, m.index - 12), m.index + 2).replace(/\s+/g, ' '))
    }
    for (const m of unquoted.matchAll(/[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]/g)) {
      const word = m[0]
      const before = unquoted[m.index - 1] ?? ''
      const after = unquoted[m.index + word.length] ?? ''
      // Part of a name with digits or symbols (A100, fp16, Qwen2.5, RTX-4090, ~/.ssh) is a name.
      if (/[\w./~@:-]/.test(before) || /[\w/@:]/.test(after)) continue
      if (word.length === 1 || ZH_ALLOWED.has(word)) continue
      if (word.split(/[-’']/).every((part) => ZH_ALLOWED.has(part))) continue
      add('English in Chinese', word)
    }
  } else {
    const cjk = text.replace(new RegExp(EN_ALLOWED_CJK.join('|'), 'g'), '')
    for (const m of cjk.matchAll(/[\u3400-\u9fff]+/g)) add('Chinese in English', m[0])
  }
  return [...new Set(found)]
}

/**
 * The text a person can see on the page now, line by line: text nodes with a box on screen,
 * leaving out commands and logs (code, pre, the terminal, inputs) — those are meant verbatim —
 * plus the chosen option of every select (its text is on screen too).
 */
export function screenText(session) {
  return session.execute(`
    const skip = 'code, pre, kbd, samp, textarea, script, style, .xterm, [data-verbatim]'
    const parts = []
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement
      if (!element || element.closest(skip) || element.closest('select')) continue
      if (node.textContent.trim() === '' || element.getClientRects().length === 0) continue
      // Behind a closed "Details": only its summary line shows.
      let hidden = false
      for (let closed = element.closest('details:not([open])'); closed; closed = closed.parentElement?.closest('details:not([open])')) {
        const summary = element.closest('summary')
        if (!summary || summary.parentElement !== closed) hidden = true
      }
      if (hidden) continue
      const style = getComputedStyle(element)
      if (style.visibility === 'hidden' || style.display === 'none') continue
      parts.push(node.textContent.trim())
    }
    for (const select of document.querySelectorAll('select')) {
      if (select.getClientRects().length === 0 || select.closest(skip)) continue
      const option = select.selectedOptions[0]
      if (option) parts.push(option.textContent.trim())
    }
    return parts.join('\\n')
  `)
}

/**
 * What is cut or pushed out on the page now: a horizontal scrollbar on the page, a label, button
 * or table cell whose text is wider than its box (unless it ends in an ellipsis on purpose), and
 * a filled (primary) button that lies outside the window's width, and more than one filled button
 * on the page or in an open dialog. Each as `kind: where`.
 */
export function layoutProblems(session) {
  return session.execute(`
    const found = []
    const main = document.querySelector('main')
    if (main && main.scrollWidth > main.clientWidth + 1) found.push('horizontal scrollbar: page ' + main.scrollWidth + ' > ' + main.clientWidth)
    const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && !el.closest('dialog:not([open]), [hidden]') }
    const name = (el) => el.dataset.testid || (el.textContent || '').trim().slice(0, 40) || el.tagName
    for (const el of document.querySelectorAll('button, .btn, th, td, label, dt, dd, .chip')) {
      if (!visible(el) || el.closest('code, pre, .xterm, [data-verbatim]')) continue
      const style = getComputedStyle(el)
      const clips = style.overflow !== 'visible' || style.whiteSpace === 'nowrap' || el.matches('button, .btn')
      if (clips && style.textOverflow !== 'ellipsis' && el.scrollWidth > el.clientWidth + 1) {
        found.push('text wider than its box: ' + name(el) + ' ' + el.scrollWidth + '>' + el.clientWidth)
      }
    }
    for (const el of document.querySelectorAll('.btn.primary')) {
      if (!visible(el)) continue
      const r = el.getBoundingClientRect()
      if (r.left < 0 || r.right > window.innerWidth + 1) found.push('primary button outside the window: ' + name(el))
    }
    // One filled action a screen (and one an open dialog): the thing to do next is never a choice
    // between two equally loud buttons. The same action repeated per item (Stop on each rental
    // card) counts once.
    for (const root of [document.querySelector('main'), ...document.querySelectorAll('dialog[open]')]) {
      if (!root) continue
      const inRoot = (el) => el.closest('dialog') === (root.matches('dialog') ? root : null)
      const loud = new Set([...root.querySelectorAll('.btn.primary')].filter((el) => visible(el) && inRoot(el)).map(name))
      if (loud.size > 1) found.push('more than one filled button' + (root.matches('dialog') ? ' in a dialog' : '') + ': ' + [...loud].join(', '))
    }
    return found
  `)
}

/**
 * Buttons whose text does not stand out from their background by WCAG's 4.5:1 (the text colour
 * against the backgrounds behind it, composited up to the first opaque one). Disabled buttons
 * are left out, as WCAG does. Each as `low contrast: name ratio`.
 */
export function lowContrastButtons(session) {
  return session.execute(`
    const rgba = (text) => { const [r, g, b, a = 1] = (text.match(/[\\d.]+/g) ?? [0, 0, 0, 0]).map(Number); return { r, g, b, a } }
    const channel = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4 }
    const luminance = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)
    const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 })
    const behind = (el) => {
      const layers = []
      for (let at = el; at; at = at.parentElement) {
        const bg = rgba(getComputedStyle(at).backgroundColor)
        if (bg.a > 0) layers.push(bg)
        if (bg.a >= 1) break
      }
      const page = rgba(getComputedStyle(document.documentElement).backgroundColor)
      return layers.reverse().reduce((under, top) => over(top, under), page.a > 0 ? page : { r: 255, g: 255, b: 255, a: 1 })
    }
    const found = []
    for (const el of document.querySelectorAll('button, .btn')) {
      const r = el.getBoundingClientRect()
      if (r.width === 0 || r.height === 0 || el.disabled || el.closest('dialog:not([open]), [hidden], .xterm')) continue
      if ((el.textContent || '').trim() === '') continue
      const bg = behind(el)
      const fg = over(rgba(getComputedStyle(el).color), bg)
      const [light, dark] = [luminance(fg), luminance(bg)].sort((a, b) => b - a)
      const ratio = (light + 0.05) / (dark + 0.05)
      if (ratio < 4.5) found.push('low contrast: ' + (el.dataset.testid || el.textContent.trim().slice(0, 40)) + ' ' + ratio.toFixed(2) + ':1')
    }
    return found
  `)
}

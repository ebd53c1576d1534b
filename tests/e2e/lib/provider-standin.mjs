// The provider stand-in (tests/provider-standin/standin.py) for one provider and key: its base URL
// for LEASEHOLD_<PROVIDER>_API_URL, `control` for its /_standin/ routes (instances, script, offers,
// requests, violations), and `stop`.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'provider-standin', 'standin.py')

export async function startStandin(provider, key) {
  const child = spawn('python3', [SCRIPT, provider, key], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve))
  const base = `http://127.0.0.1:${port.trim()}`
  const control = async (method, route, body) => {
    const answer = await fetch(`${base}/_standin/${route}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return answer.json()
  }
  return { base, control, stop: () => child.kill() }
}

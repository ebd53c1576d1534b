// A real PostgreSQL server for the GUI tests, set up like crates/testkit/src/postgres.rs: Debian's
// server in a fresh cluster (initdb) in a temporary folder, its own socket folder, a free loopback
// port, password (SCRAM) authentication; run as the `postgres` user through setpriv when the tests
// run as root (PostgreSQL refuses root). `stop()` ends it and removes the folder.
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from './net.mjs'
import { waitFor } from './webdriver.mjs'

export const PG_USER = 'leasehold'
export const PG_PASSWORD = 'lh-pg-e2e-5521'
export const PG_DATABASE = 'team'

function binDir() {
  const root = '/usr/lib/postgresql'
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(a) - Number(b))
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (make deps installs it)')
  return path.join(root, versions.at(-1), 'bin')
}

const asRoot = process.getuid?.() === 0

/** `[file, args]` to run a server program, as `postgres` when we are root. */
function asServerUser(program, args) {
  return asRoot ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', program, ...args]] : [program, args]
}

export async function startPostgres() {
  const bin = binDir()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-pg-'))
  const data = path.join(dir, 'data')
  const sock = path.join(dir, 'sock')
  mkdirSync(sock)
  const pwfile = path.join(dir, 'pw')
  writeFileSync(pwfile, PG_PASSWORD)
  chmodSync(dir, 0o755)
  if (asRoot) execFileSync('chown', ['-R', 'postgres', dir])
  execFileSync(...asServerUser(path.join(bin, 'initdb'), ['-D', data, '-U', PG_USER, '--auth=scram-sha-256', '-E', 'UTF8',
    '--locale=C', '--no-sync', `--pwfile=${pwfile}`]), { stdio: 'ignore' })
  const port = await freePort()
  const log = openSync(path.join(dir, 'postgres.log'), 'a')
  const [file, args] = asServerUser(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1',
    '-c', `unix_socket_directories=${sock}`, '-c', 'fsync=off'])
  const child = spawn(file, args, { stdio: ['ignore', log, log] })
  await waitFor(
    () => {
      try {
        execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'])
        return true
      } catch {
        return null
      }
    },
    { timeoutMs: 30_000, intervalMs: 200, what: 'postgres ready' },
  )
  execFileSync(path.join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', PG_USER, PG_DATABASE], {
    env: { ...process.env, PGPASSWORD: PG_PASSWORD },
  })
  return {
    port,
    // No TLS on this loopback test server; Leasehold allows that only when asked, on loopback.
    url: `postgres://${PG_USER}@127.0.0.1:${port}/${PG_DATABASE}?sslmode=disable`,
    async stop() {
      child.kill('SIGINT')
      await new Promise((resolve) => {
        if (child.exitCode !== null) resolve()
        else child.once('exit', resolve)
      })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

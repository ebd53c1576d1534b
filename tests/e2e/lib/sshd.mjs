// A real OpenSSH test host for the GUI tests, set up like crates/testkit does for the Rust tests:
// Debian's sshd with its own config, host key and authorized_keys on 127.0.0.1 and a free port,
// logging in as a dedicated user. With a fake-GPU profile, that user's login shell finds the
// replaying `nvidia-smi` and the fake `torch` from tests/fake-gpu-hosts (test scaffolding only).
// Needs root, as CI runs.
import { execFileSync, spawn } from 'node:child_process'
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './net.mjs'
import { waitFor } from './webdriver.mjs'

const SSHD = '/usr/sbin/sshd'
const SFTP_SERVER = '/usr/lib/openssh/sftp-server'
/** The login user of the GUI tests' host; the Rust tests use their own (lh-sshtest). */
export const E2E_USER = 'lh-e2e'
const FAKE_HOSTS = fileURLToPath(new URL('../../fake-gpu-hosts', import.meta.url))

/** Every process below `root`, from /proc (children before the listener is gone). */
function descendants(root) {
  const parents = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parents.set(Number(entry), Number(fields[1]))
    } catch {
      // exited meanwhile
    }
  }
  const found = []
  const queue = [root]
  while (queue.length > 0) {
    const parent = queue.shift()
    for (const [pid, ppid] of parents) {
      if (ppid === parent) {
        found.push(pid)
        queue.push(pid)
      }
    }
  }
  return found
}

function run(command, args) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Create the login user once (idempotent; a lock serialises parallel runs). */
function ensureUser() {
  // '*' (no password login) rather than useradd's '!' (locked): sshd refuses locked accounts.
  const script = `id -u ${E2E_USER} >/dev/null 2>&1 || useradd --create-home --shell /bin/bash ${E2E_USER}; usermod -p '*' ${E2E_USER}`
  run('flock', ['/tmp/leasehold-e2e-user.lock', 'sh', '-c', script])
  return run('sh', ['-c', `getent passwd ${E2E_USER} | cut -d: -f6`]).trim()
}

/**
 * The user's login profile: the fake GPU tools first on PATH, and which profile they replay.
 * Copied into the home so they are readable whatever the checkout's permissions are.
 */
function installFakeGpu(home, profile) {
  const tools = path.join(home, 'fake-gpu-hosts')
  rmSync(tools, { recursive: true, force: true })
  cpSync(FAKE_HOSTS, tools, { recursive: true })
  if (!existsSync(path.join(tools, 'profiles', profile))) throw new Error(`no fake GPU profile ${profile}`)
  writeFileSync(
    path.join(home, '.bash_profile'),
    [
      '# Written by tests/e2e/lib/sshd.mjs: a fake GPU host for the GUI tests.',
      `export PATH="${tools}/bin:$PATH"`,
      `export FAKE_GPU_PROFILE="${tools}/profiles/${profile}"`,
      `export PYTHONPATH="${tools}/python"`,
      '',
    ].join('\n'),
  )
  run('chown', ['-R', `${E2E_USER}:`, tools, path.join(home, '.bash_profile')])
}

/**
 * Start sshd. Returns the `ssh …` command a provider would hand out, the client key the host
 * trusts, the host key's public line, and `stop()`. `pathFirst`: a folder sshd puts first on
 * every session's PATH (where a stand-in installer may put its command, as root's installers use
 * /usr/local/bin).
 */
export async function startSshd({ fakeGpuProfile = null, pathFirst = null } = {}) {
  const home = ensureUser()
  if (fakeGpuProfile) installFakeGpu(home, fakeGpuProfile)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-sshd-'))
  chmodSync(dir, 0o755)
  const hostKey = path.join(dir, 'host_ed25519')
  const clientKey = path.join(dir, 'id_ed25519')
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'leasehold-e2e-host', '-f', hostKey])
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'leasehold-e2e', '-f', clientKey])
  const authorized = path.join(dir, 'authorized_keys')
  writeFileSync(authorized, readFileSync(`${clientKey}.pub`))
  chmodSync(authorized, 0o644)
  mkdirSync('/run/sshd', { recursive: true })

  const port = await freePort()
  const config = path.join(dir, 'sshd_config')
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      'PidFile none',
      'UsePAM no',
      'StrictModes no',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      `AuthorizedKeysFile ${authorized}`,
      `Subsystem sftp ${SFTP_SERVER}`,
      'AllowTcpForwarding yes',
      'PrintMotd no',
      'PrintLastLog no',
      'LogLevel VERBOSE',
      ...(pathFirst ? [`SetEnv PATH=${pathFirst}:/usr/local/bin:/usr/bin:/bin`] : []),
      '',
    ].join('\n'),
  )
  const log = path.join(dir, 'sshd.log')
  const child = spawn(SSHD, ['-D', '-f', config, '-E', log], { stdio: 'ignore' })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const readLog = () => (existsSync(log) ? readFileSync(log, 'utf8') : '')
  await waitFor(() => readLog().includes('Server listening on'), { timeoutMs: 10_000, what: `sshd on port ${port}` })

  const fingerprintOf = () => run('ssh-keygen', ['-lf', `${hostKey}.pub`]).split(/\s+/)[1]
  return {
    port,
    user: E2E_USER,
    sshCommand: `ssh -p ${port} ${E2E_USER}@127.0.0.1`,
    clientKey,
    fingerprint: fingerprintOf(),
    log: readLog,
    /** Trust another client key, as pasting it into the provider's console does. */
    authorize(publicKeyLine) {
      appendFileSync(authorized, `${publicKeyLine.trim()}\n`)
    },
    /** A new host key, as a re-imaged instance would have; sshd reads it per connection. */
    rotateHostKey() {
      rmSync(hostKey, { force: true })
      rmSync(`${hostKey}.pub`, { force: true })
      run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'leasehold-e2e-host', '-f', hostKey])
      this.fingerprint = fingerprintOf()
    },
    async stop() {
      // Sessions outlive the listener: end this sshd's own process tree, nothing else.
      const sessions = descendants(child.pid)
      child.kill('SIGTERM')
      await exited
      for (const pid of sessions) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

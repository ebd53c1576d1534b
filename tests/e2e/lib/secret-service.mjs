// A real keychain for the GUI tests, set up like crates/testkit/src/secret_service.rs: a private
// session D-Bus (no service folders, so nothing else is started on it) with gnome-keyring's
// Secret Service and a fresh, unlocked login keyring in a temporary HOME — the provider a Linux
// desktop uses, never the developer's own keychain. Give the app `env` so its keychain calls land
// here; `stop()` ends both daemons and removes the folder.
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { waitFor } from './webdriver.mjs'

function firstLine(stream) {
  return new Promise((resolve, reject) => {
    let text = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk) => {
      text += chunk
      const end = text.indexOf('\n')
      if (end >= 0) resolve(text.slice(0, end).trim())
    })
    stream.once('error', reject)
    stream.once('end', () => reject(new Error('dbus-daemon printed no address')))
  })
}

function ended(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', resolve)
  })
}

export async function startSecretService() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lh-e2e-secrets-'))
  const home = path.join(dir, 'home')
  const runtime = path.join(dir, 'run')
  for (const folder of [home, runtime]) {
    mkdirSync(folder)
    chmodSync(folder, 0o700)
  }
  const config = path.join(dir, 'bus.conf')
  writeFileSync(
    config,
    '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" ' +
      '"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n' +
      `<busconfig><type>session</type><listen>unix:path=${path.join(dir, 'bus')}</listen>` +
      '<auth>EXTERNAL</auth><policy context="default">' +
      '<allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>' +
      '<allow own="*"/></policy></busconfig>\n',
  )
  const dbus = spawn('dbus-daemon', ['--nofork', '--print-address=1', `--config-file=${config}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  const address = await firstLine(dbus.stdout)
  const keyring = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
    env: { PATH: '/usr/bin:/bin', HOME: home, XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: address },
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  // `--unlock` reads the login keyring's password from stdin, creating the keyring.
  keyring.stdin.end('leasehold-e2e-keyring')
  const stop = async () => {
    for (const child of [keyring, dbus]) {
      child.kill('SIGTERM')
      await ended(child)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitFor(
      () => {
        try {
          const reply = execFileSync(
            'dbus-send',
            [`--bus=${address}`, '--print-reply', '--dest=org.freedesktop.secrets', '/org/freedesktop/secrets',
              'org.freedesktop.Secret.Service.ReadAlias', 'string:default'],
            { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
          )
          return reply.includes('/collection/')
        } catch {
          return null
        }
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'the Secret Service with a default collection' },
    )
  } catch (error) {
    await stop()
    throw error
  }
  return { env: { DBUS_SESSION_BUS_ADDRESS: address }, address, stop }
}

/** Whether the keychain holds an item whose attributes mention `text` (the team server's host:port). */
export function keychainHas(address, text) {
  const reply = execFileSync(
    'dbus-send',
    [`--bus=${address}`, '--print-reply', '--dest=org.freedesktop.secrets', '/org/freedesktop/secrets/collection/login',
      'org.freedesktop.DBus.Properties.Get', 'string:org.freedesktop.Secret.Collection', 'string:Items'],
    { encoding: 'utf8' },
  )
  const items = [...reply.matchAll(/object path "([^"]+)"/g)].map((m) => m[1])
  return items.some((item) => {
    const attributes = execFileSync(
      'dbus-send',
      [`--bus=${address}`, '--print-reply', '--dest=org.freedesktop.secrets', item,
        'org.freedesktop.DBus.Properties.Get', 'string:org.freedesktop.Secret.Item', 'string:Attributes'],
      { encoding: 'utf8' },
    )
    return attributes.includes(text)
  })
}

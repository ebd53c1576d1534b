import { describe, expect, it } from 'vitest'
import { needsConnect } from './connect'

describe('needsConnect', () => {
  it('sends the user back to Connect for login and reachability failures, not for a slow command', () => {
    for (const code of ['connect.no_target', 'ssh.auth_failed', 'ssh.refused', 'ssh.host_key_changed']) {
      expect(needsConnect(code), code).toBe(true)
    }
    for (const code of ['ssh.command_timeout', 'verify.cancelled', 'store.query']) expect(needsConnect(code), code).toBe(false)
  })
})

import { cleanup, render, screen } from '@testing-library/svelte'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { setupI18n } from '../../i18n'
import type { KeyChanged } from './flow.svelte'
import HostKeyChanged from './HostKeyChanged.svelte'

const ed25519 = { algorithm: 'ssh-ed25519', fingerprint: 'SHA256:known-ed25519', known_hosts: '/k', line: 3 }

function change(new_algorithm: string, recorded = [ed25519]): KeyChanged {
  return {
    outcome: 'host_key_changed',
    host: 'gpu.example',
    port: 2222,
    old_fingerprint: recorded[0].fingerprint,
    new_fingerprint: 'SHA256:presented',
    new_algorithm,
    known_hosts: '/k',
    line: 3,
    recorded,
    forget_command: "ssh-keygen -R '[gpu.example]:2222' -f /k",
  }
}

describe('the changed host key dialog', () => {
  beforeAll(() => setupI18n('en'))
  afterEach(cleanup)

  it('names the known key and its type when the machine now offers only another type', () => {
    render(HostKeyChanged, { change: change('ssh-rsa') })
    expect(screen.getByTestId('other-key-type').textContent).toContain('ssh-rsa')
    const recorded = screen.getByTestId('recorded-keys').textContent ?? ''
    expect(recorded).toContain('SHA256:known-ed25519')
    expect(recorded).toContain('ssh-ed25519')
    expect(screen.getByTestId('new-fingerprint').textContent).toBe('SHA256:presented')
  })

  it('shows no type warning for a replaced key of the same type', () => {
    render(HostKeyChanged, { change: change('ssh-ed25519') })
    expect(screen.queryByTestId('other-key-type')).toBeNull()
    expect(screen.queryByTestId('recorded-keys'), 'one recorded key is already shown above').toBeNull()
    expect(screen.getByTestId('old-fingerprint').textContent).toBe('SHA256:known-ed25519')
  })
})

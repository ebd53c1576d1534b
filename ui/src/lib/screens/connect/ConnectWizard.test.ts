import { clearMocks, mockIPC } from '@tauri-apps/api/mocks'
import { cleanup, render, screen, waitFor } from '@testing-library/svelte'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { LoginChoices } from '../../bindings/LoginChoices'
import type { SavedTarget } from '../../bindings/SavedTarget'
import { setupI18n } from '../../i18n'
import ConnectWizard from './ConnectWizard.svelte'

const choices: LoginChoices = { config_hosts: [], keys: [], agent_available: false, generated_key: null }
const saved: SavedTarget = {
  instance: 'gpu-1',
  ssh_command: 'ssh -p 40022 root@region-1.example',
  auth: { method: 'agent' },
  host: 'region-1.example',
  port: 40022,
  user: 'root',
  saved_at: '2026-12-01T10:00:00Z',
}

/** Answer the wizard's start-up calls; the saved target once `savedTarget` settles. */
function backend(savedTarget: Promise<SavedTarget | null>) {
  mockIPC(async (command) => {
    if (command === 'connect_choices') return choices
    if (command === 'connect_saved_target') return savedTarget
    if (command === 'connect_preview') return { alias: saved.host, host: saved.host, port: saved.port, user: saved.user, identity_files: [], jump: [], ignored: [] }
    throw new Error(`unexpected command ${command}`)
  })
}

describe('the connect wizard', () => {
  beforeAll(() => setupI18n('en'))
  afterEach(() => {
    cleanup()
    clearMocks()
  })

  it('offers Next only once the saved command is in the form', async () => {
    let release: (target: SavedTarget) => void = () => {}
    backend(new Promise((resolve) => (release = resolve)))
    render(ConnectWizard, { instance: 'gpu-1' })
    // A Next pressed now would check an empty form and ask for a command that is on its way.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(screen.queryByTestId('connect-next')).toBeNull()
    release(saved)
    const input = (await screen.findByTestId('ssh-command')) as HTMLInputElement
    expect(input.value).toBe(saved.ssh_command)
    expect(screen.getByTestId('connect-next')).toBeTruthy()
  })

  it('still opens, empty, when this computer’s keys and the saved target cannot be read', async () => {
    mockIPC(async () => {
      throw { code: 'app.unexpected', message: 'no' }
    })
    render(ConnectWizard, { instance: 'gpu-1' })
    await waitFor(() => expect(screen.getByTestId('connect-next')).toBeTruthy())
    expect((screen.getByTestId('ssh-command') as HTMLInputElement).value).toBe('')
  })
})

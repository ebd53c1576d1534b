// The floor page: what any Svelte UI on Tauri pays before doing anything of its own. It starts the
// way Leasehold's ui/src/main.ts does (svelte-i18n loading Leasehold's English table, one call to
// the Rust side), then shows one translated line.
import { invoke } from '@tauri-apps/api/core'
import { mount } from 'svelte'
import { format, init, register, waitLocale } from 'svelte-i18n'
import { get } from 'svelte/store'
import Greeting from './Greeting.svelte'

register('en', () => import('../../../../ui/src/locales/en.json'))
init({ fallbackLocale: 'en', initialLocale: 'en' })
await waitLocale('en')
const version = await invoke('plugin:app|version')
const text = `${get(format)('onboarding.welcome.title')} ${version}`
mount(Greeting, { target: document.getElementById('app'), props: { text } })

// Generated from crates/core/src/account/providers.rs (`make bindings`). Do not edit.

import type { Provider } from './Provider'

/** Every provider whose API Leasehold syncs, in the order the screens list them. */
export const PROVIDERS: readonly Provider[] = ['runpod', 'vast', 'lambda', 'autodl']

// The only module that talks to the Rust side; components import from here, never `invoke`.
// Every command is a typed function generated from its Rust signature (../bindings/calls.ts,
// `make bindings`): `stopNow({ instance, via, command, providerId })`. What stays by hand here is
// more than one call: the events (events.ts) and the terminal, browser and reconnect helpers
// (connect.ts).
export { BackendError, fieldOf, toApiError, UNEXPECTED_CODE } from './ipc'
export * from '../bindings/calls'
export * from './connect'
export * from './events'

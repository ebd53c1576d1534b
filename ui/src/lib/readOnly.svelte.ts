// Whether the app runs on a read-only copy of a database (the recovery screen's "open a copy"):
// every control that would write is disabled while it does, so nothing fails at the first click
// and the banner at the bottom says why. App.svelte sets it from core's store status.
export const readOnly = $state({ on: false })

// The page's entry. It loads the app through a dynamic import so that an error anywhere in the
// app's modules — even while they are evaluated, before any of our code runs — ends on the
// failure screen instead of a blank window. Kept free of every other module but that screen and
// the language repair.
import { showStartupFailure, startupEnvironment } from './lib/startupFailure'
import { repairNavigatorLanguage } from './lib/systemLanguage'

// Before any module of the app loads: some libraries read navigator.language as they load.
repairNavigatorLanguage()

const target = document.getElementById('app')!
let started = false
// What went wrong while starting, in order: the details of the failure screen, if it comes to one.
// An error alone does not fail the start (a plugin's script may reject a promise of its own and
// the app still draws); an app that could not load, or drew nothing, does.
const seen: unknown[] = []

function remember(error: unknown) {
  if (!started) seen.push(error)
}

function fail(error: unknown) {
  const earlier = seen.filter((e) => e !== error)
  const cause = earlier.length > 0 ? new AggregateError([error, ...earlier], String((error as Error)?.message ?? error)) : error
  showStartupFailure(target, cause, startupEnvironment())
}

window.addEventListener('error', (event) => remember(event.error ?? event.message))
window.addEventListener('unhandledrejection', (event) => remember(event.reason))

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve))

import('./main')
  // Components' first effects run just after mounting: wait for two frames, then a page that
  // drew nothing is a failure too.
  .then(nextFrame)
  .then(nextFrame)
  .then(
    () => {
      if (target.childElementCount === 0) fail(seen[0] ?? new Error('The page started but drew nothing.'))
      started = true
    },
    (error: unknown) => fail(error),
  )

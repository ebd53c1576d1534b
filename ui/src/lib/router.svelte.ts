// Which screen is showing. The app has no URLs worth sharing, so a small runes store replaces a
// router library; screens receive it through context.
import { createContext } from 'svelte'

export type Route =
  | { name: 'rentals' }
  | { name: 'choose-gpu' }
  | { name: 'new-rental' }
  /** `intent: 'stop'`: opened from a reminder's Stop now; the page's stop control takes it up. */
  | { name: 'instance'; instance: string; intent?: 'stop' }
  | { name: 'estimate' }
  | { name: 'settings' }
  | { name: 'team' }
  /** `justCreated`: straight after New rental, with the choice to connect later. */
  | { name: 'connect'; instance: string; justCreated?: boolean }
  | { name: 'verify'; instance: string }
  | { name: 'terminal'; instance: string }
  /** `job`: follow this job's log instead of choosing a recipe. */
  | { name: 'install'; instance: string; job?: string; /** the recipes, even while a job runs */ recipes?: boolean }
  | { name: 'backup'; instance: string }
  | { name: 'release'; instance: string }

export type Section = 'rentals' | 'choose-gpu' | 'new-rental' | 'estimate' | 'settings' | 'team'

export class Router {
  route = $state<Route>({ name: 'rentals' })

  /** The sidebar entry to highlight: an instance page belongs to Rentals. */
  get section(): Section {
    return 'instance' in this.route ? 'rentals' : this.route.name
  }

  go(route: Route): void {
    this.route = route
  }
}

export const [getRouter, setRouter] = createContext<Router>()

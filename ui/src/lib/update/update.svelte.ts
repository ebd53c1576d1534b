// The update on offer, shared by the dialog (shown over any screen) and Settings → About's
// "Check now". What to offer is decided by core; this only holds it.
import type { UpdateOffer } from '../bindings/UpdateOffer'

class UpdateState {
  offer = $state<UpdateOffer | null>(null)
}

export const updateState = new UpdateState()

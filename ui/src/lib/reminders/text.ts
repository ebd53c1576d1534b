// A reminder's words: which locale keys and which values (money and times formatted for the
// reader) fill them. Kept apart from the component so it is tested without a window.
import type { Reminder } from '../bindings/Reminder'
import { formatDateTime, formatMoney, formatMonth, formatPercent } from '../format'

/** The values the reminder's title and body name, formatted in `lang`. */
export function reminderValues(reminder: Reminder, lang: string, never: string): Record<string, string> {
  const values: Record<string, string> = { instance: reminder.instance }
  for (const [key, value] of Object.entries(reminder.params)) {
    if (value === undefined) continue
    if (key === 'used' || key === 'budget') values[key] = formatMoney(value, reminder.currency, lang)
    else if (key === 'rate' || key === 'old' || key === 'new') values[key] = formatMoney(value, reminder.currency, lang)
    else if (key === 'min_bid') values[key] = formatMoney(value, reminder.currency, lang, 2)
    else if (key === 'release_at' || key === 'wipe_at' || key === 'since' || key === 'seen_at') values[key] = formatDateTime(value, lang)
    else if (key === 'last_backup') values[key] = value === '' ? never : formatDateTime(value, lang)
    else if (key === 'checked_at') values[key] = formatDateTime(value, lang)
    else if (key === 'month') values[key] = formatMonth(value, lang)
    else if (key === 'below') values[key] = formatPercent(value, lang)
    else values[key] = value
  }
  return values
}

/** One stable key per reminder occurrence, for lists and test ids. */
export function reminderKey(reminder: Reminder): string {
  return `${reminder.instance_id}-${reminder.kind}-${reminder.occurrence}`
}


/** How loud a reminder's card is: its urgency as a class name (colour escalates with it). */
export function urgencyOf(reminder: Reminder): 'notice' | 'warning' | 'critical' {
  return reminder.stakes?.urgency ?? 'notice'
}


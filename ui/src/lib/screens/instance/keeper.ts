// The keeper card's arithmetic on what core sent: the policy's seconds as the minutes and days
// the card asks for, and a typed amount checked before it is sent. Pure, so it is tested alone; what the keeper does next is core's
// (`Kept.next`), never decided here.
import type { Kept } from '../../bindings/Kept'

/** Seconds as whole minutes (the idle stage), `null` when the stage is not set. */
export function secondsToMinutes(seconds: number | null): number | null {
  return seconds === null ? null : Math.max(1, Math.round(seconds / 60))
}

/** Seconds as whole days (the stopped stage), `null` when the stage is not set. */
export function secondsToDays(seconds: number | null): number | null {
  return seconds === null ? null : Math.max(1, Math.round(seconds / 86_400))
}

/** A typed amount of money as the decimal string core takes (`12`, `0.35`), or `null` if it is not one above zero. */
export function moneyInput(text: string): string | null {
  const trimmed = text.trim().replace(',', '.')
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return null
  return Number(trimmed) > 0 ? trimmed : null
}

/** The keeper's row for `instance` in `keeper_list`'s answer. */
export function rowFor(rows: Kept[], instance: string): Kept | null {
  return rows.find((row) => row.instance === instance) ?? null
}

/** Whether the card should look again soon: a hunt is running. */
export function isHunting(row: Kept | null): boolean {
  return row?.hunt?.state === 'hunting'
}

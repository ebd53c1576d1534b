// The keeper (src-tauri/src/commands/keeper.rs): power-on hunts until a GPU frees up, the
// provider's clean-up deadline kept, the two-stage idle/stopped policy, Vast.ai bids and price
// increases. Money travels as decimal strings.
import type { BidReport } from '../bindings/BidReport'
import type { BidState } from '../bindings/BidState'
import type { HuntReport } from '../bindings/HuntReport'
import type { IncreaseReport } from '../bindings/IncreaseReport'
import type { KeepAliveQuote } from '../bindings/KeepAliveQuote'
import type { KeepAliveReport } from '../bindings/KeepAliveReport'
import type { Kept } from '../bindings/Kept'
import type { Policy } from '../bindings/Policy'
import type { PriceIncrease } from '../bindings/PriceIncrease'
import { call } from './ipc'

/** Every instance the keeper looks after (not released), with its hunt, deadline, policy and next step. */
export function keeperList(): Promise<Kept[]> {
  return call<Kept[]>('keeper_list')
}

/** Start (or pick up) the power-on hunt; it runs in the background and `keeperList` follows it. */
export function keeperHuntStart(instance: string, forMinutes: number | null, maxSpend: string | null): Promise<HuntReport> {
  return call<HuntReport>('keeper_hunt_start', { instance, forMinutes, maxSpend })
}

export function keeperHuntStop(instance: string): Promise<void> {
  return call<void>('keeper_hunt_stop', { instance })
}

/** The policy as the form shows it: a stage left `null` is cleared (the bid cap stays). */
export interface PolicyUpdate {
  stopAfterIdleMinutes: number | null
  releaseAfterStoppedDays: number | null
  autoRelease: boolean
  off: boolean
}

/** Set an instance's policy, or the default one (`instance` null). */
export function keeperSetPolicy(instance: string | null, update: PolicyUpdate): Promise<Policy> {
  return call<Policy>('keeper_set_policy', { instance, ...update })
}

/** The highest Vast.ai bid per GPU-hour (a decimal string) `keeperBid` may place; the rest of the policy stays. */
export function keeperSetBidCap(instance: string, bidCap: string): Promise<Policy> {
  return call<Policy>('keeper_set_bid_cap', { instance, bidCap })
}

/** What keeping a stopped instance from the provider's clean-up costs, before anything is done. */
export function keeperKeepAliveQuote(instance: string): Promise<KeepAliveQuote> {
  return call<KeepAliveQuote>('keeper_keep_alive_quote', { instance })
}

/** Power it on and off again, at no more than `acceptedCost` (the quote the user confirmed). */
export function keeperKeepAlive(instance: string, acceptedCost: string): Promise<KeepAliveReport> {
  return call<KeepAliveReport>('keeper_keep_alive', { instance, acceptedCost })
}

/** Whether a Vast.ai interruptible instance was outbid, as Vast.ai says now. */
export function keeperVastLook(instance: string): Promise<BidState> {
  return call<BidState>('keeper_vast_look', { instance })
}

/** Place a bid per GPU-hour (never above the cap in the instance's policy). */
export function keeperBid(instance: string, price: string): Promise<BidReport> {
  return call<BidReport>('keeper_bid', { instance, price })
}

/** Accept or reject the host's pending price increase. */
export function keeperPriceIncrease(instance: string, accept: boolean): Promise<IncreaseReport> {
  return call<IncreaseReport>('keeper_price_increase', { instance, accept })
}

/** The host's pending price increase on a Vast.ai rental, `null` when there is none. */
export function keeperPriceIncreaseLook(instance: string): Promise<PriceIncrease | null> {
  return call<PriceIncrease | null>('keeper_price_increase_look', { instance })
}

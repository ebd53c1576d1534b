// Every message key the screens ask for must exist, or the user sees a raw key such as
// `rentals.title`. Literal keys are found by scanning the sources; keys built from a value
// (`state.${state}`) are checked for every value that value can take.
import { describe, expect, it } from 'vitest'
import en from '../../locales/en.json'
import { flattenKeys } from '.'

const known = new Set(flattenKeys(en))
// Core's status states (`status::StatusState`).
const STATES = [
  'created',
  'running',
  'running_no_gpu',
  'stopped',
  'stop_unconfirmed',
  'missing_at_provider',
  'released',
  'released_but_listed',
  'outbid',
] as const
const sources = import.meta.glob<string>(['/src/**/*.svelte', '/src/**/*.ts', '!/src/**/*.test.ts'], {
  query: '?raw',
  import: 'default',
  eager: true,
})

describe('message keys used by the UI', () => {
  it('exist for every literal key in the sources', () => {
    const missing: string[] = []
    expect(Object.keys(sources).length, 'the scan must see the screens').toBeGreaterThan(20)
    for (const [file, text] of Object.entries(sources)) {
      for (const match of text.matchAll(/\$_\(\s*(['`])([a-z0-9_.]+)\1/g)) {
        if (!known.has(match[2])) missing.push(`${file}: ${match[2]}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('exist for every value of the keys built from data', () => {
    const families: Record<string, readonly string[]> = {
      'state.': ['created', 'running', 'no_gpu', 'stopped', 'released'],
      'events.': ['created', 'started', 'stopped', 'no_gpu_started', 'released', 'rule_changed', 'traffic_recorded'],
      'providers.': ['bingxing', 'autodl', 'hengyuan', 'kuhu', 'runpod', 'vast', 'lambda', 'aliyun', 'tencent', 'huawei', 'aws', 'gcp', 'custom'],
      'recovery.': ['corrupt.title', 'newer_version.title', 'disk_full.title', 'locked.title', 'other.title'],
      'recovery.action.': ['retry', 'open_copy', 'start_fresh', 'quit'],
      'recovery.action_hint.': ['retry', 'open_copy', 'start_fresh', 'quit'],
      'breakdown.': ['compute', 'no_gpu', 'stopped', 'storage', 'ip', 'traffic'],
      'estimate.rule_': ['none', 'storage', 'rate', 'full_price'],
      'instance.action_': ['start', 'stop', 'no_gpu', 'release'],
      'rental_steps.': ['rental', 'rules', 'extras', 'plan', 'review'],
      'rental_form.starts_': ['created', 'running'],
      // Core's keeper: `Action` (Kept.next) and `GaveUp` (a hunt's end).
      'keeper.next.': ['nothing', 'hunt', 'stop', 'remind_release', 'release', 'offer_keep_alive'],
      'keeper.next_unscheduled.': ['stop', 'remind_release', 'release', 'offer_keep_alive'],
      'keeper.hunt.gave_up.': ['time', 'spend', 'refused'],
      'rental_form.granularity_': ['second', 'minute', 'hour'],
      'rental_form.stopped_kind_': ['none', 'storage', 'rate'],
      'rent_buy.cheaper_': ['rent', 'buy'],
      'nav.': ['rentals', 'new_rental', 'estimate', 'settings'],
      'status_state.': STATES,
      'instance_status.header.': STATES,
      'instance_status.action.': ['power_on', 'stop', 'record_start', 'record_no_gpu', 'record_stop', 'check_again', 'raise_bid', 'release'],
      'instance_status.warnings.': [
        'stop_unconfirmed',
        'missing_at_provider',
        'released_but_listed',
        'price_held',
        'currency_differs',
        'gpu_count_differs',
        'watchdog_not_protecting',
        'watchdog_not_running',
        'import_needs_look',
        'storage_rate_unknown',
        'price_unusual.far_from_earlier',
        'price_unusual.far_from_market',
        'price_unusual.pays_for_the_card',
        'price_unusual.over_budget',
        'outbid.with_bid',
        'outbid.plain',
        'price_increase_pending',
        'not_verified.hunt',
        'not_verified.rent',
      ],
    }
    const missing = Object.entries(families).flatMap(([prefix, values]) =>
      values.map((value) => prefix + value).filter((key) => !known.has(key)),
    )
    for (const action of ['start', 'stop', 'no_gpu', 'release']) {
      if (!known.has(`instance.confirm_${action}_title`)) missing.push(`instance.confirm_${action}_title`)
    }
    expect(missing).toEqual([])
  })
})

import { describe, expect, it } from 'vitest'
import type { ApiError } from '../../bindings/ApiError'
import { emptyDraft, toNewInstance } from './draft'
import { hourlyFees, QUOTED_EXTRAS, unitsFor, type AskCore } from './quotedFees'

class Refusal extends Error {
  constructor(readonly field: string) {
    super(field)
  }
}
const fieldOf = (thrown: unknown) => (thrown instanceof Refusal ? thrown.field : null)
const toApiError = (thrown: unknown): ApiError => ({ code: 'billing.fee_needs_size', message: String(thrown) }) as ApiError

describe('hourlyFees', () => {
  it('asks core only for the extras quoted in another unit, and files its answers by field', async () => {
    const draft = emptyDraft('CNY')
    draft.data_disk_per_hour = '0.005'
    draft.data_disk_per = 'gb_day'
    draft.data_disk_size_gb = '200'
    draft.public_ip_per_hour = '0.02'
    const asked: Parameters<AskCore>[0][] = []
    const ask: AskCore = async (args) => {
      asked.push(args)
      return '0.04166667'
    }
    const { hourly, errors } = await hourlyFees(draft, ask, fieldOf, toApiError)
    expect(asked).toEqual([{ extra: 'data_disk', fee: { amount: '0.005', per: 'gb_day', size_gb: '200' } }])
    expect(hourly).toEqual({ data_disk_per_hour: '0.04166667' })
    expect(errors).toEqual({})
    const { rental } = toNewInstance(draft, hourly)
    expect(rental?.rules.data_disk_per_hour).toBe('0.04166667')
    expect(rental?.rules.public_ip_per_hour, 'an hourly quote goes as typed').toBe('0.02')
  })

  it('puts a refusal next to the field core names, and a malformed size next to the size', async () => {
    const draft = emptyDraft('USD')
    draft.snapshot_per_hour = '0.1'
    draft.snapshot_per = 'gb_month'
    const refuse: AskCore = async () => {
      throw new Refusal('snapshot_size_gb')
    }
    const refused = await hourlyFees(draft, refuse, fieldOf, toApiError)
    expect(Object.keys(refused.errors)).toEqual(['snapshot_size_gb'])

    draft.snapshot_size_gb = 'lots'
    const malformed = await hourlyFees(draft, refuse, fieldOf, toApiError)
    expect(malformed.errors.snapshot_size_gb?.code).toBe('form.not_a_number')
  })

  it('offers per-GB units only where there is a size to multiply by', () => {
    const ip = QUOTED_EXTRAS.find((extra) => extra.extra === 'public_ip')!
    const disk = QUOTED_EXTRAS.find((extra) => extra.extra === 'data_disk')!
    expect(unitsFor(ip)).not.toContain('gb_month')
    expect(unitsFor(disk)).toContain('gb_month')
  })
})

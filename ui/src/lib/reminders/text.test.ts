import { describe, expect, it } from 'vitest'
import type { Reminder } from '../bindings/Reminder'
import { reminderKey, reminderValues } from './text'

const budget: Reminder = {
  instance: 'a100',
  instance_id: 3,
  kind: 'budget_80',
  due_at: '2025-03-01T08:00:00Z',
  occurrence: '100',
  detail: '80.00 CNY spent of a 100.00 CNY budget (80 % reached)',
  params: { percent: '80', used: '80.00', budget: '100.00' },
  currency: 'CNY',
  burn_rate_per_hour: '10.00',
}

describe('reminder text values', () => {
  it('formats money in the reminder currency and keeps the rest as given', () => {
    const values = reminderValues(budget, 'en', 'never')
    expect(values.instance).toBe('a100')
    expect(values.percent).toBe('80')
    expect(values.used).toContain('80.00')
    expect(values.budget).toContain('100.00')
    expect(values.used).not.toBe('80.00')
  })

  it('says never for a backup that never happened', () => {
    const missing: Reminder = { ...budget, kind: 'backup_missing', params: { last_backup: '' } }
    expect(reminderValues(missing, 'zh-CN', '从未备份').last_backup).toBe('从未备份')
  })

  it('keys an occurrence by instance, kind and occurrence', () => {
    expect(reminderKey(budget)).toBe('3-budget_80-100')
  })
})

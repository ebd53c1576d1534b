import { describe, expect, it } from 'vitest'
import type { Reminder } from '../bindings/Reminder'
import { formatMonth, minutesText } from '../format'
import { reminderKey, reminderValues, urgencyOf } from './text'

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
  stakes: { urgency: 'warning', budget_percent: 80, percent_used: '80.0', budget_left: '20.00', minutes_to_empty: 120, snoozes: [] },
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

  it("names a month in the reader's language, never as 2026-12", () => {
    expect(formatMonth('2026-12', 'en')).toBe('December 2026')
    expect(formatMonth('2026-12', 'zh-CN')).toBe('2026年12月')
    const team: Reminder = { ...budget, params: { scope: 'team', month: '2026-12' } }
    expect(reminderValues(team, 'zh-CN', '').month).toBe('2026年12月')
  })

  it('reads urgency from the stakes and words minutes left', () => {
    expect(urgencyOf(budget)).toBe('warning')
    const short = (m: number) => `${m} min`
    const long = (h: number, m: string) => `${h} h ${m} min`
    expect(minutesText(14, short, long)).toBe('14 min')
    expect(minutesText(185, short, long)).toBe('3 h 05 min')
  })
})

describe('reminder percentages', () => {
  it("write an idle threshold the way every percentage is written (5%, not '5 %')", () => {
    const reminder = { instance: 'box', currency: 'CNY', params: { below: '5' } } as unknown as Reminder
    expect(reminderValues(reminder, 'en', 'never').below).toBe('5%')
    expect(reminderValues(reminder, 'zh-CN', 'never').below).toBe('5%')
  })
})

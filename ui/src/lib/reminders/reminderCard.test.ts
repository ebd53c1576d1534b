// A team budget reminder's card: its title says how much of the budget is used now (core's
// `stakes.percent_used`), the same figure as the line under it, never the tier that fired it.
import { cleanup, render, screen } from '@testing-library/svelte'
import { afterEach, describe, expect, it } from 'vitest'
import type { Reminder } from '../bindings/Reminder'
import { setupI18n, switchLanguage } from '../i18n'
import ReminderCard from './ReminderCard.svelte'

const teamBudget: Reminder = {
  instance: 'lab',
  instance_id: 0,
  kind: 'budget_80',
  due_at: '2025-03-01T08:00:00Z',
  occurrence: '2025-03 40 CNY',
  detail: 'team lab: 35.44 CNY spent this month of a 40.00 CNY team budget (80 % reached)',
  params: { scope: 'team', percent: '80', used: '35.44', budget: '40.00', month: '2025-03' },
  currency: 'CNY',
  burn_rate_per_hour: '24.00',
  stakes: { urgency: 'warning', budget_percent: 88, percent_used: '88.6', budget_left: '4.56', minutes_to_empty: 11, snoozes: [] },
}

function card(reminder: Reminder) {
  render(ReminderCard, { reminder, busy: false, ondismiss: () => {}, onsnooze: () => {}, onopen: () => {}, onopenteam: () => {} })
  return { title: screen.getByTestId('reminder-title').textContent ?? '', left: screen.getByTestId('reminder-time-left').textContent ?? '' }
}

describe('team budget reminder card', () => {
  afterEach(cleanup)

  it('titles the figure now, not the tier that fired, in both languages', async () => {
    await setupI18n('en')
    const en = card(teamBudget)
    expect(en.title).toBe('Team budget: 88.6% used')
    expect(en.left).toContain('88.6%')
    cleanup()
    await switchLanguage('zh-CN')
    const zh = card(teamBudget)
    expect(zh.title).toBe('团队预算已用 88.6%')
    expect(zh.left).toContain('88.6%')
    await switchLanguage('en')
  })

  it('falls back to the tier, formatted, when core sent no figure', async () => {
    await setupI18n('en')
    const noFigure = { ...teamBudget, stakes: { ...teamBudget.stakes, percent_used: null, budget_percent: null } }
    render(ReminderCard, { reminder: noFigure, busy: false, ondismiss: () => {}, onsnooze: () => {}, onopen: () => {}, onopenteam: () => {} })
    expect(screen.getByTestId('reminder-title').textContent).toBe('Team budget: 80% used')
  })
})

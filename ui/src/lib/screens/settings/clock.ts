// Times of day for the quiet hours: every half hour on a 24-hour clock (`00:00` … `23:30`),
// plus the saved one when it is not on the half hour (set from the CLI, say), in order.
export function clockChoices(current: string): string[] {
  const pad = (n: number) => String(n).padStart(2, '0')
  const times = Array.from({ length: 48 }, (_, i) => `${pad(Math.floor(i / 2))}:${i % 2 ? '30' : '00'}`)
  if (/^\d{2}:\d{2}$/.test(current) && !times.includes(current)) times.push(current)
  return times.sort()
}

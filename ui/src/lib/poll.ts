// Re-fetch something every `intervalMs` while a screen shows it. The next fetch starts only after
// the previous one finished, so a slow backend never piles up requests. Returns the stop function
// (use it as an `$effect` teardown).
export function poll(fetchOnce: () => Promise<void>, intervalMs: number): () => void {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const tick = async () => {
    try {
      await fetchOnce()
    } finally {
      if (!stopped) timer = setTimeout(tick, intervalMs)
    }
  }
  void tick()
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}

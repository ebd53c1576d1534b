// Port-forward presets and how a forward is labelled, apart from the markup so it is tested.
import type { ForwardInfo } from '../../bindings/ForwardInfo'
import type { ForwardPreset } from '../../bindings/ForwardPreset'

export const PRESETS: readonly { preset: ForwardPreset; port: number }[] = [
  { preset: 'jupyter', port: 8888 },
  { preset: 'tensor_board', port: 6006 },
  { preset: 'ollama', port: 11434 },
  { preset: 'vllm', port: 8000 },
]

/** The preset a forward serves (by its remote port), for its label. */
export function presetOf(forward: Pick<ForwardInfo, 'remote_port'>): ForwardPreset | null {
  return PRESETS.find((p) => p.port === forward.remote_port)?.preset ?? null
}

/** A TCP port typed by the user: 1–65535, or null when it is not one. */
export function parsePort(text: string): number | null {
  const trimmed = text.trim()
  if (!/^\d{1,5}$/.test(trimmed)) return null
  const port = Number(trimmed)
  return port >= 1 && port <= 65535 ? port : null
}

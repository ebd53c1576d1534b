// Terminal shortcuts: Ctrl+Shift+C copies the selection and Ctrl+Shift+V pastes, as in GNOME
// Terminal and Windows Terminal, because plain Ctrl+C / Ctrl+V belong to the remote shell.

export type ClipboardAction = 'copy' | 'paste' | null

export interface KeyLike {
  type: string
  key: string
  ctrlKey: boolean
  shiftKey: boolean
  metaKey: boolean
}

/** What a key event asks of the clipboard, if anything (Cmd+C / Cmd+V on macOS too). */
export function clipboardAction(event: KeyLike): ClipboardAction {
  if (event.type !== 'keydown') return null
  const key = event.key.toLowerCase()
  const chord = (event.ctrlKey && event.shiftKey) || (event.metaKey && !event.ctrlKey)
  if (!chord) return null
  if (key === 'c') return 'copy'
  if (key === 'v') return 'paste'
  return null
}

//! Output that arrives piece by piece: which stream a chunk came from, and turning chunks into
//! lines for callers that show progress line by line (install logs, `nvidia-smi` sampling).

/// Longest line held back waiting for its `\n`; longer ones are passed on in pieces.
pub const MAX_LINE: usize = 1024 * 1024;

/// Which of a command's output streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// Cuts a chunk stream into whole lines, per stream, so a line split across two network packets
/// still reaches the caller as one line. Lines are handed over without their `\n` (and without a
/// trailing `\r`); invalid UTF-8 is replaced rather than dropped.
pub struct LineSplitter<F: FnMut(OutputStream, &str)> {
    on_line: F,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl<F: FnMut(OutputStream, &str)> LineSplitter<F> {
    pub fn new(on_line: F) -> Self {
        Self {
            on_line,
            stdout: Vec::new(),
            stderr: Vec::new(),
        }
    }

    /// Feed one chunk; every line it completes is passed on at once. Only the new bytes are
    /// searched, so a long line arriving in many chunks costs its length, not its square.
    pub fn push(&mut self, stream: OutputStream, chunk: &[u8]) {
        let Self {
            on_line,
            stdout,
            stderr,
        } = self;
        let pending = match stream {
            OutputStream::Stdout => stdout,
            OutputStream::Stderr => stderr,
        };
        let mut start = 0;
        while let Some(offset) = chunk[start..].iter().position(|b| *b == b'\n') {
            let end = start + offset;
            pending.extend_from_slice(&chunk[start..end]);
            on_line(stream, &String::from_utf8_lossy(trim_cr(pending)));
            pending.clear();
            start = end + 1;
        }
        pending.extend_from_slice(&chunk[start..]);
        // A line that never ends (binary output, a hostile instance) is passed on in pieces
        // rather than held without bound.
        if pending.len() >= MAX_LINE {
            let piece = std::mem::take(pending);
            on_line(stream, &String::from_utf8_lossy(&piece));
        }
    }

    /// Pass on what is left after the last newline (a final line without `\n`).
    pub fn finish(&mut self) {
        for stream in [OutputStream::Stdout, OutputStream::Stderr] {
            let pending = match stream {
                OutputStream::Stdout => std::mem::take(&mut self.stdout),
                OutputStream::Stderr => std::mem::take(&mut self.stderr),
            };
            if !pending.is_empty() {
                (self.on_line)(stream, &String::from_utf8_lossy(trim_cr(&pending)));
            }
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_arrive_whole_and_in_order() {
        let mut lines = Vec::new();
        let mut splitter = LineSplitter::new(|stream, line: &str| {
            lines.push((stream, line.to_owned()));
        });
        splitter.push(OutputStream::Stdout, b"one\ntw");
        splitter.push(OutputStream::Stderr, b"warn");
        splitter.push(OutputStream::Stdout, b"o\r\nthree");
        splitter.push(OutputStream::Stderr, b"ing\n");
        splitter.finish();
        assert_eq!(
            lines,
            vec![
                (OutputStream::Stdout, "one".to_owned()),
                (OutputStream::Stdout, "two".to_owned()),
                (OutputStream::Stderr, "warning".to_owned()),
                (OutputStream::Stdout, "three".to_owned()),
            ],
            "a line cut by a packet boundary must still be one line, CRLF trimmed, tail flushed"
        );
    }

    #[test]
    fn a_line_that_never_ends_is_passed_on_in_pieces_not_held() {
        let mut longest = 0;
        let mut pieces = 0;
        let mut splitter = LineSplitter::new(|_, line: &str| {
            longest = longest.max(line.len());
            pieces += 1;
        });
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..40 {
            splitter.push(OutputStream::Stdout, &chunk);
        }
        splitter.finish();
        assert!(
            longest <= MAX_LINE + chunk.len(),
            "nothing much longer than the limit is held: {longest}"
        );
        assert!(pieces >= 2, "the endless line came out in pieces");
    }

    #[test]
    fn invalid_utf8_is_replaced_not_dropped() {
        let mut lines = Vec::new();
        let mut splitter = LineSplitter::new(|_, line: &str| lines.push(line.to_owned()));
        splitter.push(OutputStream::Stdout, b"ok \xff\n");
        assert_eq!(lines, vec!["ok \u{fffd}".to_owned()]);
    }
}

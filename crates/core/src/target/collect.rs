//! Collecting a command's output in memory, with a ceiling.
//!
//! The instance decides how much a command prints; a broken or hostile one could print until
//! this computer runs out of memory. Collected output keeps the first bytes of each stream up to
//! the command's cap, counts the rest, and ends with a marker line that says how much was cut.
//! Output meant to be large goes through [`super::Target::run_streaming`] instead.

use super::{CommandOutput, OutputStream};

/// Bytes kept per stream when a command does not say otherwise: far above any probe's output
/// (the largest, `nvidia-smi -q -x` on an 8-GPU machine, is well under 1 MiB).
pub const DEFAULT_OUTPUT_CAP: usize = 16 * 1024 * 1024;

/// Gathers chunks into a [`CommandOutput`], keeping at most `cap` bytes of each stream.
#[derive(Debug)]
pub struct OutputCollector {
    output: CommandOutput,
    cap: usize,
    dropped_stdout: u64,
    dropped_stderr: u64,
}

impl OutputCollector {
    pub fn new(cap: usize) -> Self {
        Self {
            output: CommandOutput::default(),
            cap,
            dropped_stdout: 0,
            dropped_stderr: 0,
        }
    }

    /// Keep what fits of `chunk`; count the rest.
    pub fn push(&mut self, stream: OutputStream, chunk: &[u8]) {
        let (kept, dropped) = match stream {
            OutputStream::Stdout => (&mut self.output.stdout, &mut self.dropped_stdout),
            OutputStream::Stderr => (&mut self.output.stderr, &mut self.dropped_stderr),
        };
        let room = self.cap.saturating_sub(kept.len()).min(chunk.len());
        kept.extend_from_slice(&chunk[..room]);
        *dropped += (chunk.len() - room) as u64;
    }

    /// True once anything was cut.
    pub fn truncated(&self) -> bool {
        self.dropped_stdout > 0 || self.dropped_stderr > 0
    }

    /// The output, each cut stream ending with a marker line naming what was dropped.
    pub fn finish(mut self, exit_status: Option<u32>) -> CommandOutput {
        for (kept, dropped) in [
            (&mut self.output.stdout, self.dropped_stdout),
            (&mut self.output.stderr, self.dropped_stderr),
        ] {
            if dropped > 0 {
                kept.extend_from_slice(truncation_marker(self.cap, dropped).as_bytes());
            }
        }
        self.output.exit_status = exit_status;
        self.output
    }
}

/// The line appended to a stream that was cut.
pub fn truncation_marker(cap: usize, dropped: u64) -> String {
    format!("\n[leasehold: output cut after {cap} bytes; {dropped} more bytes were not kept]\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_under_the_cap_is_kept_whole() {
        let mut collector = OutputCollector::new(10);
        collector.push(OutputStream::Stdout, b"hello");
        collector.push(OutputStream::Stderr, b"warn");
        assert!(!collector.truncated());
        let out = collector.finish(Some(0));
        assert_eq!(
            (out.stdout_text().as_str(), out.stderr_text().as_str()),
            ("hello", "warn")
        );
        assert_eq!(out.exit_status, Some(0));
    }

    #[test]
    fn output_over_the_cap_keeps_its_head_and_says_what_was_cut() {
        let mut collector = OutputCollector::new(8);
        collector.push(OutputStream::Stdout, b"12345");
        collector.push(OutputStream::Stdout, b"67890");
        collector.push(OutputStream::Stdout, &[b'x'; 1000]);
        collector.push(OutputStream::Stderr, b"ok");
        assert!(collector.truncated());
        let out = collector.finish(None);
        assert_eq!(
            out.stdout_text(),
            format!("12345678{}", truncation_marker(8, 1002)),
            "the first bytes stay, the rest is counted"
        );
        assert_eq!(out.stderr_text(), "ok", "each stream has its own cap");
    }
}

//! The past beyond the last minute, in a fixed size. The live charts and the utilisation and
//! throttle rules read the last minute of raw samples; the two rules that look ten minutes back
//! read these summaries instead, which keep exactly what those rules use:
//!
//! - [`MemoryTrend`]: per GPU, one summary of used memory every ten seconds (count, first and
//!   last point, the latest total, and the means and co-moments of time and memory), from which
//!   least squares gives the slope and straightness the raw points would give;
//! - [`SeenProcesses`]: the latest process list, and each other process seen in the last ten
//!   minutes once, with when it was last seen.
//!
//! So an hour or a day of 8 GPUs × 1 s costs the memory of ten minutes' summaries, whatever the
//! interval.

mod memory;
mod processes;

pub use memory::{GpuMemoryTrend, MemoryTrend, Moments, BUCKET};

/// How far back memory growth and vanished processes are judged: the summaries keep this long.
pub const TREND: chrono::Duration = chrono::Duration::minutes(10);
pub use processes::SeenProcesses;

#[cfg(test)]
mod tests;

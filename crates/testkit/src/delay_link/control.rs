//! What a test can change on a running link (delay, cut, rate) and what the link counted.
//!
//! Shared between the test's thread and the forwarding thread; every read happens per packet, so
//! the values are atomics and one small std `Mutex` (never held across an await).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Whether the link carries packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CutState {
    Open,
    CutUntil(Instant),
    CutUntilRestored,
}

#[derive(Debug)]
pub(crate) struct LinkControl {
    one_way_delay_us: AtomicU64,
    /// Bytes per second in each direction; 0 means unlimited.
    rate_bytes_per_sec: AtomicU64,
    cut: Mutex<CutState>,
    pub(crate) counters: Counters,
}

impl LinkControl {
    pub(crate) fn new(one_way_delay: Duration, rate_bytes_per_sec: Option<u64>) -> Self {
        Self {
            one_way_delay_us: AtomicU64::new(micros(one_way_delay)),
            rate_bytes_per_sec: AtomicU64::new(rate_bytes_per_sec.unwrap_or(0)),
            cut: Mutex::new(CutState::Open),
            counters: Counters::default(),
        }
    }

    pub(crate) fn one_way_delay(&self) -> Duration {
        Duration::from_micros(self.one_way_delay_us.load(Ordering::Relaxed))
    }

    pub(crate) fn set_one_way_delay(&self, delay: Duration) {
        self.one_way_delay_us
            .store(micros(delay), Ordering::Relaxed);
    }

    pub(crate) fn rate_bytes_per_sec(&self) -> Option<u64> {
        match self.rate_bytes_per_sec.load(Ordering::Relaxed) {
            0 => None,
            rate => Some(rate),
        }
    }

    pub(crate) fn set_rate_bytes_per_sec(&self, rate: Option<u64>) {
        self.rate_bytes_per_sec
            .store(rate.unwrap_or(0), Ordering::Relaxed);
    }

    pub(crate) fn cut_for(&self, now: Instant, duration: Duration) {
        self.set_cut(CutState::CutUntil(now + duration));
    }

    pub(crate) fn cut_until_restored(&self) {
        self.set_cut(CutState::CutUntilRestored);
    }

    pub(crate) fn restore(&self) {
        self.set_cut(CutState::Open);
    }

    pub(crate) fn is_cut(&self, now: Instant) -> bool {
        match *self
            .cut
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            CutState::Open => false,
            CutState::CutUntil(until) => now < until,
            CutState::CutUntilRestored => true,
        }
    }

    fn set_cut(&self, state: CutState) {
        *self
            .cut
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = state;
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// Packet counters, both directions together.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) forwarded: AtomicU64,
    pub(crate) dropped_by_cut: AtomicU64,
    pub(crate) dropped_foreign: AtomicU64,
    pub(crate) dropped_queue_full: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> LinkStats {
        LinkStats {
            forwarded: self.forwarded.load(Ordering::Relaxed),
            dropped_by_cut: self.dropped_by_cut.load(Ordering::Relaxed),
            dropped_foreign: self.dropped_foreign.load(Ordering::Relaxed),
            dropped_queue_full: self.dropped_queue_full.load(Ordering::Relaxed),
        }
    }
}

/// What the link did so far (both directions together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkStats {
    /// Packets delivered to the other side.
    pub forwarded: u64,
    /// Packets dropped because the link was cut when they arrived or were due.
    pub dropped_by_cut: u64,
    /// Packets not between the two link addresses (IPv6 chatter, anything else): never forwarded.
    pub dropped_foreign: u64,
    /// Packets dropped because too many were already in flight (a full router queue).
    pub dropped_queue_full: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_cut_ends_by_itself() {
        let control = LinkControl::new(Duration::from_millis(10), None);
        let now = Instant::now();
        control.cut_for(now, Duration::from_secs(2));
        assert!(control.is_cut(now), "cut right after cutting");
        assert!(
            control.is_cut(now + Duration::from_millis(1999)),
            "still cut before the duration ends"
        );
        assert!(
            !control.is_cut(now + Duration::from_secs(2)),
            "open again once the duration is over"
        );
    }

    #[test]
    fn an_open_ended_cut_lasts_until_restored() {
        let control = LinkControl::new(Duration::from_millis(10), None);
        let now = Instant::now();
        control.cut_until_restored();
        assert!(
            control.is_cut(now + Duration::from_secs(3600)),
            "an open-ended cut never lapses"
        );
        control.restore();
        assert!(!control.is_cut(now), "restore opens the link at once");
    }

    #[test]
    fn restore_ends_a_timed_cut_early() {
        let control = LinkControl::new(Duration::from_millis(10), None);
        let now = Instant::now();
        control.cut_for(now, Duration::from_secs(60));
        control.restore();
        assert!(
            !control.is_cut(now),
            "restore wins over the remaining cut time"
        );
    }

    #[test]
    fn zero_rate_means_unlimited() {
        let control = LinkControl::new(Duration::ZERO, Some(1_000));
        assert_eq!(control.rate_bytes_per_sec(), Some(1_000));
        control.set_rate_bytes_per_sec(None);
        assert_eq!(
            control.rate_bytes_per_sec(),
            None,
            "None is stored as no limit"
        );
    }
}

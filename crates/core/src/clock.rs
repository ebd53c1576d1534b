//! The wall clock, read in one place.
//!
//! Core never asks what time it is: every function that needs "now" takes it as an argument, so a
//! bill, a forecast or a probe run is a pure function of its inputs and a test can pin the time.
//! The app and the CLI get that argument from a [`Clock`]: [`SystemClock`] in production,
//! [`FixedClock`] in tests. `clippy.toml` forbids `Utc::now`, `Local::now` and
//! `SystemTime::now` everywhere else in the workspace, so a new direct read fails the lint.

use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The computer's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    // The one sanctioned read of the wall clock: every other read goes through a `Clock`, so tests
    // can replace it and the lint can keep new direct reads out.
    #[allow(clippy::disallowed_methods)]
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that shows the time it is set to, until it is moved on: for tests.
#[derive(Debug)]
pub struct FixedClock(Mutex<DateTime<Utc>>);

impl FixedClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        Self(Mutex::new(at))
    }

    pub fn set(&self, at: DateTime<Utc>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = at;
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *now += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_clock_stands_still_until_moved() {
        let start = DateTime::parse_from_rfc3339("2025-03-01T09:30:00+08:00")
            .expect("valid time")
            .with_timezone(&Utc);
        let clock = FixedClock::new(start);
        assert_eq!(clock.now(), start);
        assert_eq!(clock.now(), start, "reading it does not move it");
        clock.advance(Duration::minutes(90));
        assert_eq!(clock.now(), start + Duration::minutes(90));
        clock.set(start);
        assert_eq!(clock.now(), start);
    }

    #[test]
    fn the_system_clock_is_after_the_code_was_written() {
        let written = DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
            .expect("valid time")
            .with_timezone(&Utc);
        assert!(
            SystemClock.now() > written,
            "the system clock reads the real time"
        );
    }
}

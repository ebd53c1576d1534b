//! Dialling again after the link dropped, so the connection is back within one handshake of the
//! network returning.
//!
//! Why not one attempt at a time: while the path is dead every SYN is lost, and the kernel
//! resends a lost SYN only after 1 s, then 3 s, then 7 s. An attempt started during an outage
//! therefore learns that the path is back up to seconds late. Instead a fresh attempt starts
//! every [`Pace`] tick (about 100 ms at first, jittered, slowing to a second over a long outage)
//! while none has finished; an attempt whose SYN got no answer within [`TCP_LIMIT`] is dropped,
//! so only a handful are ever in flight. The first attempt that logs in wins and the others are
//! dropped with their sockets. A refusal that says something definite (a changed host key, a
//! refused login) ends the redial at once: trying again cannot change it.

use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use super::auth::Credentials;
use super::connect::{connect_attempt, ConnectOptions, Connection};
use super::destination::Destination;
use super::SshError;

/// How long one attempt waits for its TCP connect before a newer attempt is trusted instead.
/// Above any real round trip (the kernel's first SYN resend comes after 1 s).
pub(crate) const TCP_LIMIT: Duration = Duration::from_millis(2500);

/// When the next attempt starts, by how long the redial has gone on: quick while the outage is
/// short (a Wi-Fi hand-over, a router restart), sparing once it is long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    started: Instant,
}

impl Pace {
    pub(crate) fn new(started: Instant) -> Self {
        Self { started }
    }

    /// The pause before the next attempt, before jitter.
    pub(crate) fn base(&self, now: Instant) -> Duration {
        match now.saturating_duration_since(self.started).as_secs() {
            0..10 => Duration::from_millis(100),
            10..60 => Duration::from_millis(300),
            _ => Duration::from_secs(1),
        }
    }

    /// The pause with ±25 % jitter, so many laptops cut by the same outage do not dial in step.
    pub(crate) fn next(&self, now: Instant) -> Duration {
        let base = self.base(now);
        let mut byte = [0u8; 1];
        // Without entropy the pause is simply not jittered.
        let _ = getrandom::fill(&mut byte);
        let quarter = base / 4;
        base - quarter + quarter * 2 * u32::from(byte[0]) / 255
    }
}

/// Whether another attempt can still succeed after `err`.
fn worth_retrying(err: &SshError) -> bool {
    err.is_transient()
        || matches!(
            err,
            SshError::Unreachable { .. } | SshError::ConnectTimeout { .. }
        )
}

/// Dial `destination` again, racing staggered attempts, for at most `keep_trying_for` (attempts
/// already under way then may still finish). Returns the first connection that logs in, or the
/// last error.
pub(crate) async fn redial(
    destination: &Destination,
    credentials: &Credentials,
    options: &ConnectOptions,
    keep_trying_for: Duration,
) -> Result<Connection, SshError> {
    let started = Instant::now();
    let pace = Pace::new(started);
    let mut attempts = FuturesUnordered::new();
    let mut last_error: Option<SshError> = None;
    let mut next_start = started;
    let mut count: u32 = 0;
    loop {
        let now = Instant::now();
        let may_start = now.duration_since(started) < keep_trying_for;
        if may_start && now >= next_start {
            count += 1;
            attempts.push(connect_attempt(
                destination,
                credentials,
                options,
                Some(TCP_LIMIT),
            ));
            next_start = now + pace.next(now);
        }
        if !may_start && attempts.is_empty() {
            return Err(last_error.unwrap_or_else(|| SshError::Unreachable {
                host: destination.host.clone(),
                port: destination.port,
                message: "no attempt to reconnect could be made".to_owned(),
            }));
        }
        let wait = tokio::time::sleep_until(tokio::time::Instant::from_std(next_start));
        tokio::select! {
            Some(result) = attempts.next(), if !attempts.is_empty() => match result {
                Ok(connection) => {
                    tracing::info!(target = %destination.label(), attempts = count, after = ?started.elapsed(), "reconnected");
                    return Ok(connection);
                }
                Err(err) if worth_retrying(&err) => last_error = Some(err),
                Err(err) => return Err(err),
            },
            () = wait, if may_start => {}
            else => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_is_quick_at_first_and_sparing_in_a_long_outage() {
        let start = Instant::now();
        let pace = Pace::new(start);
        assert_eq!(pace.base(start), Duration::from_millis(100));
        assert_eq!(
            pace.base(start + Duration::from_secs(30)),
            Duration::from_millis(300)
        );
        assert_eq!(
            pace.base(start + Duration::from_secs(600)),
            Duration::from_secs(1),
            "an outage of minutes costs one SYN a second"
        );
        for _ in 0..50 {
            let pause = pace.next(start);
            assert!(
                (Duration::from_millis(75)..=Duration::from_millis(125)).contains(&pause),
                "jitter stays within a quarter of the pace: {pause:?}"
            );
        }
    }

    #[test]
    fn only_failures_another_attempt_can_change_are_retried() {
        let refused = SshError::Refused {
            host: "h".into(),
            port: 22,
        };
        let unreachable = SshError::Unreachable {
            host: "h".into(),
            port: 22,
            message: "no route".into(),
        };
        assert!(worth_retrying(&refused), "sshd not listening yet");
        assert!(worth_retrying(&unreachable), "the network is still down");
        assert!(
            !worth_retrying(&SshError::NoCredentials),
            "nothing to log in with stays so"
        );
    }
}

//! Dialling again after the link dropped, so the connection is back within one handshake of the
//! network returning.
//!
//! Why not one attempt at a time: while the path is dead every SYN is lost, and the kernel
//! resends a lost SYN only after 1 s, then 3 s, then 7 s. An attempt started during an outage
//! therefore learns that the path is back up to seconds late. Instead a fresh TCP connect starts
//! every [`Pace`] tick (about 50 ms at first, jittered, slowing to a second over a long outage)
//! while none has answered; a connect whose SYN got no answer within [`TCP_LIMIT`] is dropped,
//! so only a bounded number are ever in flight.
//!
//! Only the first TCP connection that comes up goes on to the SSH handshake; every other
//! connect is dropped at that moment. Several handshakes at once would each cost sshd a process,
//! a key exchange and a host-key signature, slowing the one that wins (and past sshd's
//! `MaxStartups` it starts refusing). Should that handshake fail in a way another attempt can
//! change, the race starts again. A refusal that says something definite (a changed host key, a
//! refused login) ends the redial at once: trying again cannot change it.
//!
//! The key files are read once, before the first connect, not after the network is back: with a
//! passphrase that is a key derivation of tenths of a second taken off the way back. The host
//! key is still checked against known_hosts on every connection.

use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use super::auth::{Credentials, LoadedKeys};
use super::connect::{
    connect_attempt, connect_over, tcp_connect_within, ConnectOptions, Connection,
};
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
            0..10 => Duration::from_millis(50),
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

/// Dial `destination` again for at most `keep_trying_for` (a connect already under way then may
/// still finish). Returns the first connection that logs in, or the last error.
pub(crate) async fn redial(
    destination: &Destination,
    credentials: &Credentials,
    options: &ConnectOptions,
    keep_trying_for: Duration,
) -> Result<Connection, SshError> {
    if !destination.jump.is_empty() {
        // The first hop's TCP connect is raced inside each whole attempt.
        return redial_attempts(destination, credentials, options, keep_trying_for).await;
    }
    let started = Instant::now();
    let loaded = LoadedKeys::load(credentials);
    let mut last_error = None;
    // Kept across races, so a host that takes connections and drops them at once is still
    // dialled only at the pace, not in a tight loop.
    let mut next_start = started;
    loop {
        let stream = first_tcp(
            destination,
            started,
            keep_trying_for,
            &mut next_start,
            last_error.take(),
        )
        .await?;
        match connect_over(destination, stream, credentials, &loaded, options).await {
            Ok(connection) => {
                tracing::info!(target = %destination.label(), after = ?started.elapsed(), "reconnected");
                return Ok(connection);
            }
            Err(err) if worth_retrying(&err) && started.elapsed() < keep_trying_for => {
                tracing::info!(target = %destination.label(), code = crate::Coded::code(&err), "the handshake after the redial failed; dialling again");
                last_error = Some(err);
            }
            Err(err) => return Err(err),
        }
    }
}

/// Race staggered TCP connects to `destination`, the first at `*next_start`, until one is up
/// (the others are dropped) or the redial's time is over.
async fn first_tcp(
    destination: &Destination,
    started: Instant,
    keep_trying_for: Duration,
    next_start: &mut Instant,
    mut last_error: Option<SshError>,
) -> Result<tokio::net::TcpStream, SshError> {
    let pace = Pace::new(started);
    let mut connects = FuturesUnordered::new();
    loop {
        let now = Instant::now();
        let may_start = now.duration_since(started) < keep_trying_for;
        if may_start && now >= *next_start {
            connects.push(tcp_connect_within(destination, TCP_LIMIT));
            *next_start = now + pace.next(now);
        }
        if !may_start && connects.is_empty() {
            return Err(last_error.unwrap_or_else(|| no_attempt(destination)));
        }
        let wait = tokio::time::sleep_until(tokio::time::Instant::from_std(*next_start));
        tokio::select! {
            Some(result) = connects.next(), if !connects.is_empty() => match result {
                Ok(stream) => return Ok(stream),
                Err(err) if worth_retrying(&err) => last_error = Some(err),
                Err(err) => return Err(err),
            },
            () = wait, if may_start => {}
            else => {}
        }
    }
}

fn no_attempt(destination: &Destination) -> SshError {
    SshError::Unreachable {
        host: destination.host.clone(),
        port: destination.port,
        message: "no attempt to reconnect could be made".to_owned(),
    }
}

/// Through jump hosts: race staggered whole attempts; the first that logs in wins.
async fn redial_attempts(
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
            return Err(last_error.unwrap_or_else(|| no_attempt(destination)));
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
        assert_eq!(pace.base(start), Duration::from_millis(50));
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
                (Duration::from_millis(37)..=Duration::from_millis(63)).contains(&pause),
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

    #[tokio::test]
    async fn a_redial_logs_in_with_the_keys_it_read_before_dialling() {
        use leasehold_testkit::{ClientKey, TestHost};

        let host = TestHost::start();
        let scratch = tempfile::tempdir().expect("scratch dir");
        let key = scratch.path().join("id_ed25519");
        std::fs::copy(host.key(ClientKey::Ed25519), &key).expect("copy the client key");
        let command = super::super::parse_ssh_command(&host.ssh_command()).expect("parses");
        let destination = Destination::resolve(&command, None).expect("resolves");
        let credentials = Credentials {
            keys: vec![super::super::KeyFile {
                path: key.clone(),
                passphrase: None,
            }],
            ..Credentials::default()
        };
        let options = ConnectOptions {
            known_hosts: super::super::KnownHosts::only(scratch.path().join("known_hosts")),
            accept_new_host_key: true,
            ..ConnectOptions::default()
        };
        let loaded = LoadedKeys::load(&credentials);
        // Gone after it was read: a login that still reached for the file would fail.
        std::fs::remove_file(&key).expect("remove the key file");
        let now = Instant::now();
        let mut next_start = now;
        let stream = first_tcp(
            &destination,
            now,
            Duration::from_secs(10),
            &mut next_start,
            None,
        )
        .await
        .expect("sshd answers");
        connect_over(&destination, stream, &credentials, &loaded, &options)
            .await
            .unwrap_or_else(|err| panic!("the key read beforehand logs in: {err}\n{}", host.log()));
    }

    /// `someone@127.0.0.1:port` with its own known_hosts (kept while the folder lives).
    fn loopback_port(port: u16) -> (tempfile::TempDir, Destination, ConnectOptions) {
        let scratch = tempfile::tempdir().expect("scratch dir");
        let command = super::super::parse_ssh_command(&format!("ssh -p {port} someone@127.0.0.1"))
            .expect("parses");
        let destination = Destination::resolve(&command, None).expect("resolves");
        let options = ConnectOptions {
            known_hosts: super::super::KnownHosts::only(scratch.path().join("known_hosts")),
            ..ConnectOptions::default()
        };
        (scratch, destination, options)
    }

    #[tokio::test]
    async fn only_the_first_connection_that_answers_goes_on_to_a_handshake() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        use tokio::io::AsyncReadExt;

        // A server that takes every connection and never answers: each handshake hangs until
        // its timeout. Count the connections on which the client began SSH (sent its banner).
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        let port = listener.local_addr().expect("address").port();
        let spoken = Arc::new(AtomicUsize::new(0));
        let counter = spoken.clone();
        let server = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 256];
                    if matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {
                        counter.fetch_add(1, Ordering::SeqCst);
                    }
                    while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
                });
            }
        });
        let (_scratch, destination, mut options) = loopback_port(port);
        options.connect_timeout = Duration::from_secs(1);
        // Attempts may start for 300 ms; the one handshake under way hangs for a second.
        let result = redial(
            &destination,
            &Credentials::default(),
            &options,
            Duration::from_millis(300),
        )
        .await;
        server.abort();
        assert!(
            matches!(result, Err(SshError::ConnectTimeout { .. })),
            "nothing answered: {:?}",
            result.err()
        );
        assert_eq!(
            spoken.load(Ordering::SeqCst),
            1,
            "one handshake at a time: a connection taken by TCP is not raced by more handshakes"
        );
    }

    #[tokio::test]
    async fn a_host_that_drops_every_connection_is_still_dialled_only_at_the_pace() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;

        // Takes each connection and closes it at once (sshd past MaxStartups does so): every
        // handshake fails within moments, and each failure may be retried.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listen");
        let port = listener.local_addr().expect("address").port();
        let taken = Arc::new(AtomicUsize::new(0));
        let counter = taken.clone();
        let server = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        let (_scratch, destination, options) = loopback_port(port);
        let keep_trying_for = Duration::from_millis(400);
        let result = redial(
            &destination,
            &Credentials::default(),
            &options,
            keep_trying_for,
        )
        .await;
        server.abort();
        assert!(result.is_err(), "nothing let us in");
        // Connects start only at pace ticks, at least 3/4 of the 50 ms pace apart.
        let most = (keep_trying_for.as_millis() / 37 + 1) as usize;
        let dialled = taken.load(Ordering::SeqCst);
        assert!(
            (1..=most).contains(&dialled),
            "{dialled} connections in {keep_trying_for:?}: failures must not be retried in a tight loop"
        );
    }
}

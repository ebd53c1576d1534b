//! Opening one authenticated SSH connection: TCP (or a tunnel through jump hosts), handshake,
//! host key verdict, login — with a timeout, and retries while a freshly started instance is
//! still bringing sshd up ("running" in the provider console is not "sshd ready").

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use russh::client::{self, Handle};
use russh::keys::{PublicKey, PublicKeyOrCertificate};
use tokio::net::TcpStream;

use super::auth::{authenticate, Credentials, LoadedKeys};
use super::destination::Destination;
use super::error::KnownKey;
use super::jump::jump_host_credentials;
use super::known_hosts::{fingerprint, prefer_known, HostKeyVerdict, KnownHosts};
use super::quick_ack::QuickAckStream;
use super::steps::{ConnectStep, StepObserver};
use super::SshError;

/// How to treat host keys and how long to wait.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub known_hosts: KnownHosts,
    /// Trust (and record) a host seen for the first time. Never applies to a changed key.
    pub accept_new_host_key: bool,
    /// Trust (and record) a host seen for the first time only if its key has this SHA256
    /// fingerprint: the one the user was shown and confirmed. A different key is still "unknown",
    /// so nothing swapped in between the dialog and the reconnect can slip through.
    pub trusted_fingerprint: Option<String>,
    /// Limit for TCP connect plus SSH handshake, per attempt.
    pub connect_timeout: Duration,
    /// Keep retrying refused or cut connections this long (an instance booting). Zero: no retry.
    pub boot_wait: Duration,
    /// How long [`super::SshTarget`] keeps trying to reconnect after the link drops.
    pub reconnect_window: Duration,
    /// Keepalive interval when the destination sets none (`ServerAliveInterval`).
    pub keepalive: Duration,
    /// How long a command or transfer waits for one of the connection's channels to free up
    /// before giving up with `ssh.channels_busy`.
    pub channel_wait: Duration,
    /// Receives each stage (TCP, handshake, host key, login) as it starts, ends or fails.
    pub observer: StepObserver,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            known_hosts: KnownHosts::app_default(),
            accept_new_host_key: false,
            trusted_fingerprint: None,
            connect_timeout: Duration::from_secs(10),
            boot_wait: Duration::ZERO,
            reconnect_window: Duration::from_secs(30),
            keepalive: Duration::from_secs(15),
            channel_wait: Duration::from_secs(60),
            observer: StepObserver::default(),
        }
    }
}

/// Per-channel receive window. Large, so a bulk download is not stalled waiting for window
/// adjustments on a high-latency link (the default 2 MiB caps throughput at 2 MiB per RTT), but
/// not larger: with 16 MiB sshd spent its time growing and clearing its output buffer, and the
/// download at 50 ms RTT fell from 39 to 25 MB/s.
const WINDOW_SIZE: u32 = 8 * 1024 * 1024;
/// Largest packet we accept; russh warns above a TCP segment's 64 KiB.
const MAX_PACKET: u32 = 65535;

/// An authenticated connection, and the jump connection it is tunnelled through (kept alive).
pub(crate) struct Connection {
    pub(crate) handle: Handle<HostKeyCheck>,
    _via: Option<Arc<Connection>>,
}

/// The client handler: judges the server's host key against known_hosts and remembers why,
/// because russh turns a refusal into a generic "unknown key" error.
pub(crate) struct HostKeyCheck {
    host: String,
    port: u16,
    known_hosts: KnownHosts,
    accept_new: bool,
    trusted_fingerprint: Option<String>,
    observer: StepObserver,
    outcome: Arc<Mutex<Option<SshError>>>,
}

impl client::Handler for HostKeyCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        server_key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = match server_key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            PublicKeyOrCertificate::Certificate(cert) => {
                PublicKey::new(cert.public_key().clone(), "")
            }
        };
        self.observer.done(ConnectStep::Handshake);
        self.observer.started(ConnectStep::HostKey);
        let presented = fingerprint(&key);
        let confirmed = self.trusted_fingerprint.as_deref() == Some(presented.as_str());
        let refusal = match self.known_hosts.check(&self.host, self.port, &key) {
            HostKeyVerdict::Trusted => None,
            HostKeyVerdict::Unknown if self.accept_new || confirmed => {
                self.known_hosts.learn(&self.host, self.port, &key).err()
            }
            HostKeyVerdict::Unknown => Some(SshError::HostKeyUnknown {
                host: self.host.clone(),
                port: self.port,
                fingerprint: presented,
                algorithm: key.algorithm().to_string(),
            }),
            HostKeyVerdict::Changed { recorded } => Some(SshError::HostKeyChanged {
                host: self.host.clone(),
                port: self.port,
                new_fingerprint: fingerprint(&key),
                new_algorithm: key.algorithm().to_string(),
                recorded: recorded.iter().map(KnownKey::from).collect(),
            }),
            HostKeyVerdict::Revoked { file } => Some(SshError::HostKeyRevoked {
                host: self.host.clone(),
                fingerprint: fingerprint(&key),
                known_hosts: file,
            }),
            HostKeyVerdict::ByCertificateAuthority { file, line } => {
                Some(SshError::HostKeyByCertificate {
                    host: self.host.clone(),
                    fingerprint: fingerprint(&key),
                    known_hosts: file,
                    line,
                })
            }
        };
        let trusted = refusal.is_none();
        if trusted {
            self.observer.done(ConnectStep::HostKey);
        }
        if let Ok(mut slot) = self.outcome.lock() {
            *slot = refusal;
        }
        Ok(trusted)
    }
}

/// Connect, retrying transient failures until `boot_wait` has passed (backoff 0.25 s → 4 s).
pub(crate) async fn connect_with_retry(
    destination: &Destination,
    credentials: &Credentials,
    options: &ConnectOptions,
    keep_trying_for: Duration,
) -> Result<Connection, SshError> {
    let started = Instant::now();
    let mut backoff = Duration::from_millis(250);
    loop {
        match connect(destination, credentials, options).await {
            Ok(connection) => return Ok(connection),
            Err(err) if err.is_transient() && started.elapsed() + backoff < keep_trying_for => {
                tracing::info!(target = %destination.label(), code = crate::Coded::code(&err), ?backoff, "sshd not ready, retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(4));
            }
            Err(err) => return Err(err),
        }
    }
}

/// One attempt: through every jump host in turn, then the destination. Each jump host logs in
/// with its own credentials (see `jump`); `credentials` go to the destination only.
pub(crate) async fn connect(
    destination: &Destination,
    credentials: &Credentials,
    options: &ConnectOptions,
) -> Result<Connection, SshError> {
    connect_attempt(destination, credentials, options, None).await
}

/// [`connect`], with the first TCP connect given up after `tcp_limit` (see `redial`: an attempt
/// whose SYN was lost is replaced by a fresh one rather than waiting out TCP's retransmission).
pub(crate) async fn connect_attempt(
    destination: &Destination,
    credentials: &Credentials,
    options: &ConnectOptions,
    tcp_limit: Option<Duration>,
) -> Result<Connection, SshError> {
    let mut via: Option<Arc<Connection>> = None;
    for hop in &destination.jump {
        let hop_credentials = jump_host_credentials(hop);
        let way = match via.take() {
            None => Way::Dial(tcp_limit),
            Some(previous) => Way::Through(previous),
        };
        let connection = connect_hop(hop, way, &hop_credentials, None, options).await?;
        via = Some(Arc::new(connection));
    }
    let way = match via {
        None => Way::Dial(tcp_limit),
        Some(previous) => Way::Through(previous),
    };
    connect_hop(destination, way, credentials, None, options).await
}

/// Handshake and login on a TCP connection to `destination` (no jump hosts) that is already up,
/// with key files read beforehand: the part of a redial after its winning TCP connect.
pub(crate) async fn connect_over(
    destination: &Destination,
    stream: TcpStream,
    credentials: &Credentials,
    loaded: &LoadedKeys,
    options: &ConnectOptions,
) -> Result<Connection, SshError> {
    connect_hop(
        destination,
        Way::Connected(stream),
        credentials,
        Some(loaded),
        options,
    )
    .await
}

/// How the byte stream to a hop is reached.
enum Way {
    /// Dial TCP, giving up the connect after the limit when one is set.
    Dial(Option<Duration>),
    /// A TCP connection already made.
    Connected(TcpStream),
    /// A channel through the previous hop (kept alive with the connection).
    Through(Arc<Connection>),
}

async fn connect_hop(
    hop: &Destination,
    way: Way,
    credentials: &Credentials,
    loaded: Option<&LoadedKeys>,
    options: &ConnectOptions,
) -> Result<Connection, SshError> {
    // Ask for the key types this host is known by first, so a host that also has keys of other
    // types proves itself with the one we can check.
    let known = options.known_hosts.known_algorithms(&hop.host, hop.port);
    let preferred = russh::Preferred {
        key: prefer_known(&russh::Preferred::DEFAULT.key, &known).into(),
        ..russh::Preferred::DEFAULT
    };
    let config = Arc::new(client::Config {
        preferred,
        window_size: WINDOW_SIZE,
        maximum_packet_size: MAX_PACKET,
        keepalive_interval: Some(hop.keepalive.unwrap_or(options.keepalive)),
        keepalive_max: 3,
        nodelay: true,
        ..client::Config::default()
    });
    let outcome = Arc::new(Mutex::new(None));
    let handler = HostKeyCheck {
        host: hop.host.clone(),
        port: hop.port,
        known_hosts: options.known_hosts.clone(),
        accept_new: options.accept_new_host_key,
        trusted_fingerprint: options.trusted_fingerprint.clone(),
        observer: options.observer.clone(),
        outcome: outcome.clone(),
    };
    let steps = &options.observer;
    let result = connect_hop_steps(
        hop,
        way,
        Login {
            credentials,
            loaded,
        },
        options,
        HopClient {
            config,
            handler,
            outcome,
        },
    )
    .await;
    if result.is_err() {
        steps.fail_running();
    }
    result
}

/// What a hop is logged in with: the credentials, and their key files when already read.
struct Login<'a> {
    credentials: &'a Credentials,
    loaded: Option<&'a LoadedKeys>,
}

/// The russh client of one hop: its configuration, the host key judge and where the judge
/// leaves its reason for a refusal.
struct HopClient {
    config: Arc<client::Config>,
    handler: HostKeyCheck,
    outcome: Arc<Mutex<Option<SshError>>>,
}

async fn connect_hop_steps(
    hop: &Destination,
    way: Way,
    login: Login<'_>,
    options: &ConnectOptions,
    hop_client: HopClient,
) -> Result<Connection, SshError> {
    let HopClient {
        config,
        handler,
        outcome,
    } = hop_client;
    let steps = &options.observer;
    let timeout = hop.connect_timeout.unwrap_or(options.connect_timeout);
    let mut via = None;
    let handshake = async {
        steps.started(ConnectStep::Tcp);
        let result = match way {
            Way::Dial(tcp_limit) => {
                let stream = match tcp_limit {
                    None => tcp_connect(hop).await?,
                    Some(limit) => tcp_connect_within(hop, limit).await?,
                };
                steps.done(ConnectStep::Tcp);
                steps.started(ConnectStep::Handshake);
                client::connect_stream(config, QuickAckStream::new(stream), handler).await
            }
            Way::Connected(stream) => {
                steps.done(ConnectStep::Tcp);
                steps.started(ConnectStep::Handshake);
                client::connect_stream(config, QuickAckStream::new(stream), handler).await
            }
            Way::Through(jump) => {
                let channel = jump
                    .handle
                    .channel_open_direct_tcpip(
                        hop.host.clone(),
                        u32::from(hop.port),
                        "127.0.0.1",
                        0,
                    )
                    .await
                    .map_err(|err| SshError::Unreachable {
                        host: hop.host.clone(),
                        port: hop.port,
                        message: format!("the jump host could not reach it: {err}"),
                    })?;
                via = Some(jump);
                steps.done(ConnectStep::Tcp);
                steps.started(ConnectStep::Handshake);
                client::connect_stream(config, channel.into_stream(), handler).await
            }
        };
        result.map_err(|err| {
            let refusal = outcome.lock().ok().and_then(|mut slot| slot.take());
            refusal.unwrap_or_else(|| SshError::Handshake {
                host: hop.host.clone(),
                port: hop.port,
                message: err.to_string(),
            })
        })
    };
    let mut handle = tokio::time::timeout(timeout, handshake)
        .await
        .map_err(|_| SshError::ConnectTimeout {
            host: hop.host.clone(),
            port: hop.port,
            after: timeout,
        })??;
    // Login can wait on a slow agent or a server-side delay after a wrong password; give it its
    // own, longer limit so a hung server still cannot block us forever.
    steps.started(ConnectStep::Auth);
    tokio::time::timeout(
        Duration::from_secs(60),
        authenticate(
            &mut handle,
            &hop.host,
            &hop.user,
            login.credentials,
            login.loaded,
        ),
    )
    .await
    .map_err(|_| SshError::ConnectTimeout {
        host: hop.host.clone(),
        port: hop.port,
        after: Duration::from_secs(60),
    })??;
    steps.done(ConnectStep::Auth);
    Ok(Connection { handle, _via: via })
}

/// [`tcp_connect`], given up after `limit` (a SYN lost on a dead path is not waited out).
pub(crate) async fn tcp_connect_within(
    hop: &Destination,
    limit: Duration,
) -> Result<TcpStream, SshError> {
    tokio::time::timeout(limit, tcp_connect(hop))
        .await
        .map_err(|_| SshError::Unreachable {
            host: hop.host.clone(),
            port: hop.port,
            message: format!("no answer to the TCP connect within {limit:?}"),
        })?
}

async fn tcp_connect(hop: &Destination) -> Result<TcpStream, SshError> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((hop.host.as_str(), hop.port))
        .await
        .map_err(|err| SshError::UnknownHost {
            host: hop.host.clone(),
            message: err.to_string(),
        })?
        .collect();
    let mut last_error = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => {
                // Small request/response traffic (exec, SFTP acks) must not wait for Nagle.
                if let Err(err) = stream.set_nodelay(true) {
                    tracing::debug!(%err, "set_nodelay failed");
                }
                return Ok(stream);
            }
            Err(err) => last_error = Some(err),
        }
    }
    Err(match last_error {
        Some(err) if err.kind() == std::io::ErrorKind::ConnectionRefused => SshError::Refused {
            host: hop.host.clone(),
            port: hop.port,
        },
        Some(err) => SshError::Unreachable {
            host: hop.host.clone(),
            port: hop.port,
            message: err.to_string(),
        },
        None => SshError::UnknownHost {
            host: hop.host.clone(),
            message: "the name has no addresses".to_owned(),
        },
    })
}

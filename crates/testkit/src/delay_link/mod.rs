//! A userspace delay link: a network namespace reachable from this machine only through a link that
//! holds every packet for a set time each way and can be cut on demand.
//!
//! Rented GPU hosts are far away (50–300 ms), and links drop; tests and benchmarks must see both.
//! The kernel on our CI has no `netem` qdisc, so the link is two TUN devices, one in the root
//! namespace and one moved into the test namespace, with a forwarding thread in between that
//! delays, rate-limits or drops packets. Only IPv4 between the link's two addresses is carried.

mod control;
mod forward;
mod slot;

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tun_rs::{AsyncDevice, DeviceBuilder, SyncDevice};

use self::control::LinkControl;
pub use self::control::LinkStats;
use self::forward::Direction;
use self::slot::{AddressPair, SlotLock};
use crate::netns::{ip_output, run_ip, Netns, NetnsError};

#[derive(Debug, thiserror::Error)]
pub enum DelayLinkError {
    #[error(transparent)]
    Netns(#[from] NetnsError),
    #[error("could not create a TUN device: {0}")]
    Tun(std::io::Error),
    #[error("could not lock the link address table: {0}")]
    Lock(std::io::Error),
    #[error("every 10.213.0.0/16 address pair is in use")]
    NoFreeAddresses,
    #[error("the forwarding thread failed to start: {0}")]
    Thread(String),
    #[error("unexpected `ip -s -j link` output for {device}")]
    DeviceStats { device: String },
}

/// Packets each TUN device queues before the forwarder reads them. Far above the default 500, so
/// a burst (russh sends up to its 16 MiB window at once) or a moment without CPU on a busy
/// machine does not drop packets that a real path without a bottleneck would carry.
const TX_QUEUE_LEN: &str = "10000";

/// Settings a link starts with; all of them can be changed while it runs.
#[derive(Debug, Clone, Copy)]
pub struct LinkOptions {
    pub one_way_delay: Duration,
    /// Per direction; `None` carries packets as fast as they come.
    pub rate_bytes_per_sec: Option<u64>,
}

/// A running link to a fresh namespace. Dropping it stops forwarding, kills everything still
/// running in the namespace and removes the namespace and both devices.
pub struct DelayLink {
    control: Arc<LinkControl>,
    addresses: AddressPair,
    host_device: String,
    ns_device: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    forwarder: Option<JoinHandle<()>>,
    // Declared last: removed after the forwarder has let go of the devices.
    netns: Netns,
}

impl DelayLink {
    /// Starts a link whose round trip is twice `one_way_delay`, with no rate limit.
    pub fn start(one_way_delay: Duration) -> Result<Self, DelayLinkError> {
        Self::start_with(LinkOptions {
            one_way_delay,
            rate_bytes_per_sec: None,
        })
    }

    pub fn start_with(options: LinkOptions) -> Result<Self, DelayLinkError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let netns = Netns::create()?;
        let serial = NEXT.fetch_add(1, Ordering::Relaxed);
        // Interface names are limited to 15 bytes: "lh" + pid (≤ 7 digits) + side + serial.
        let host_device = format!("lh{}h{serial}", std::process::id());
        let ns_device = format!("lh{}n{serial}", std::process::id());

        let lock = SlotLock::acquire().map_err(DelayLinkError::Lock)?;
        let addresses = lock.free_pair().ok_or(DelayLinkError::NoFreeAddresses)?;
        let host_tun = open_tun(&host_device)?;
        let ns_tun = open_tun(&ns_device)?;
        configure_host_side(&host_device, addresses)?;
        drop(lock);
        configure_namespace_side(&netns, &ns_device, addresses)?;

        let control = Arc::new(LinkControl::new(
            options.one_way_delay,
            options.rate_bytes_per_sec,
        ));
        let (shutdown, forwarder) =
            spawn_forwarder(host_tun, ns_tun, addresses, Arc::clone(&control))?;
        Ok(Self {
            control,
            addresses,
            host_device,
            ns_device,
            shutdown: Some(shutdown),
            forwarder: Some(forwarder),
            netns,
        })
    }

    /// The namespace behind the link: run servers there with [`Netns::command`].
    pub fn namespace(&self) -> &Netns {
        &self.netns
    }

    /// This machine's end of the link (what the namespace sees as its peer).
    pub fn host_addr(&self) -> Ipv4Addr {
        self.addresses.host
    }

    /// The namespace's address: connect here to reach a server inside it.
    pub fn ns_addr(&self) -> Ipv4Addr {
        self.addresses.namespace
    }

    /// Name of the TUN device in the root namespace.
    pub fn host_device(&self) -> &str {
        &self.host_device
    }

    pub fn one_way_delay(&self) -> Duration {
        self.control.one_way_delay()
    }

    /// Changes the one-way delay for packets arriving from now on.
    pub fn set_delay(&self, one_way_delay: Duration) {
        self.control.set_one_way_delay(one_way_delay);
    }

    /// Limits each direction to `rate` bytes per second (`None`: unlimited).
    pub fn set_rate(&self, rate_bytes_per_sec: Option<u64>) {
        self.control.set_rate_bytes_per_sec(rate_bytes_per_sec);
    }

    /// Drops every packet, in flight or new, for `duration`; the link then reopens by itself.
    pub fn cut(&self, duration: Duration) {
        self.control.cut_for(Instant::now(), duration);
    }

    /// Drops every packet until [`DelayLink::restore`].
    pub fn cut_until_restored(&self) {
        self.control.cut_until_restored();
    }

    /// Reopens a cut link at once.
    pub fn restore(&self) {
        self.control.restore();
    }

    pub fn is_cut(&self) -> bool {
        self.control.is_cut(Instant::now())
    }

    pub fn stats(&self) -> LinkStats {
        self.control.counters.snapshot()
    }

    /// Packets the kernel dropped, both ends together, because a TUN device's queue was full
    /// before the forwarder read them. Nonzero means the forwarder fell behind (a starved
    /// machine) and the link lost packets a real one would have carried: distrust timings then.
    pub fn kernel_queue_drops(&self) -> Result<u64, DelayLinkError> {
        let host = ip_output(["-s", "-j", "link", "show", "dev", self.host_device.as_str()])?;
        let ns = ip_output([
            "-n",
            self.netns.name(),
            "-s",
            "-j",
            "link",
            "show",
            "dev",
            self.ns_device.as_str(),
        ])?;
        let dropped = |json: &str, device: &str| {
            tx_dropped(json).ok_or_else(|| DelayLinkError::DeviceStats {
                device: device.to_owned(),
            })
        };
        Ok(dropped(&host, &self.host_device)? + dropped(&ns, &self.ns_device)?)
    }
}

/// `stats64.tx.dropped` of the one device in `ip -s -j link show dev X` output.
fn tx_dropped(json: &str) -> Option<u64> {
    let parsed: serde_json::Value = serde_json::from_str(json).ok()?;
    parsed
        .get(0)?
        .get("stats64")?
        .get("tx")?
        .get("dropped")?
        .as_u64()
}

impl Drop for DelayLink {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(forwarder) = self.forwarder.take() {
            let _ = forwarder.join();
        }
        // The TUN devices closed with the forwarder; `netns` is dropped next and removes the rest.
    }
}

impl std::fmt::Debug for DelayLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayLink")
            .field("namespace", &self.netns.name())
            .field("host_addr", &self.addresses.host)
            .field("ns_addr", &self.addresses.namespace)
            .field("one_way_delay", &self.one_way_delay())
            .finish_non_exhaustive()
    }
}

/// A TUN device (no packet-information header) that lives as long as its file descriptor.
fn open_tun(name: &str) -> Result<SyncDevice, DelayLinkError> {
    DeviceBuilder::new()
        .name(name)
        .with(|builder| {
            builder.packet_information(false);
        })
        .build_sync()
        .map_err(DelayLinkError::Tun)
}

fn configure_host_side(device: &str, pair: AddressPair) -> Result<(), DelayLinkError> {
    let host = pair.host.to_string();
    let peer = format!("{}/32", pair.namespace);
    // No IPv6 link-local address: the link carries IPv4 only, so spare it the chatter.
    run_ip(["link", "set", "dev", device, "addrgenmode", "none"])?;
    run_ip([
        "addr",
        "add",
        host.as_str(),
        "peer",
        peer.as_str(),
        "dev",
        device,
    ])?;
    run_ip([
        "link",
        "set",
        "dev",
        device,
        "txqueuelen",
        TX_QUEUE_LEN,
        "up",
    ])?;
    Ok(())
}

fn configure_namespace_side(
    netns: &Netns,
    device: &str,
    pair: AddressPair,
) -> Result<(), DelayLinkError> {
    // A TUN device keeps its file descriptor when moved; its addresses are set after the move
    // because moving a device flushes them.
    run_ip(["link", "set", "dev", device, "netns", netns.name()])?;
    let own = pair.namespace.to_string();
    let peer = format!("{}/32", pair.host);
    netns.ip(["link", "set", "dev", device, "addrgenmode", "none"])?;
    netns.ip([
        "addr",
        "add",
        own.as_str(),
        "peer",
        peer.as_str(),
        "dev",
        device,
    ])?;
    netns.ip([
        "link",
        "set",
        "dev",
        device,
        "txqueuelen",
        TX_QUEUE_LEN,
        "up",
    ])?;
    Ok(())
}

type Forwarder = (tokio::sync::oneshot::Sender<()>, JoinHandle<()>);

/// Runs both directions on a thread of their own, so the link keeps its timing whatever the
/// caller's runtime is doing (a benchmark saturating it, a test blocking in sync code).
fn spawn_forwarder(
    host_tun: SyncDevice,
    ns_tun: SyncDevice,
    pair: AddressPair,
    control: Arc<LinkControl>,
) -> Result<Forwarder, DelayLinkError> {
    let (shutdown, shutdown_requested) = tokio::sync::oneshot::channel::<()>();
    let (ready, started) = std::sync::mpsc::channel::<Result<(), String>>();
    let thread = std::thread::Builder::new()
        .name("delay-link".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(err) => {
                    let _ = ready.send(Err(err.to_string()));
                    return;
                }
            };
            let writers = runtime.block_on(async move {
                let devices = AsyncDevice::new(host_tun).and_then(|host| {
                    AsyncDevice::new(ns_tun).map(|ns| (Arc::new(host), Arc::new(ns)))
                });
                let writers = devices.and_then(|(host, ns)| {
                    let to_ns = forward::start_writer(Arc::clone(&ns), Arc::clone(&control))?;
                    let to_host = forward::start_writer(Arc::clone(&host), Arc::clone(&control))?;
                    Ok(((host, ns), to_ns, to_host))
                });
                let ((host, ns), (to_ns, ns_writer), (to_host, host_writer)) = match writers {
                    Ok(started) => started,
                    Err(err) => {
                        let _ = ready.send(Err(err.to_string()));
                        return Vec::new();
                    }
                };
                let _ = ready.send(Ok(()));
                let host_to_ns = Direction {
                    source: pair.host,
                    destination: pair.namespace,
                };
                let ns_to_host = Direction {
                    source: pair.namespace,
                    destination: pair.host,
                };
                // Whichever ends first ends both; the readers drop their queues with them.
                tokio::select! {
                    () = forward::forward(host, to_ns, host_to_ns, Arc::clone(&control)) => {}
                    () = forward::forward(ns, to_host, ns_to_host, control) => {}
                    _ = shutdown_requested => {}
                }
                vec![ns_writer, host_writer]
            });
            // The devices close when the last writer lets go of them.
            for writer in writers {
                let _ = writer.join();
            }
        })
        .map_err(|err| DelayLinkError::Thread(err.to_string()))?;
    match started.recv() {
        Ok(Ok(())) => Ok((shutdown, thread)),
        Ok(Err(err)) => Err(DelayLinkError::Thread(err)),
        Err(_) => Err(DelayLinkError::Thread("exited without a word".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tx_drops_from_ip_json() {
        let json = r#"[{"ifindex":7,"ifname":"lh1h0","stats64":{"rx":{"bytes":1,"dropped":3},"tx":{"bytes":9,"packets":2,"dropped":41}}}]"#;
        assert_eq!(
            tx_dropped(json),
            Some(41),
            "transmit drops, not receive drops"
        );
        assert_eq!(tx_dropped("[]"), None, "no device");
        assert_eq!(tx_dropped("not json"), None);
    }
}

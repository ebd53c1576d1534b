//! Moving packets from one TUN device to the other, each held until its departure time.
//!
//! One reader and one writer per direction, joined by a bounded queue: the reader stamps each
//! packet with when it may leave (arrival + delay, later if a rate is set), the writer waits for
//! that moment. A constant delay keeps packets in order; a full queue drops like a router would.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tun_rs::AsyncDevice;

use super::control::{Counters, LinkControl};

/// How many packets may be in flight per direction before new ones are dropped. At 50 MB/s and
/// 25 ms one way about 900 full-size packets are in flight; this leaves room for faster links.
const QUEUE_PACKETS: usize = 8192;

/// Larger than any MTU the link uses, so a read never truncates a packet.
const READ_BUFFER: usize = 65_536;

/// The only traffic a direction carries: IPv4 from `source` to `destination`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Direction {
    pub(crate) source: Ipv4Addr,
    pub(crate) destination: Ipv4Addr,
}

impl Direction {
    /// True when `packet` is an IPv4 packet from this direction's source to its destination.
    /// Everything else (IPv6 router chatter, other addresses) must never leave the test link.
    pub(crate) fn carries(&self, packet: &[u8]) -> bool {
        let (Some(version), Some(source), Some(destination)) = (
            packet.first().map(|b| b >> 4),
            packet.get(12..16),
            packet.get(16..20),
        ) else {
            return false;
        };
        version == 4
            && source == self.source.octets().as_slice()
            && destination == self.destination.octets().as_slice()
    }
}

/// When each packet may leave: after the delay, and after the previous packet has finished
/// "serialising" when a rate is set.
#[derive(Debug, Default)]
pub(crate) struct Departures {
    line_free_at: Option<Instant>,
}

impl Departures {
    pub(crate) fn schedule(
        &mut self,
        arrival: Instant,
        len: usize,
        delay: Duration,
        rate_bytes_per_sec: Option<u64>,
    ) -> Instant {
        let Some(rate) = rate_bytes_per_sec.filter(|r| *r > 0) else {
            self.line_free_at = None;
            return arrival + delay;
        };
        let starts = self.line_free_at.map_or(arrival, |free| free.max(arrival));
        let on_the_wire = Duration::from_secs_f64(len as f64 / rate as f64);
        self.line_free_at = Some(starts + on_the_wire);
        starts + on_the_wire + delay
    }
}

/// Packets on their way to one device, each with its departure time.
pub(crate) type Queue = mpsc::Sender<(Instant, Vec<u8>)>;

/// Starts the thread that writes to `to`. Writing has a thread of its own because tokio's timer
/// rounds every wait up to the next whole millisecond (about 1.4 ms late per hop), while a
/// thread's sleep wakes within microseconds. The thread ends once the queue's sender is dropped
/// and the packets still in it have been delivered.
pub(crate) fn start_writer(
    to: Arc<AsyncDevice>,
    control: Arc<LinkControl>,
) -> std::io::Result<(Queue, JoinHandle<()>)> {
    let (queue, due) = mpsc::channel(QUEUE_PACKETS);
    let writer = std::thread::Builder::new()
        .name("delay-link-out".into())
        .spawn(move || deliver(&to, due, &control))?;
    Ok((queue, writer))
}

/// Reads packets from `from` and queues those the link carries, until dropped or the device fails.
pub(crate) async fn forward(
    from: Arc<AsyncDevice>,
    queue: Queue,
    direction: Direction,
    control: Arc<LinkControl>,
) {
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut departures = Departures::default();
    loop {
        let len = match from.recv(&mut buffer).await {
            Ok(len) => len,
            Err(err) => {
                tracing::warn!(%err, "delay link stopped reading");
                return;
            }
        };
        let packet = &buffer[..len];
        if !direction.carries(packet) {
            Counters::add(&control.counters.dropped_foreign);
            continue;
        }
        if control.is_cut(Instant::now()) {
            Counters::add(&control.counters.dropped_by_cut);
            continue;
        }
        let departure = departures.schedule(
            Instant::now(),
            len,
            control.one_way_delay(),
            control.rate_bytes_per_sec(),
        );
        if queue.try_send((departure, packet.to_vec())).is_err() {
            Counters::add(&control.counters.dropped_queue_full);
        }
    }
}

/// Writes each queued packet at its departure time (or drops it if the link is cut by then).
fn deliver(to: &AsyncDevice, mut due: mpsc::Receiver<(Instant, Vec<u8>)>, control: &LinkControl) {
    while let Some((departure, packet)) = due.blocking_recv() {
        let wait = departure.saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        if control.is_cut(Instant::now()) {
            Counters::add(&control.counters.dropped_by_cut);
            continue;
        }
        // Writing to a TUN device hands the packet to the kernel at once; it does not wait.
        match to.try_send(&packet) {
            Ok(_) => Counters::add(&control.counters.forwarded),
            Err(err) => tracing::debug!(%err, "delay link could not deliver a packet"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 1);
    const NS: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 2);

    fn ipv4(source: Ipv4Addr, destination: Ipv4Addr) -> Vec<u8> {
        let mut packet = vec![0u8; 20];
        packet[0] = 0x45;
        packet[12..16].copy_from_slice(&source.octets());
        packet[16..20].copy_from_slice(&destination.octets());
        packet
    }

    #[test]
    fn carries_only_packets_between_the_link_addresses() {
        let to_ns = Direction {
            source: HOST,
            destination: NS,
        };
        assert!(
            to_ns.carries(&ipv4(HOST, NS)),
            "host → namespace is the link's traffic"
        );
        assert!(
            !to_ns.carries(&ipv4(NS, HOST)),
            "the reverse belongs to the other direction"
        );
        assert!(
            !to_ns.carries(&ipv4(HOST, Ipv4Addr::new(8, 8, 8, 8))),
            "nothing may be sent to an address outside the link"
        );
        assert!(
            !to_ns.carries(&ipv4(Ipv4Addr::new(192, 168, 1, 5), NS)),
            "nothing from an address outside the link"
        );
    }

    #[test]
    fn drops_ipv6_and_truncated_packets_without_panicking() {
        let to_ns = Direction {
            source: HOST,
            destination: NS,
        };
        let mut ipv6 = ipv4(HOST, NS);
        ipv6[0] = 0x60;
        assert!(!to_ns.carries(&ipv6), "IPv6 is never forwarded");
        assert!(!to_ns.carries(&[]), "empty read");
        assert!(!to_ns.carries(&ipv4(HOST, NS)[..19]), "header cut short");
    }

    #[test]
    fn without_a_rate_every_packet_leaves_one_delay_after_arrival() {
        let mut departures = Departures::default();
        let t0 = Instant::now();
        let delay = Duration::from_millis(25);
        assert_eq!(departures.schedule(t0, 1500, delay, None), t0 + delay);
        assert_eq!(
            departures.schedule(t0, 1500, delay, None),
            t0 + delay,
            "an unlimited link never queues packets behind each other"
        );
    }

    #[test]
    fn a_rate_queues_packets_behind_each_other() {
        let mut departures = Departures::default();
        let t0 = Instant::now();
        let delay = Duration::from_millis(10);
        // 1000 bytes at 1 MB/s take 1 ms on the wire.
        let first = departures.schedule(t0, 1000, delay, Some(1_000_000));
        let second = departures.schedule(t0, 1000, delay, Some(1_000_000));
        assert_eq!(first, t0 + Duration::from_millis(11));
        assert_eq!(
            second,
            t0 + Duration::from_millis(12),
            "the second packet waits for the first to finish"
        );
        let later = t0 + Duration::from_secs(1);
        assert_eq!(
            departures.schedule(later, 1000, delay, Some(1_000_000)),
            later + Duration::from_millis(11),
            "an idle line does not carry old backlog forward"
        );
    }
}

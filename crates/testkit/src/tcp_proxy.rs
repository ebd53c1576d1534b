//! A loopback TCP proxy that can cut its connections at a chosen point and counts round trips.
//!
//! Team-mode tests put it between the app and PostgreSQL to cut a sync in the middle of a push
//! or a pull (a laptop's Wi-Fi dropping); the benchmark counts how many times the client spoke
//! after the server had answered — one round trip each.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// When to cut: once the client has sent at least `client_bytes` on a connection, the first
/// `server_bytes` more bytes the server sends pass and the connection is cut at the next ones.
/// Trips once, then the proxy passes everything.
#[derive(Debug, Clone, Copy)]
pub struct Trip {
    pub client_bytes: u64,
    pub server_bytes: u64,
}

#[derive(Default)]
struct Shared {
    trip: Mutex<Option<Trip>>,
    tripped: AtomicBool,
    round_trips: AtomicU64,
    stop: AtomicBool,
}

/// A running proxy; stops accepting on drop.
pub struct TcpProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

/// Per connection: bytes each way and who spoke last.
#[derive(Default)]
struct Flow {
    client_sent: u64,
    server_sent_after_trip_point: u64,
    last_was_client: bool,
}

impl TcpProxy {
    /// Forward 127.0.0.1:<free port> to `target`.
    pub fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(target) else {
                    continue;
                };
                relay(client, server, accepting.clone());
            }
        });
        Self { addr, shared }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Arm a cut (see [`Trip`]).
    pub fn arm(&self, trip: Trip) {
        self.shared.tripped.store(false, Ordering::SeqCst);
        *self.shared.trip.lock().expect("trip lock") = Some(trip);
    }

    /// Whether the armed cut happened.
    pub fn tripped(&self) -> bool {
        self.shared.tripped.load(Ordering::SeqCst)
    }

    /// Client flights that followed a server answer (or opened a connection) so far.
    pub fn round_trips(&self) -> u64 {
        self.shared.round_trips.load(Ordering::SeqCst)
    }

    pub fn reset_round_trips(&self) {
        self.shared.round_trips.store(0, Ordering::SeqCst);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees `stop`.
        let _ = TcpStream::connect(self.addr);
    }
}

fn relay(client: TcpStream, server: TcpStream, shared: Arc<Shared>) {
    let flow = Arc::new(Mutex::new(Flow::default()));
    let (c_read, c_write) = (client.try_clone(), client);
    let (s_read, s_write) = (server.try_clone(), server);
    let (Ok(c_read), Ok(s_read)) = (c_read, s_read) else {
        return;
    };
    let cut = Arc::new(Cutter {
        client: c_write.try_clone().ok(),
        server: s_write.try_clone().ok(),
    });
    {
        let (flow, shared, cut) = (flow.clone(), shared.clone(), cut.clone());
        thread::spawn(move || {
            pump(c_read, s_write, |n| {
                let mut flow = flow.lock().expect("flow lock");
                if !flow.last_was_client {
                    shared.round_trips.fetch_add(1, Ordering::SeqCst);
                }
                flow.last_was_client = true;
                flow.client_sent += n;
                true
            });
            cut.cut();
        });
    }
    thread::spawn(move || {
        pump(s_read, c_write, |n| {
            let mut flow = flow.lock().expect("flow lock");
            flow.last_was_client = false;
            let trip = *shared.trip.lock().expect("trip lock");
            if let Some(trip) = trip {
                if !shared.tripped.load(Ordering::SeqCst) && flow.client_sent >= trip.client_bytes {
                    flow.server_sent_after_trip_point += n;
                    if flow.server_sent_after_trip_point > trip.server_bytes {
                        shared.tripped.store(true, Ordering::SeqCst);
                        *shared.trip.lock().expect("trip lock") = None;
                        return false;
                    }
                }
            }
            true
        });
        cut.cut();
    });
}

/// Both ends of one proxied connection, to shut down together.
struct Cutter {
    client: Option<TcpStream>,
    server: Option<TcpStream>,
}

impl Cutter {
    fn cut(&self) {
        for stream in [&self.client, &self.server].into_iter().flatten() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// Copy until EOF, an error, or `pass` says stop (then nothing of that chunk is forwarded).
fn pump(mut from: TcpStream, mut to: TcpStream, mut pass: impl FnMut(u64) -> bool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if !pass(n as u64) {
            return;
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

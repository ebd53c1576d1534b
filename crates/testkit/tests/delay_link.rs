//! The delay link behaves like a distant, breakable network: round trips take at least twice the
//! one-way delay, a cut drops traffic, TCP rides out a short cut, and nothing outlives the link.
//!
//! These tests need root (namespaces, TUN devices); elsewhere they print why they are skipped.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::time::{Duration, Instant};

use leasehold_testkit::delay_link::DelayLink;
use leasehold_testkit::netns::{self, Netns};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const ONE_WAY: Duration = Duration::from_millis(25);

/// A TCP echo server bound inside the link's namespace, served from the test's runtime.
async fn echo_server(link: &DelayLink) -> SocketAddr {
    let ns_addr = link.ns_addr();
    let listener = link
        .namespace()
        .run_in(move || std::net::TcpListener::bind((ns_addr, 0)))
        .expect("enter the namespace")
        .expect("bind inside the namespace");
    listener
        .set_nonblocking(true)
        .expect("nonblocking listener");
    let listener = TcpListener::from_std(listener).expect("tokio listener");
    let addr = listener.local_addr().expect("listener address");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut read, mut write) = stream.split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
            });
        }
    });
    addr
}

async fn echo_once(stream: &mut TcpStream, byte: u8) -> std::io::Result<u8> {
    stream.write_all(&[byte]).await?;
    let mut reply = [0u8; 1];
    stream.read_exact(&mut reply).await?;
    Ok(reply[0])
}

#[tokio::test]
async fn round_trip_takes_at_least_twice_the_one_way_delay() {
    if !netns::can_run("round_trip_takes_at_least_twice_the_one_way_delay") {
        return;
    }
    let link = DelayLink::start(ONE_WAY).expect("start the link");
    let server = echo_server(&link).await;
    let mut stream = TcpStream::connect(server)
        .await
        .expect("connect through the link");
    stream.set_nodelay(true).expect("nodelay");

    for byte in 0..5u8 {
        let started = Instant::now();
        let echoed = echo_once(&mut stream, byte).await.expect("echo");
        let rtt = started.elapsed();
        assert_eq!(echoed, byte, "the echo server returns what was sent");
        assert!(
            rtt >= 2 * ONE_WAY,
            "a round trip must be held {ONE_WAY:?} each way, took only {rtt:?}"
        );
    }
    assert!(link.stats().forwarded > 0, "packets went through the link");
    assert_eq!(
        link.kernel_queue_drops()
            .expect("read the devices' counters"),
        0,
        "a few echo packets never overflow the device queues"
    );
}

#[tokio::test]
async fn set_delay_changes_the_round_trip() {
    if !netns::can_run("set_delay_changes_the_round_trip") {
        return;
    }
    let link = DelayLink::start(Duration::from_millis(1)).expect("start the link");
    let server = echo_server(&link).await;
    let mut stream = TcpStream::connect(server).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    echo_once(&mut stream, 1)
        .await
        .expect("echo on the fast link");

    let slower = Duration::from_millis(60);
    link.set_delay(slower);
    let started = Instant::now();
    echo_once(&mut stream, 2)
        .await
        .expect("echo on the slow link");
    let rtt = started.elapsed();
    assert!(
        rtt >= 2 * slower,
        "after set_delay({slower:?}) a round trip took only {rtt:?}"
    );
}

#[tokio::test]
async fn cut_drops_traffic_until_restored() {
    if !netns::can_run("cut_drops_traffic_until_restored") {
        return;
    }
    let link = DelayLink::start(Duration::from_millis(5)).expect("start the link");
    let server = echo_server(&link).await;
    let mut stream = TcpStream::connect(server).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    echo_once(&mut stream, 1)
        .await
        .expect("echo before the cut");

    link.cut_until_restored();
    assert!(link.is_cut(), "the link reports itself cut");
    stream
        .write_all(&[2])
        .await
        .expect("the write is buffered locally");
    let mut reply = [0u8; 1];
    let during_cut =
        tokio::time::timeout(Duration::from_millis(400), stream.read_exact(&mut reply)).await;
    assert!(
        during_cut.is_err(),
        "no reply may cross a cut link, got {during_cut:?}"
    );
    assert!(
        link.stats().dropped_by_cut > 0,
        "the unanswered packet was dropped by the cut: {:?}",
        link.stats()
    );

    link.restore();
    stream
        .read_exact(&mut reply)
        .await
        .expect("TCP retransmits once the link is back");
    assert_eq!(
        reply[0], 2,
        "the byte sent during the cut arrives after restore"
    );
}

#[tokio::test]
async fn a_tcp_stream_survives_a_short_cut() {
    if !netns::can_run("a_tcp_stream_survives_a_short_cut") {
        return;
    }
    let link = DelayLink::start(Duration::from_millis(5)).expect("start the link");
    let server = echo_server(&link).await;
    let stream = TcpStream::connect(server).await.expect("connect");
    let (mut read, mut write) = stream.into_split();

    let payload: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
    let expected = payload.clone();
    let sender = tokio::spawn(async move {
        for chunk in payload.chunks(64 * 1024) {
            write.write_all(chunk).await.expect("send");
        }
        write.shutdown().await.expect("finish sending");
    });
    // Cut once data is flowing in both directions.
    let mut received = vec![0u8; 256 * 1024];
    read.read_exact(&mut received).await.expect("first echoes");
    link.cut(Duration::from_millis(700));
    let dropped_before = link.stats().dropped_by_cut;

    let mut rest = Vec::new();
    read.read_to_end(&mut rest)
        .await
        .expect("the stream completes after the cut");
    received.extend_from_slice(&rest);
    sender.await.expect("sender task");
    assert!(
        link.stats().dropped_by_cut > dropped_before,
        "the cut dropped packets mid-transfer: {:?}",
        link.stats()
    );
    assert_eq!(received.len(), expected.len(), "every byte came back");
    assert!(
        received == expected,
        "the bytes came back intact and in order"
    );
}

#[tokio::test]
async fn the_namespace_reaches_nothing_but_the_host_end() {
    if !netns::can_run("the_namespace_reaches_nothing_but_the_host_end") {
        return;
    }
    let link = DelayLink::start(Duration::from_millis(1)).expect("start the link");
    // 192.0.2.1 (TEST-NET-1) stands for "anything outside the link".
    let outside = link
        .namespace()
        .run_in(|| {
            std::net::TcpStream::connect_timeout(
                &SocketAddr::from((Ipv4Addr::new(192, 0, 2, 1), 9)),
                Duration::from_secs(2),
            )
        })
        .expect("enter the namespace");
    let err = outside.expect_err("the namespace has no route beyond the link");
    assert_eq!(
        err.kind(),
        std::io::ErrorKind::NetworkUnreachable,
        "refused locally by routing, not timed out on a wire: {err}"
    );

    let host_end = link.host_addr();
    let listener = std::net::TcpListener::bind((host_end, 0)).expect("bind on the host end");
    let port = listener.local_addr().expect("address").port();
    let reached = link
        .namespace()
        .run_in(move || std::net::TcpStream::connect((host_end, port)))
        .expect("enter the namespace");
    assert!(reached.is_ok(), "the host end is reachable: {reached:?}");
}

#[test]
fn dropping_the_link_removes_namespace_devices_and_processes() {
    if !netns::can_run("dropping_the_link_removes_namespace_devices_and_processes") {
        return;
    }
    let link = DelayLink::start(Duration::from_millis(1)).expect("start the link");
    let name = link.namespace().name().to_owned();
    let device = link.host_device().to_owned();
    let mut sleeper = link
        .namespace()
        .std_command("sleep")
        .arg("600")
        .spawn()
        .expect("start a process in the namespace");
    while link.namespace().pids().is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(link);

    let status = sleeper.wait().expect("reap the process");
    assert!(
        !status.success(),
        "the process in the namespace was killed: {status}"
    );
    assert!(!namespace_exists(&name), "namespace {name} is gone");
    let link_show = Command::new("ip")
        .args(["link", "show", "dev", &device])
        .output()
        .expect("run ip");
    assert!(!link_show.status.success(), "device {device} is gone");
}

#[test]
fn a_leftover_namespace_of_a_dead_process_is_removed() {
    if !netns::can_run("a_leftover_namespace_of_a_dead_process_is_removed") {
        return;
    }
    // A pid that certainly belonged to a process that has exited.
    let mut gone = Command::new("true").spawn().expect("spawn");
    let dead_pid = gone.id();
    gone.wait().expect("reap");
    let leftover = format!("lh-{dead_pid}-0");
    let added = Command::new("ip")
        .args(["netns", "add", &leftover])
        .status()
        .expect("run ip");
    assert!(added.success(), "create the fake leftover {leftover}");

    let fresh = Netns::create().expect("create a namespace");
    assert!(
        !namespace_exists(&leftover),
        "creating a namespace sweeps {leftover}, whose process is gone"
    );
    assert!(namespace_exists(fresh.name()), "the new namespace exists");
}

fn namespace_exists(name: &str) -> bool {
    let listing = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("run ip");
    String::from_utf8_lossy(&listing.stdout)
        .lines()
        .any(|line| line.split_whitespace().next() == Some(name))
}

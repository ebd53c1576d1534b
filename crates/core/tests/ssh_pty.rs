//! The interactive terminal against real sshd: keystrokes echo back, resizes reach the shell.

mod common;

use std::time::Duration;

use common::Setup;
use leasehold_core::ssh::{PtyEvent, PtySession};

/// Read output until `needle` shows up (or the shell ends), returning everything read.
async fn read_until(pty: &mut PtySession, needle: &str) -> String {
    read_until_within(pty, needle, Duration::from_secs(20)).await
}

async fn read_until_within(pty: &mut PtySession, needle: &str, limit: Duration) -> String {
    let mut seen = String::new();
    let wait = async {
        while let Some(event) = pty.next().await {
            match event {
                PtyEvent::Output(bytes) => {
                    seen.push_str(&String::from_utf8_lossy(&bytes));
                    if seen.contains(needle) {
                        return;
                    }
                }
                PtyEvent::Exited(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(limit, wait).await;
    seen
}

#[tokio::test]
async fn keystrokes_echo_and_resizes_reach_the_shell() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let mut pty = target
        .open_pty("xterm-256color", 80, 24)
        .await
        .expect("a terminal opens");
    pty.write(b"echo hello-$((40+2))\n").await.expect("type");
    let out = read_until(&mut pty, "hello-42").await;
    assert!(
        out.contains("echo hello-$((40+2))"),
        "the typed line is echoed: {out:?}"
    );
    assert!(out.contains("hello-42"), "the command ran: {out:?}");

    pty.write(b"stty size\n").await.expect("type");
    let out = read_until(&mut pty, "24 80").await;
    assert!(out.contains("24 80"), "the initial size is 80x24: {out:?}");

    pty.resize(132, 43).await.expect("resize");
    // A window change carries no reply, and sshd may hand the next keystrokes to the shell
    // before it applies the size (seen on a loaded 2-core machine): ask again, as a person
    // would, until the size arrives or 20 s pass.
    let mut out = String::new();
    for _ in 0..10 {
        pty.write(b"stty size\n").await.expect("type");
        out = read_until_within(&mut pty, "43 132", Duration::from_secs(2)).await;
        if out.contains("43 132") {
            break;
        }
    }
    assert!(
        out.contains("43 132"),
        "the new size reaches the shell: {out:?}"
    );

    pty.write(b"exit 3\n").await.expect("type");
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match pty.next().await {
                Some(PtyEvent::Exited(status)) => return status,
                Some(PtyEvent::Output(_)) => {}
                None => return None,
            }
        }
    })
    .await
    .expect("the shell ends");
    assert_eq!(ended, Some(3), "the shell's exit status is reported");
}

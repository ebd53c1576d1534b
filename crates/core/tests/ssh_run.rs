//! Running commands on a real sshd: many at once on one connection, big and streamed output,
//! timeouts, literal quoting of hostile values, reconnecting after sshd restarts, forwards.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Setup;
use leasehold_core::shell::quote;
use leasehold_core::ssh::{LinkState, SshError};
use leasehold_core::target::{CommandSpec, LineSplitter, OutputStream, Target, TargetError};
use leasehold_core::Coded;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn twelve_commands_in_parallel_keep_their_own_exit_codes_and_output() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let specs: Vec<CommandSpec> = (0..12)
        .map(|i| {
            CommandSpec::new(format!(
                "sleep 0.2; echo out-{i}; echo err-{i} >&2; exit {i}"
            ))
        })
        .collect();
    let results = futures::future::join_all(specs.iter().map(|spec| target.run(spec))).await;
    for (i, result) in results.into_iter().enumerate() {
        let out = result.unwrap_or_else(|err| panic!("command {i} failed: {err}"));
        assert_eq!(out.exit_status, Some(i as u32), "exit code of command {i}");
        assert_eq!(out.stdout_text(), format!("out-{i}\n"));
        assert_eq!(out.stderr_text(), format!("err-{i}\n"));
    }
}

#[tokio::test]
async fn more_commands_than_channels_still_run_side_by_side_each_with_its_own_result() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let meeting = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(
        meeting.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("the login user may write there");
    let count = leasehold_core::ssh::MAX_CHANNELS + 4;
    let dir = quote(meeting.path().to_str().expect("utf-8 path")).into_owned();
    // Every command waits until all have started: one after another they would all time out.
    let mut specs: Vec<CommandSpec> = (0..count)
        .map(|i| {
            CommandSpec::new(format!(
                "touch {dir}/{i}; while [ \"$(ls {dir} | wc -l)\" -lt {count} ]; do sleep 0.05; done; \
                 echo out-{i}; echo err-{i} >&2; exit {i}"
            ))
            .timeout(Duration::from_secs(30))
        })
        .collect();
    specs.push(CommandSpec::new(format!(
        "printf %s {}",
        quote("'; rm -rf ~ #$(reboot)`id`\nü")
    )));
    specs.push(CommandSpec::new("echo $0").login_shell());
    let results = target.run_many(&specs).await;
    assert_eq!(results.len(), specs.len());
    for (i, result) in results.iter().take(count).enumerate() {
        let out = result
            .as_ref()
            .unwrap_or_else(|err| panic!("command {i} failed: {err}"));
        assert_eq!(out.exit_status, Some(i as u32), "exit code of command {i}");
        assert_eq!(out.stdout_text(), format!("out-{i}\n"));
        assert_eq!(out.stderr_text(), format!("err-{i}\n"));
    }
    let hostile = results[count].as_ref().expect("the hostile value ran");
    assert_eq!(hostile.stdout_text(), "'; rm -rf ~ #$(reboot)`id`\nü");
    let login = results[count + 1].as_ref().expect("the login shell ran");
    assert_eq!(login.stdout_text(), "bash\n");
}

#[tokio::test]
async fn fifty_megabytes_of_stdout_arrive_intact() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let size = 50 * 1024 * 1024;
    let spec = CommandSpec::new(format!("head -c {size} /dev/zero | tr '\\0' 'x'"))
        .timeout(Duration::from_secs(120));
    let mut received = 0usize;
    let mut all_x = true;
    let mut sink = |stream: OutputStream, chunk: &[u8]| {
        if stream == OutputStream::Stdout {
            received += chunk.len();
            all_x &= chunk.iter().all(|b| *b == b'x');
        }
    };
    let status = target
        .run_streaming(&spec, &mut sink)
        .await
        .expect("streams");
    assert_eq!(status, Some(0));
    assert_eq!(received, size, "every byte must arrive");
    assert!(all_x, "the bytes must be the ones sent");

    let collected = target
        .run(&spec.clone().output_cap(size))
        .await
        .expect("collects");
    assert_eq!(
        collected.stdout.len(),
        size,
        "the collecting variant holds it all once when its cap allows"
    );
}

#[tokio::test]
async fn collected_output_is_cut_at_its_cap_and_says_so() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let printed = 20 * 1024 * 1024;
    let cap = 64 * 1024;
    let spec = CommandSpec::new(format!(
        "head -c {printed} /dev/zero | tr '\\0' 'x'; echo fine >&2"
    ))
    .timeout(Duration::from_secs(120))
    .output_cap(cap);
    let out = target.run(&spec).await.expect("runs to its end");
    let marker = leasehold_core::target::truncation_marker(cap, (printed - cap) as u64);
    assert_eq!(
        out.stdout.len(),
        cap + marker.len(),
        "only the cap is held, whatever the instance prints"
    );
    assert!(out.stdout_text().ends_with(&marker), "the cut is marked");
    assert_eq!(out.stderr_text(), "fine\n");
    assert_eq!(out.exit_status, Some(0), "the command still ran to its end");

    let default = target
        .run(
            &CommandSpec::new(format!("head -c {printed} /dev/zero"))
                .timeout(Duration::from_secs(120)),
        )
        .await
        .expect("runs");
    assert!(
        default.stdout.len() < leasehold_core::target::DEFAULT_OUTPUT_CAP + 200,
        "without a cap of its own a command is held to the default: {} bytes",
        default.stdout.len()
    );
}

#[tokio::test]
async fn a_fan_out_past_its_cap_is_stopped_not_collected() {
    let setup = Setup::new();
    let target = setup.connect().await;
    // More commands than channels, so they share one fan-out channel.
    let mut specs: Vec<CommandSpec> = (0..12)
        .map(|i| CommandSpec::new(format!("echo {i}")).output_cap(1024))
        .collect();
    specs.push(
        CommandSpec::new("head -c 50000000 /dev/zero")
            .timeout(Duration::from_secs(60))
            .output_cap(1024),
    );
    let results = target.exec_many(&specs).await;
    let last = results.last().expect("one result per command");
    let err = match last {
        Ok(out) => panic!("the flood was collected: {} bytes", out.stdout.len()),
        Err(err) => err,
    };
    assert_eq!(err.code(), "ssh.output_too_large", "{err}");
}

#[tokio::test]
async fn waiting_for_a_free_channel_ends_at_its_deadline() {
    let setup = Setup::new();
    let destination = setup.destination();
    let options = leasehold_core::ssh::ConnectOptions {
        channel_wait: Duration::from_millis(500),
        ..setup.options(true)
    };
    let target = Arc::new(
        leasehold_core::ssh::SshTarget::connect(destination, setup.key_credentials(), options)
            .await
            .expect("connects"),
    );
    // Every channel busy for a while.
    let mut busy = Vec::new();
    for _ in 0..leasehold_core::ssh::MAX_CHANNELS {
        let target = target.clone();
        busy.push(tokio::spawn(async move {
            target
                .exec(&CommandSpec::new("sleep 6").timeout(Duration::from_secs(20)))
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    let started = std::time::Instant::now();
    let err = target
        .exec(&CommandSpec::new("true"))
        .await
        .expect_err("no channel frees up within the deadline");
    assert_eq!(err.code(), "ssh.channels_busy", "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the wait ends at its deadline, not when a channel frees: {:?}",
        started.elapsed()
    );
    for task in busy {
        task.await
            .expect("task")
            .expect("the busy commands still finish");
    }
}

#[tokio::test]
async fn streamed_lines_arrive_in_order_while_the_command_runs() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let spec =
        CommandSpec::new("for i in 1 2 3 4 5; do echo line-$i; sleep 0.05; done; echo warn >&2");
    let mut lines = Vec::new();
    {
        let mut splitter = LineSplitter::new(|stream, line: &str| {
            lines.push((stream, line.to_owned()));
        });
        let mut sink = |stream: OutputStream, chunk: &[u8]| splitter.push(stream, chunk);
        let status = target
            .run_streaming(&spec, &mut sink)
            .await
            .expect("streams");
        splitter.finish();
        assert_eq!(status, Some(0));
    }
    let stdout: Vec<&str> = lines
        .iter()
        .filter(|(s, _)| *s == OutputStream::Stdout)
        .map(|(_, l)| l.as_str())
        .collect();
    assert_eq!(stdout, ["line-1", "line-2", "line-3", "line-4", "line-5"]);
    assert!(lines.contains(&(OutputStream::Stderr, "warn".to_owned())));
}

#[tokio::test]
async fn hostile_values_reach_the_remote_shell_as_literal_bytes() {
    let setup = Setup::new();
    let target = setup.connect().await;
    for hostile in [
        "'; rm -rf ~ #",
        "$(reboot)",
        "`touch /tmp/lh-pwned`",
        "line one\nline two",
        "空格 和 unicode ✓ 🚀",
        "  leading and trailing spaces  ",
        "\"double\" and \\backslash\\",
        "--help",
        "",
    ] {
        let spec = CommandSpec::new(format!("printf %s {}", quote(hostile)));
        let out = target.run(&spec).await.expect("printf runs");
        assert_eq!(
            out.stdout,
            hostile.as_bytes(),
            "{hostile:?} must arrive byte for byte"
        );
        let login = target
            .run(&CommandSpec::new(format!("printf %s {}", quote(hostile))).login_shell())
            .await
            .expect("printf runs in a login shell");
        assert_eq!(
            login.stdout,
            hostile.as_bytes(),
            "{hostile:?} through bash -lc"
        );
    }
}

#[tokio::test]
async fn a_command_past_its_timeout_is_stopped_and_reported() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let err = target
        .run(&CommandSpec::new("sleep 30").timeout(Duration::from_millis(300)))
        .await
        .expect_err("must time out");
    assert!(matches!(err, TargetError::Timeout(_)), "got {err:?}");
    // The connection is still usable afterwards.
    let out = target
        .run(&CommandSpec::new("echo still-here"))
        .await
        .expect("runs");
    assert_eq!(out.stdout_text(), "still-here\n");
}

#[tokio::test]
async fn the_connection_comes_back_after_sshd_restarts() {
    let mut setup = Setup::new();
    let target = setup.connect().await;
    let mut state = target.link_state();
    assert_eq!(
        target
            .run(&CommandSpec::new("echo before"))
            .await
            .expect("runs")
            .stdout_text(),
        "before\n"
    );
    setup.host.restart();
    let out = target
        .run(&CommandSpec::new("echo after"))
        .await
        .expect("the target must reconnect by itself");
    assert_eq!(out.stdout_text(), "after\n");
    assert!(
        state.has_changed().unwrap_or(false),
        "the UI must see the reconnect"
    );
    assert_eq!(*state.borrow_and_update(), LinkState::Connected);
}

#[tokio::test]
async fn stdin_is_fed_to_the_remote_command() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let mut out = Vec::new();
    let mut sink = |_: OutputStream, chunk: &[u8]| out.extend_from_slice(chunk);
    let input: Box<dyn tokio::io::AsyncRead + Send + Unpin> = Box::new(&b"piped input"[..]);
    let report = target
        .exec_streaming(&CommandSpec::new("cat"), Some(input), &mut sink)
        .await
        .expect("cat runs");
    assert_eq!(report.status, Some(0));
    assert_eq!(out, b"piped input");
}

#[tokio::test]
async fn a_local_port_forward_round_trips_and_closes() {
    let setup = Setup::new();
    let target = Arc::new(setup.connect().await);
    // An echo server on the "instance" side (the same loopback here).
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind echo");
    let echo_port = echo.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = echo.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = socket.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    let forward = target
        .forward_local(0, "127.0.0.1", echo_port)
        .await
        .expect("forward starts");
    assert_eq!(
        target.forwards(),
        vec![forward.clone()],
        "listed while open"
    );
    let mut client = tokio::net::TcpStream::connect(("127.0.0.1", forward.local_port))
        .await
        .expect("connect to the forward");
    client.write_all(b"ping through ssh").await.expect("write");
    let mut reply = [0u8; 16];
    client.read_exact(&mut reply).await.expect("read echo");
    assert_eq!(&reply, b"ping through ssh");

    target.close_forward(forward.id).expect("close");
    assert!(target.forwards().is_empty());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", forward.local_port))
            .await
            .is_err(),
        "a closed forward must stop listening"
    );
    let err = target
        .close_forward(forward.id)
        .expect_err("already closed");
    assert_eq!(err.code(), "ssh.unknown_forward");
}

#[tokio::test]
async fn more_commands_than_max_sessions_wait_for_a_free_channel() {
    let setup = Setup::new();
    let target = setup.connect().await;
    let specs: Vec<CommandSpec> = (0..25)
        .map(|i| CommandSpec::new(format!("sleep 0.1; echo {i}")))
        .collect();
    let results = futures::future::join_all(specs.iter().map(|spec| target.exec(spec))).await;
    for (i, result) in results.into_iter().enumerate() {
        let out = result.unwrap_or_else(|err: SshError| panic!("command {i}: {err}"));
        assert_eq!(
            out.stdout_text(),
            format!("{i}\n"),
            "no command may be refused"
        );
    }
}

#[tokio::test]
async fn a_reconnect_to_a_host_whose_key_changed_is_refused() {
    let mut setup = Setup::new();
    let target = setup.connect().await;
    target
        .run(&CommandSpec::new("true"))
        .await
        .expect("runs before the change");
    // A re-imaged instance behind the same address: the link drops and the key is new. The
    // redial dials only one handshake at a time and reads the key files beforehand, but every
    // connection it makes is still judged against known_hosts.
    setup.host.rotate_host_key();
    setup.host.restart();
    let err = target
        .run(&CommandSpec::new("echo after"))
        .await
        .expect_err("a changed host key must never be trusted on a reconnect");
    assert_eq!(
        leasehold_core::Coded::code(&err),
        "ssh.host_key_changed",
        "refused for the changed key, at once and not after the reconnect window: {err}"
    );
}

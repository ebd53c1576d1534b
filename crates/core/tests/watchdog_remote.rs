//! The watchdog installed, read and removed over SSH on a real sshd test host, with a stub
//! `nvidia-smi` at 0 % on the login user's PATH and a power-off stand-in that records its call.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use leasehold_core::target::{CommandSpec, Target};
use leasehold_core::watchdog::{self, BootHook, Signal, WatchdogOptions};
use leasehold_testkit::SshdOptions;

/// A folder with an `nvidia-smi` that reports two idle GPUs, readable by the login user.
fn idle_gpu_bin() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lh-wd-bin-")
        .tempdir()
        .expect("bin dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let smi = dir.path().join("nvidia-smi");
    std::fs::write(&smi, "#!/bin/sh\nprintf '0\\n0\\n'\n").unwrap();
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn options_on(remote: &Path, idle_seconds: u64) -> WatchdogOptions {
    WatchdogOptions {
        idle_seconds,
        interval_seconds: 1,
        grace_seconds: 0,
        // The shared test machine's CPU, disk and network are never quiet; the GPU is ours.
        signals: vec![Signal::Gpu],
        power_off: format!("echo off >> {}/calls", remote.display()),
        state_dir: format!("{}/wd", remote.display()),
        ..WatchdogOptions::default()
    }
}

/// Running: its /proc entry is there and not a zombie (a container's init may never reap).
async fn pid_alive(target: &dyn Target, pid: u32) -> bool {
    target
        .run(&CommandSpec::new(format!(
            "s=$(cat /proc/{pid}/stat 2>/dev/null) || exit 1; case \"${{s##*) }}\" in Z*) exit 1 ;; esac"
        )))
        .await
        .is_ok_and(|out| out.success())
}

#[tokio::test]
async fn install_status_and_remove_leave_nothing_behind() {
    let bin = idle_gpu_bin();
    let setup = common::Setup::with(SshdOptions {
        extra_path: Some(bin.path().to_owned()),
        ..SshdOptions::default()
    });
    let target = setup.connect().await;
    let remote = setup.host.remote_dir();
    let options = options_on(&remote, 3600);

    let report = watchdog::install(&target, &options)
        .await
        .expect("installed");
    assert_eq!(report.state_dir, format!("{}/wd", remote.display()));
    assert!(
        pid_alive(&target, report.pid).await,
        "it runs after the install's session ended"
    );

    // Give it two samples, then read it back.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let status = watchdog::status(&target, &options.state_dir)
        .await
        .expect("status");
    assert!(status.installed && status.running, "{status:?}");
    assert_eq!(status.pid, Some(report.pid));
    assert_eq!(status.boot, report.boot);
    assert_eq!(status.settings["idle_s"], "3600");
    assert_eq!(status.settings["signals"], "gpu");
    assert_eq!(status.phase.as_deref(), Some("idle"), "{status:?}");
    assert!(
        status.sample.as_deref().unwrap_or("").contains("gpu=0%"),
        "{status:?}"
    );
    assert!(
        status.log.iter().any(|l| l.what == "start"),
        "the start decision is in the log: {:?}",
        status.log
    );
    // A second install replaces the first: still one watchdog.
    let again = watchdog::install(&target, &options)
        .await
        .expect("reinstalled");
    assert!(
        !pid_alive(&target, report.pid).await,
        "the first copy was stopped"
    );
    assert!(pid_alive(&target, again.pid).await);

    let removed = watchdog::remove(&target, &options.state_dir)
        .await
        .expect("removed");
    assert!(removed.was_running);
    assert!(removed.folder_removed, "{removed:?}");
    if again.boot != BootHook::None {
        assert_eq!(
            removed.hooks_removed,
            vec![again.boot],
            "its restart hook goes too"
        );
    }
    assert!(
        !pid_alive(&target, again.pid).await,
        "remove ends the watchdog"
    );
    assert!(!remote.join("wd").exists(), "the folder is gone");
    let status = watchdog::status(&target, &options.state_dir)
        .await
        .expect("status after removal");
    assert!(!status.installed && !status.running);
    assert!(!remote.join("calls").exists(), "it never powered off");
}

#[tokio::test]
async fn an_installed_watchdog_powers_an_idle_instance_off() {
    let bin = idle_gpu_bin();
    let setup = common::Setup::with(SshdOptions {
        extra_path: Some(bin.path().to_owned()),
        ..SshdOptions::default()
    });
    let target = setup.connect().await;
    let remote = setup.host.remote_dir();
    let options = options_on(&remote, 2);
    watchdog::install(&target, &options)
        .await
        .expect("installed");
    // The installing session is closed: the watchdog must not depend on it.
    target.disconnect().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !remote.join("calls").exists() {
        assert!(Instant::now() < deadline, "no power-off within 30 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let target = setup.connect().await;
    // The stand-in's call lands a moment before the script logs its verdict and exits.
    let status = loop {
        let status = watchdog::status(&target, &options.state_dir)
            .await
            .expect("status");
        if !status.running || Instant::now() >= deadline {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(!status.running, "it exits after powering off: {status:?}");
    assert_eq!(status.phase.as_deref(), Some("powered_off"));
    let whats: Vec<&str> = status.log.iter().map(|l| l.what.as_str()).collect();
    assert!(
        whats.ends_with(&["idle", "power_off", "powered_off"]),
        "{whats:?}"
    );
    watchdog::remove(&target, &options.state_dir)
        .await
        .expect("removed");
}

/// Where a cron daemon runs (and no systemd as root), the restart hook is an `@reboot` line in
/// the user's crontab; the user's own lines stay, and removing the watchdog takes only its line.
#[tokio::test]
async fn with_cron_running_the_restart_hook_is_a_crontab_line_and_goes_with_remove() {
    let bin = idle_gpu_bin();
    let tab_dir = tempfile::Builder::new()
        .prefix("lh-wd-tab-")
        .tempdir()
        .expect("tab dir");
    std::fs::set_permissions(tab_dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let tab = tab_dir.path().join("crontab");
    std::fs::write(&tab, "0 * * * * echo mine\n").unwrap();
    std::fs::set_permissions(&tab, std::fs::Permissions::from_mode(0o666)).unwrap();
    // `crontab -l` / `crontab -` as cron's own tool answers them, kept in a file we can read;
    // like the real one it replaces the table only once its input is complete.
    let crontab = bin.path().join("crontab");
    std::fs::write(
        &crontab,
        format!(
            "#!/bin/sh\ntab='{}'\ncase \"$1\" in\n  -l) [ -s \"$tab\" ] && exec cat \"$tab\"; echo \"no crontab\" >&2; exit 1 ;;\n  -) t=$(mktemp) && cat > \"$t\" && chmod 666 \"$t\" && mv -f \"$t\" \"$tab\" ;;\n  *) exit 2 ;;\nesac\n",
            tab.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&crontab, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A process named `cron` is what the install looks for in /proc.
    let daemon_dir = tempfile::tempdir().expect("daemon dir");
    let daemon = daemon_dir.path().join("cron");
    std::fs::copy("/bin/sleep", &daemon).expect("copy sleep");
    let mut cron = std::process::Command::new(&daemon)
        .arg("120")
        .spawn()
        .expect("a cron stand-in runs");

    let setup = common::Setup::with(SshdOptions {
        extra_path: Some(bin.path().to_owned()),
        ..SshdOptions::default()
    });
    let target = setup.connect().await;
    let remote = setup.host.remote_dir();
    let options = options_on(&remote, 3600);
    let report = watchdog::install(&target, &options).await;
    let status = watchdog::status(&target, &options.state_dir).await;
    let after_install = std::fs::read_to_string(&tab).unwrap_or_default();
    let removed = watchdog::remove(&target, &options.state_dir).await;
    let after_remove = std::fs::read_to_string(&tab).unwrap_or_default();
    let _ = cron.kill();
    let _ = cron.wait();

    let report = report.expect("installed");
    assert_eq!(report.boot, BootHook::Cron, "{report:?}");
    assert!(status.expect("status").boot_in_place);
    let line = after_install
        .lines()
        .find(|l| l.contains("leasehold-watchdog"))
        .unwrap_or_else(|| panic!("a tagged line: {after_install:?}"));
    assert!(
        line.starts_with("@reboot ") && line.contains("/wd/watchdog.sh start"),
        "{line}"
    );
    assert!(
        after_install.contains("0 * * * * echo mine"),
        "{after_install:?}"
    );
    let removed = removed.expect("removed");
    assert_eq!(removed.hooks_removed, vec![BootHook::Cron]);
    assert_eq!(after_remove, "0 * * * * echo mine\n");
}

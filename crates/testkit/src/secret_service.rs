//! A real Secret Service for keychain tests: a private session D-Bus and gnome-keyring-daemon
//! with a fresh, unlocked login keyring in a temporary HOME — the provider a Linux desktop
//! uses, never the developer's own keychain. Both processes end when the value drops.
//!
//! Needs `dbus-daemon`, `dbus-send` and `gnome-keyring-daemon` (Debian: `dbus`,
//! `gnome-keyring`; the Makefile installs them).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running session bus with gnome-keyring's Secret Service on it.
pub struct SecretService {
    _dir: tempfile::TempDir,
    address: String,
    dbus: Option<Child>,
    keyring: Option<Child>,
}

impl SecretService {
    /// Start the bus and the keyring daemon, and wait until the service answers.
    pub fn start() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("lh-secrets-")
            .tempdir()
            .expect("secret service folder");
        let home = dir.path().join("home");
        let runtime = dir.path().join("run");
        for folder in [&home, &runtime] {
            std::fs::create_dir(folder).expect("create folder");
            set_private(folder);
        }
        // A bus of our own without service directories: nothing is started on demand, so the
        // only Secret Service on it is the daemon below (the stock session config would start
        // another gnome-keyring, with the real HOME, on the first call).
        let config = dir.path().join("bus.conf");
        std::fs::write(
            &config,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig><type>session</type><listen>unix:path={}</listen>\
                 <auth>EXTERNAL</auth><policy context=\"default\">\
                 <allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/>\
                 <allow own=\"*\"/></policy></busconfig>\n",
                dir.path().join("bus").display()
            ),
        )
        .expect("write the bus config");
        let mut dbus = Command::new("dbus-daemon")
            .args(["--nofork", "--print-address=1"])
            .arg(format!("--config-file={}", config.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon (apt: dbus)");
        let mut first_line = String::new();
        BufReader::new(dbus.stdout.take().expect("dbus stdout"))
            .read_line(&mut first_line)
            .expect("read the bus address");
        let address = first_line.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");

        let mut service = Self {
            _dir: dir,
            address,
            dbus: Some(dbus),
            keyring: None,
        };
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("DBUS_SESSION_BUS_ADDRESS", &service.address)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start gnome-keyring-daemon (apt: gnome-keyring)");
        // `--unlock` reads the login keyring's password from stdin, creating the keyring.
        let mut stdin = keyring.stdin.take().expect("keyring stdin");
        stdin
            .write_all(b"leasehold-test-keyring")
            .expect("unlock the keyring");
        drop(stdin);
        service.keyring = Some(keyring);
        service.wait_until_ready();
        service
    }

    /// The value for `DBUS_SESSION_BUS_ADDRESS`.
    pub fn bus_address(&self) -> &str {
        &self.address
    }

    fn wait_until_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let reply = Command::new("dbus-send")
                .arg(format!("--bus={}", self.address))
                .args([
                    "--print-reply",
                    "--dest=org.freedesktop.secrets",
                    "/org/freedesktop/secrets",
                    "org.freedesktop.Secret.Service.ReadAlias",
                    "string:default",
                ])
                .output()
                .expect("run dbus-send");
            let text = String::from_utf8_lossy(&reply.stdout);
            if reply.status.success() && text.contains("/collection/") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the Secret Service did not come up with a default collection: {text} {}",
                String::from_utf8_lossy(&reply.stderr)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        for mut child in [self.keyring.take(), self.dbus.take()]
            .into_iter()
            .flatten()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn set_private(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).expect("chmod 700");
}

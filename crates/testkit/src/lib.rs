//! Real test hosts for Leasehold's tests: Debian's OpenSSH `sshd`, started by the test itself
//! with its own config, host key and authorized_keys, on loopback (or inside a network namespace
//! another harness created), and killed when the test ends.
//!
//! Why real sshd rather than a russh server: the product talks to OpenSSH on every rented
//! instance, with its MaxSessions limit, its rc-file behaviour and its sftp-server; a test
//! against anything else would prove the wrong thing.
//!
//! Needs root (it starts sshd and creates the test login user once). CI runs as root.

pub mod delay_link;
pub mod hostile_sftp;
pub mod netns;
pub mod postgres;
mod process;
pub mod provider_standin;
pub mod secret_service;
pub mod tcp_proxy;
pub mod update_server;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use process::descendants;

/// The login user every test host accepts (created once per machine, idempotently).
pub const TEST_USER: &str = "lh-sshtest";
/// Its password (test machines only; the account exists only for these tests).
pub const TEST_PASSWORD: &str = "lh-Test-pw-7319";
/// Passphrase of [`ClientKey::Ed25519Encrypted`].
pub const KEY_PASSPHRASE: &str = "correct horse battery staple";

const SSHD: &str = "/usr/sbin/sshd";
const SFTP_SERVER: &str = "/usr/lib/openssh/sftp-server";

/// The client keys a test host trusts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKey {
    Ed25519,
    Ecdsa,
    Rsa,
    /// ed25519 protected by [`KEY_PASSPHRASE`].
    Ed25519Encrypted,
}

impl ClientKey {
    const ALL: [Self; 4] = [
        Self::Ed25519,
        Self::Ecdsa,
        Self::Rsa,
        Self::Ed25519Encrypted,
    ];

    fn file_name(self) -> &'static str {
        match self {
            Self::Ed25519 => "id_ed25519",
            Self::Ecdsa => "id_ecdsa",
            Self::Rsa => "id_rsa",
            Self::Ed25519Encrypted => "id_ed25519_encrypted",
        }
    }

    fn keygen_args(self) -> &'static [&'static str] {
        match self {
            Self::Ed25519 | Self::Ed25519Encrypted => &["-t", "ed25519"],
            Self::Ecdsa => &["-t", "ecdsa", "-b", "256"],
            Self::Rsa => &["-t", "rsa", "-b", "2048"],
        }
    }
}

/// A type of host key a test host can present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKeyKind {
    Ed25519,
    Ecdsa,
    Rsa,
}

impl HostKeyKind {
    fn file_name(self) -> &'static str {
        match self {
            Self::Ed25519 => "host_ed25519",
            Self::Ecdsa => "host_ecdsa",
            Self::Rsa => "host_rsa",
        }
    }

    fn keygen_args(self) -> &'static [&'static str] {
        match self {
            Self::Ed25519 => &["-t", "ed25519"],
            Self::Ecdsa => &["-t", "ecdsa", "-b", "256"],
            Self::Rsa => &["-t", "rsa", "-b", "2048"],
        }
    }
}

/// How to start a test host.
#[derive(Debug, Clone)]
pub struct SshdOptions {
    /// Address sshd listens on (default 127.0.0.1).
    pub listen: IpAddr,
    /// Run sshd inside this existing network namespace (`ip netns exec NAME sshd …`).
    pub netns: Option<String>,
    /// A directory put first on the login user's PATH (fake `nvidia-smi` and friends).
    pub extra_path: Option<PathBuf>,
    /// `MaxSessions` (OpenSSH default 10).
    pub max_sessions: u32,
    /// The host keys sshd presents, in its order of preference (default: ed25519 only).
    pub host_keys: Vec<HostKeyKind>,
    /// A HOME for the login user other than its passwd entry's (a test's own dotfiles).
    pub home: Option<PathBuf>,
}

impl Default for SshdOptions {
    fn default() -> Self {
        Self {
            listen: IpAddr::from([127, 0, 0, 1]),
            netns: None,
            extra_path: None,
            max_sessions: 10,
            host_keys: vec![HostKeyKind::Ed25519],
            home: None,
        }
    }
}

/// A running sshd. Killed, with every session it spawned, on drop.
pub struct TestHost {
    dir: tempfile::TempDir,
    options: SshdOptions,
    port: u16,
    child: Option<Child>,
}

impl TestHost {
    /// sshd on 127.0.0.1 and a free port.
    pub fn start() -> Self {
        Self::start_with(SshdOptions::default())
    }

    pub fn start_with(options: SshdOptions) -> Self {
        assert!(
            is_root(),
            "the sshd test harness must run as root (CI does)"
        );
        ensure_test_user();
        let dir = tempfile::Builder::new()
            .prefix("lh-sshd-")
            .tempdir()
            .expect("create the test host folder");
        // The login user must traverse it to read authorized_keys and use remote/.
        set_mode(dir.path(), 0o755);
        for kind in &options.host_keys {
            keygen(&dir.path().join(kind.file_name()), kind.keygen_args(), "");
        }
        let mut authorized = String::new();
        for key in ClientKey::ALL {
            let path = dir.path().join(key.file_name());
            let passphrase = if key == ClientKey::Ed25519Encrypted {
                KEY_PASSPHRASE
            } else {
                ""
            };
            keygen(&path, key.keygen_args(), passphrase);
            authorized.push_str(&read(&path.with_extension("pub")));
        }
        let authorized_keys = dir.path().join("authorized_keys");
        std::fs::write(&authorized_keys, authorized).expect("write authorized_keys");
        set_mode(&authorized_keys, 0o644);
        let remote = dir.path().join("remote");
        std::fs::create_dir(&remote).expect("create remote dir");
        run_ok(Command::new("chown").arg(TEST_USER).arg(&remote));

        let mut host = Self {
            dir,
            options,
            port: 0,
            child: None,
        };
        host.launch_on_free_port();
        host
    }

    pub fn host(&self) -> String {
        self.options.listen.to_string()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn user(&self) -> &'static str {
        TEST_USER
    }

    pub fn password(&self) -> &'static str {
        TEST_PASSWORD
    }

    /// Private key file the host trusts.
    pub fn key(&self, key: ClientKey) -> PathBuf {
        self.dir.path().join(key.file_name())
    }

    /// `ssh -p PORT lh-sshtest@HOST`, as a provider would hand it out.
    pub fn ssh_command(&self) -> String {
        let host = match self.options.listen {
            IpAddr::V6(v6) => format!("[{v6}]"),
            IpAddr::V4(v4) => v4.to_string(),
        };
        format!("ssh -p {} {}@{}", self.port, TEST_USER, host)
    }

    /// A folder on the "instance" owned by the login user; removed with the host.
    pub fn remote_dir(&self) -> PathBuf {
        self.dir.path().join("remote")
    }

    /// Hand a file the test wrote (as root) to the login user, as if that user had written it.
    pub fn give_to_user(&self, path: &Path) {
        run_ok(Command::new("chown").arg(TEST_USER).arg(path));
    }

    /// The host's (first) public key line (`ssh-ed25519 AAAA… comment`).
    pub fn host_public_key(&self) -> String {
        let first = self
            .options
            .host_keys
            .first()
            .copied()
            .unwrap_or(HostKeyKind::Ed25519);
        self.host_public_key_of(first)
    }

    /// The public key line of the host key of `kind`.
    pub fn host_public_key_of(&self, kind: HostKeyKind) -> String {
        read(&self.dir.path().join(format!("{}.pub", kind.file_name())))
    }

    /// Replace every host key with a new one of `kind` and restart sshd on the same port, as an
    /// instance re-imaged with another key type would look.
    pub fn rotate_host_key_to(&mut self, kind: HostKeyKind) {
        for old in &self.options.host_keys {
            let path = self.dir.path().join(old.file_name());
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(path.with_extension("pub"));
        }
        keygen(
            &self.dir.path().join(kind.file_name()),
            kind.keygen_args(),
            "",
        );
        self.options.host_keys = vec![kind];
        self.restart();
    }

    /// Replace the host key, as a re-imaged instance would. sshd reads it per connection.
    pub fn rotate_host_key(&self) {
        let kind = self
            .options
            .host_keys
            .first()
            .copied()
            .unwrap_or(HostKeyKind::Ed25519);
        let path = self.dir.path().join(kind.file_name());
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("pub"));
        keygen(&path, kind.keygen_args(), "");
    }

    /// Kill sshd and every session it serves (the link drops), then start it again on the same
    /// port, as a rebooted instance would.
    pub fn restart(&mut self) {
        self.kill();
        self.launch(self.port)
            .unwrap_or_else(|log| panic!("sshd did not come back on port {}: {log}", self.port));
    }

    /// Kill sshd and its sessions without starting it again.
    pub fn stop(&mut self) {
        self.kill();
    }

    /// sshd's log so far (for assertion messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    fn config_path(&self) -> PathBuf {
        self.dir.path().join("sshd_config")
    }

    fn write_config(&self, port: u16) {
        let dir = self.dir.path().display();
        let mut config = format!(
            "Port {port}
ListenAddress {listen}
{host_keys}PidFile none
UsePAM no
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AuthorizedKeysFile {dir}/authorized_keys
Subsystem sftp {SFTP_SERVER}
MaxSessions {max_sessions}
MaxStartups 200:30:400
AllowTcpForwarding yes
PrintMotd no
PrintLastLog no
LogLevel VERBOSE
",
            listen = self.options.listen,
            host_keys = self
                .options
                .host_keys
                .iter()
                .map(|kind| format!("HostKey {dir}/{}\n", kind.file_name()))
                .collect::<String>(),
            max_sessions = self.options.max_sessions,
        );
        // One SetEnv line: for most keywords sshd keeps the first line it reads.
        let mut set_env = Vec::new();
        if let Some(extra) = &self.options.extra_path {
            set_env.push(format!(
                "PATH={}:/usr/local/bin:/usr/bin:/bin",
                extra.display()
            ));
        }
        if let Some(home) = &self.options.home {
            set_env.push(format!("HOME={}", home.display()));
        }
        if !set_env.is_empty() {
            config.push_str(&format!("SetEnv {}\n", set_env.join(" ")));
        }
        std::fs::write(self.config_path(), config).expect("write sshd_config");
    }

    fn launch_on_free_port(&mut self) {
        let mut last_log = String::new();
        for _ in 0..20 {
            let port = free_port(self.options.listen);
            match self.launch(port) {
                Ok(()) => return,
                Err(log) => last_log = log,
            }
        }
        panic!("sshd would not start: {last_log}");
    }

    /// Start sshd on `port` and wait until it listens; `Err(log)` if it exits instead.
    fn launch(&mut self, port: u16) -> Result<(), String> {
        std::fs::create_dir_all("/run/sshd").expect("create /run/sshd (privilege separation)");
        self.write_config(port);
        let log_path = self.dir.path().join("sshd.log");
        let _ = std::fs::remove_file(&log_path);
        let mut command = match &self.options.netns {
            Some(netns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", netns, SSHD]);
                c
            }
            None => Command::new(SSHD),
        };
        command
            .arg("-D")
            .arg("-f")
            .arg(self.config_path())
            .arg("-E")
            .arg(&log_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = command.spawn().expect("spawn sshd");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            if log.contains("Server listening on") {
                self.port = port;
                self.child = Some(child);
                return Ok(());
            }
            if let Ok(Some(_)) = child.try_wait() {
                return Err(log);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("sshd did not report listening within 10 s: {log}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Session processes outlive the listener; end them too so the link really drops.
            let sessions = descendants(child.id());
            let _ = child.kill();
            let _ = child.wait();
            for pid in sessions {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        self.kill();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Create the login user once; a lock file serialises parallel test processes.
fn ensure_test_user() {
    let script = format!(
        "id -u {TEST_USER} >/dev/null 2>&1 || useradd --create-home --shell /bin/bash {TEST_USER}; \
         echo '{TEST_USER}:{TEST_PASSWORD}' | chpasswd"
    );
    run_ok(
        Command::new("flock")
            .arg("/tmp/leasehold-testkit-user.lock")
            .args(["sh", "-c", &script]),
    );
}

fn keygen(path: &Path, args: &[&str], passphrase: &str) {
    run_ok(
        Command::new("ssh-keygen")
            .arg("-q")
            .args(args)
            .args(["-N", passphrase, "-C", "leasehold-test", "-f"])
            .arg(path),
    );
}

fn free_port(listen: IpAddr) -> u16 {
    std::net::TcpListener::bind((listen, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        // Inside a namespace the address may not exist here; pick from the ephemeral range.
        .unwrap_or_else(|_| 20000 + (std::process::id() % 20000) as u16)
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()))
}

fn run_ok(command: &mut Command) {
    let output = command.output().expect("run helper command");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

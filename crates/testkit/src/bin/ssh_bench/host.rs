//! The benchmark's "distant host": OpenSSH's sshd inside a namespace behind the delay link, with
//! its own host key, a client key, a known_hosts file and a PATH holding the fake `nvidia-smi`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use leasehold_testkit::delay_link::DelayLink;

use crate::battery::FAKE_NVIDIA_SMI;

pub type BenchResult<T> = Result<T, String>;

pub struct BenchHost {
    pub link: DelayLink,
    pub dir: tempfile::TempDir,
    pub client_key: PathBuf,
    pub known_hosts: PathBuf,
    pub fake_bin: PathBuf,
    sshd: Child,
}

pub const USER: &str = "root";
pub const PORT: u16 = 22;

impl BenchHost {
    pub fn start(one_way_delay: Duration) -> BenchResult<Self> {
        let link = DelayLink::start(one_way_delay).map_err(|e| format!("delay link: {e}"))?;
        let dir = tempfile::Builder::new()
            .prefix("leasehold-bench-")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        let root = dir.path();
        let host_key = root.join("host_key");
        let client_key = root.join("client_key");
        keygen(&host_key)?;
        keygen(&client_key)?;
        let authorized = root.join("authorized_keys");
        fs::copy(client_key.with_extension("pub"), &authorized).map_err(io("authorized_keys"))?;

        let host_pub =
            fs::read_to_string(host_key.with_extension("pub")).map_err(io("host key"))?;
        let known_hosts = root.join("known_hosts");
        let ns_addr = link.ns_addr();
        fs::write(&known_hosts, format!("{ns_addr} {host_pub}")).map_err(io("known_hosts"))?;

        let fake_bin = root.join("fakebin");
        fs::create_dir(&fake_bin).map_err(io("fake bin"))?;
        let fake = fake_bin.join("nvidia-smi");
        fs::write(&fake, FAKE_NVIDIA_SMI).map_err(io("fake nvidia-smi"))?;
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).map_err(io("chmod"))?;

        let config = root.join("sshd_config");
        fs::write(
            &config,
            sshd_config(ns_addr, &host_key, &authorized, &fake_bin),
        )
        .map_err(io("sshd_config"))?;
        fs::create_dir_all("/run/sshd").map_err(io("/run/sshd"))?;
        let log = fs::File::create(root.join("sshd.log")).map_err(io("sshd.log"))?;
        let sshd = link
            .namespace()
            .std_command("/usr/sbin/sshd")
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(io("start sshd"))?;
        let host = Self {
            link,
            dir,
            client_key,
            known_hosts,
            fake_bin,
            sshd,
        };
        host.wait_until_listening()?;
        Ok(host)
    }

    pub fn addr(&self) -> std::net::Ipv4Addr {
        self.link.ns_addr()
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Options every OpenSSH client invocation uses: our key, our known_hosts, no user config.
    pub fn openssh_options(&self) -> Vec<String> {
        vec![
            "-F".into(),
            "/dev/null".into(),
            "-i".into(),
            self.client_key.display().to_string(),
            "-o".into(),
            "IdentitiesOnly=yes".into(),
            "-o".into(),
            format!("UserKnownHostsFile={}", self.known_hosts.display()),
            "-o".into(),
            "StrictHostKeyChecking=yes".into(),
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "LogLevel=ERROR".into(),
        ]
    }

    pub fn destination(&self) -> String {
        format!("{USER}@{}", self.addr())
    }

    fn wait_until_listening(&self) -> BenchResult<()> {
        let target = (self.addr(), PORT).into();
        for _ in 0..100 {
            if std::net::TcpStream::connect_timeout(&target, Duration::from_secs(1)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = fs::read_to_string(self.root().join("sshd.log")).unwrap_or_default();
        Err(format!("sshd did not start listening: {log}"))
    }
}

impl Drop for BenchHost {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }
}

fn sshd_config(
    listen: std::net::Ipv4Addr,
    host_key: &Path,
    authorized: &Path,
    fake_bin: &Path,
) -> String {
    format!(
        "ListenAddress {listen}:{PORT}\n\
         HostKey {host_key}\n\
         AuthorizedKeysFile {authorized}\n\
         PidFile none\n\
         UsePAM no\n\
         StrictModes no\n\
         PermitRootLogin prohibit-password\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         Subsystem sftp /usr/lib/openssh/sftp-server\n\
         SetEnv PATH={fake_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
        host_key = host_key.display(),
        authorized = authorized.display(),
        fake_bin = fake_bin.display(),
    )
}

fn keygen(path: &Path) -> BenchResult<()> {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .map_err(io("ssh-keygen"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("ssh-keygen failed for {}", path.display()))
    }
}

pub fn io(what: &'static str) -> impl Fn(std::io::Error) -> String {
    move |err| format!("{what}: {err}")
}

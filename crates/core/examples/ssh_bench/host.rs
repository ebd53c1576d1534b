//! The benchmark's "distant host": the test harness's sshd inside a namespace behind the delay
//! link, with a PATH holding the fake `nvidia-smi`, and a known_hosts file every client shares.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use leasehold_testkit::delay_link::DelayLink;
use leasehold_testkit::{ClientKey, SshdOptions, TestHost};

use crate::battery::FAKE_NVIDIA_SMI;

pub type BenchResult<T> = Result<T, String>;

pub struct BenchHost {
    // Field order is drop order: sshd first, then the link and its namespace, then the files.
    pub sshd: TestHost,
    pub link: DelayLink,
    pub dir: tempfile::TempDir,
    pub known_hosts: PathBuf,
    pub fake_bin: PathBuf,
}

impl BenchHost {
    pub fn start(one_way_delay: Duration) -> BenchResult<Self> {
        let link = DelayLink::start(one_way_delay).map_err(|e| format!("delay link: {e}"))?;
        let dir = tempfile::Builder::new()
            .prefix("leasehold-bench-")
            .tempdir()
            .map_err(io("temp dir"))?;
        // The login user runs the fake nvidia-smi from here.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).map_err(io("chmod"))?;
        let fake_bin = dir.path().join("fakebin");
        fs::create_dir(&fake_bin).map_err(io("fake bin"))?;
        let fake = fake_bin.join("nvidia-smi");
        fs::write(&fake, FAKE_NVIDIA_SMI).map_err(io("fake nvidia-smi"))?;
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).map_err(io("chmod"))?;

        let sshd = TestHost::start_with(SshdOptions {
            listen: link.ns_addr().into(),
            netns: Some(link.namespace().name().to_owned()),
            extra_path: Some(fake_bin.clone()),
            ..SshdOptions::default()
        });
        // Every client trusts the host the same way, so none pays for a first-contact prompt.
        let known_hosts = dir.path().join("known_hosts");
        fs::write(
            &known_hosts,
            format!(
                "[{}]:{} {}",
                link.ns_addr(),
                sshd.port(),
                sshd.host_public_key()
            ),
        )
        .map_err(io("known_hosts"))?;
        Ok(Self {
            sshd,
            link,
            dir,
            known_hosts,
            fake_bin,
        })
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn client_key(&self) -> PathBuf {
        self.sshd.key(ClientKey::Ed25519)
    }

    /// Options every OpenSSH client invocation uses: our key, our known_hosts, no user config.
    pub fn openssh_options(&self) -> Vec<String> {
        vec![
            "-F".into(),
            "/dev/null".into(),
            "-i".into(),
            self.client_key().display().to_string(),
            "-o".into(),
            format!("Port={}", self.sshd.port()),
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

    /// `user@address` for OpenSSH's clients.
    pub fn destination(&self) -> String {
        format!("{}@{}", self.sshd.user(), self.link.ns_addr())
    }
}

pub fn io(what: &'static str) -> impl Fn(std::io::Error) -> String {
    move |err| format!("{what}: {err}")
}

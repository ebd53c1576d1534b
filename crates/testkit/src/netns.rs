//! Network namespaces that tests create, use and always remove.
//!
//! Tests that need "a host somewhere else" (sshd behind a slow or broken link) run that host in a
//! namespace of its own, so nothing ever leaves this machine. Names follow `lh-<pid>-<n>`: unique
//! per test process, and a namespace whose process is gone is a leftover of a crashed run that the
//! next run removes ([`sweep_leftovers`]).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

use nix::sched::{setns, CloneFlags};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Prefix of every namespace this module creates; nothing else is ever touched.
const NAME_PREFIX: &str = "lh-";

/// Set (to anything) where missing root or TUN support must fail the tests instead of skipping them.
pub const REQUIRE_ENV: &str = "LEASEHOLD_REQUIRE_NETNS";

#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("could not enter namespace {name}: {reason}")]
    Enter { name: String, reason: String },
}

/// Why this machine cannot run namespace tests, or `None` when it can.
pub fn unavailable_reason() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not running as root (network namespaces and TUN devices need root)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("the `ip` command (iproute2) is not installed".into());
    }
    None
}

/// Gate for tests that need root and namespaces: true when they can run. Otherwise prints why the
/// test is skipped (so a skip is never silent), or panics when [`REQUIRE_ENV`] is set (CI).
pub fn can_run(test: &str) -> bool {
    let Some(reason) = unavailable_reason() else {
        return true;
    };
    assert!(
        std::env::var_os(REQUIRE_ENV).is_none(),
        "{test}: {REQUIRE_ENV} is set but this machine cannot run namespace tests: {reason}"
    );
    eprintln!("SKIPPED {test}: {reason}");
    false
}

/// A network namespace that exists as long as this value does. Dropping it kills every process
/// still running inside and deletes the namespace (which also destroys devices moved into it).
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates a fresh namespace with a name unique to this process, loopback up. Leftovers of
    /// crashed earlier runs are removed first.
    pub fn create() -> Result<Self, NetnsError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        sweep_leftovers();
        let name = format!(
            "{NAME_PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        run_ip(["netns", "add", name.as_str()])?;
        let netns = Self { name };
        netns.ip(["link", "set", "lo", "up"])?;
        Ok(netns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n NAME ARGS…`: configures this namespace without entering it.
    pub fn ip<I, S>(&self, args: I) -> Result<(), NetnsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut all: Vec<std::ffi::OsString> = vec!["-n".into(), self.name.clone().into()];
        all.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        run_ip(all)
    }

    /// A command that runs `program` inside this namespace (`ip netns exec NAME program`); add
    /// arguments, environment and stdio as usual.
    pub fn command(&self, program: impl AsRef<OsStr>) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("ip");
        command
            .args(["netns", "exec", self.name.as_str()])
            .arg(program);
        command
    }

    /// Blocking twin of [`Netns::command`].
    pub fn std_command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", self.name.as_str()])
            .arg(program);
        command
    }

    /// Runs `work` on a thread inside this namespace and returns its result. Sockets created there
    /// stay in the namespace after the thread ends, so a test can bind a server socket inside and
    /// serve it from its own runtime.
    pub fn run_in<T, F>(&self, work: F) -> Result<T, NetnsError>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        let enter_error = |reason: String| NetnsError::Enter {
            name: self.name.clone(),
            reason,
        };
        let handle = std::fs::File::open(format!("/run/netns/{}", self.name))
            .map_err(|err| enter_error(err.to_string()))?;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    // Only this short-lived thread changes namespace; the caller's stays put.
                    setns(&handle, CloneFlags::CLONE_NEWNET).map_err(|err| err.to_string())?;
                    Ok(work())
                })
                .join()
                .map_err(|_| enter_error("the work panicked".into()))?
                .map_err(enter_error)
        })
    }

    /// Process ids of everything running inside this namespace.
    pub fn pids(&self) -> Vec<i32> {
        namespace_pids(&self.name)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        remove_namespace(&self.name);
    }
}

/// Removes `lh-<pid>-<n>` namespaces whose creating process no longer exists, with whatever still
/// runs inside them. Namespaces of live processes (parallel tests) are left alone.
pub fn sweep_leftovers() {
    let Ok(listing) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&listing.stdout).lines() {
        // `ip netns list` prints "NAME" or "NAME (id: N)".
        let name = line.split_whitespace().next().unwrap_or_default();
        if let Some(owner) = owner_pid(name) {
            if !Path::new(&format!("/proc/{owner}")).exists() {
                tracing::info!(namespace = name, "removing leftover test namespace");
                remove_namespace(name);
            }
        }
    }
}

/// The pid encoded in a namespace name of ours (`lh-<pid>-<n>`), `None` for any other name.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(NAME_PREFIX)?;
    let (pid, serial) = rest.split_once('-')?;
    serial.parse::<u32>().ok()?;
    pid.parse().ok()
}

fn namespace_pids(name: &str) -> Vec<i32> {
    Command::new("ip")
        .args(["netns", "pids", name])
        .output()
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn remove_namespace(name: &str) {
    // The namespace only disappears once nothing runs in it; a test's sshd may still be there.
    for pid in namespace_pids(name) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    if let Err(err) = run_ip(["netns", "del", name]) {
        tracing::warn!(namespace = name, %err, "could not delete test namespace");
    }
}

pub(crate) fn run_ip<I, S>(args: I) -> Result<(), NetnsError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    ip_output(args).map(drop)
}

/// Runs `ip ARGS…` and returns its stdout, or why it failed.
pub(crate) fn ip_output<I, S>(args: I) -> Result<String, NetnsError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new("ip");
    command.args(args);
    let described = format!("{command:?}");
    let output: Output = command.output().map_err(|source| NetnsError::Spawn {
        command: described.clone(),
        source,
    })?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(NetnsError::Failed {
            command: described,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_reads_only_our_namespace_names() {
        assert_eq!(owner_pid("lh-1234-0"), Some(1234), "our own name format");
        assert_eq!(owner_pid("lh-1234-17"), Some(1234), "any serial");
        assert_eq!(owner_pid("lh-abc-0"), None, "pid must be numeric");
        assert_eq!(owner_pid("lh-1234"), None, "serial is required");
        assert_eq!(
            owner_pid("docker-1234-0"),
            None,
            "foreign namespaces are never ours"
        );
        assert_eq!(owner_pid("lh-1234-x"), None, "serial must be numeric");
    }
}

//! A hostile instance: an SSH server (russh) whose SFTP subsystem (russh-sftp) lies. It lists
//! whatever entry names a test hands it (`../../.bashrc`, `/etc/x`, `C:\x`) and serves more
//! bytes than it announced, so tests can prove the client never trusts what an instance says.
//!
//! Real sshd cannot be made to send such names (the kernel refuses them as file names), which
//! is why this one server is not OpenSSH. It accepts any login.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use russh::server::{Auth, ChannelOpenHandle, Msg, Session};
use russh::{Channel, ChannelId};
use russh_sftp::protocol::{
    Attrs, Data, File, FileAttributes, Handle, Name, OpenFlags, Status, StatusCode, Version,
};
use tokio::net::TcpListener;
use tokio::sync::Mutex;

/// The folder every listing is served for (relative to the login folder, as a client sends it).
pub const HOSTILE_ROOT: &str = "evil";

/// One entry the server lists under [`HOSTILE_ROOT`].
#[derive(Debug, Clone)]
pub struct HostileEntry {
    /// Sent verbatim in READDIR.
    pub name: String,
    pub dir: bool,
    /// The size READDIR and STAT announce.
    pub announced: u64,
    /// The bytes READ really returns before its end (may exceed `announced`).
    pub served: u64,
}

impl HostileEntry {
    /// A file that is what it says.
    pub fn file(name: &str, size: u64) -> Self {
        Self {
            name: name.to_owned(),
            dir: false,
            announced: size,
            served: size,
        }
    }
}

/// How the server answers READDIR for [`HOSTILE_ROOT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readdir {
    /// The entries once, then EOF.
    Honest,
    /// A thousand new names on every call, never EOF.
    Endless,
    /// No answer at all, ever.
    Stalls,
}

/// A running hostile server on 127.0.0.1; stops when dropped.
pub struct HostileSftp {
    port: u16,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl HostileSftp {
    /// Serve `entries` under [`HOSTILE_ROOT`]. Must be called inside a tokio runtime.
    pub async fn start(entries: Vec<HostileEntry>) -> Self {
        Self::start_with(entries, Readdir::Honest).await
    }

    /// Serve `entries`, answering READDIR as `readdir` says.
    pub async fn start_with(entries: Vec<HostileEntry>, readdir: Readdir) -> Self {
        let dir = tempfile::tempdir().expect("hostile server folder");
        let key_path = dir.path().join("host_ed25519");
        let status = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key_path)
            .status()
            .expect("run ssh-keygen");
        assert!(status.success(), "ssh-keygen failed");
        let key = russh::keys::load_secret_key(&key_path, None).expect("load host key");
        let config = Arc::new(russh::server::Config {
            keys: vec![key],
            auth_rejection_time: std::time::Duration::ZERO,
            ..russh::server::Config::default()
        });
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind hostile server");
        let port = listener.local_addr().expect("local addr").port();
        let entries = Arc::new(entries);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let handler = SshSide {
                    entries: entries.clone(),
                    readdir,
                    channels: Arc::new(Mutex::new(HashMap::new())),
                };
                if let Ok(session) =
                    russh::server::run_stream(config.clone(), stream, handler).await
                {
                    tokio::spawn(session);
                }
            }
        });
        Self {
            port,
            task,
            _dir: dir,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `ssh -p PORT hostile@127.0.0.1`.
    pub fn ssh_command(&self) -> String {
        format!("ssh -p {} hostile@127.0.0.1", self.port)
    }

    pub fn address(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Drop for HostileSftp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct SshSide {
    entries: Arc<Vec<HostileEntry>>,
    readdir: Readdir,
    channels: Arc<Mutex<HashMap<ChannelId, Channel<Msg>>>>,
}

impl russh::server::Handler for SshSide {
    type Error = russh::Error;

    async fn auth_password(&mut self, _: &str, _: &str) -> Result<Auth, Self::Error> {
        Ok(Auth::Accept)
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _: &mut Session,
    ) -> Result<(), Self::Error> {
        self.channels.lock().await.insert(channel.id(), channel);
        reply.accept().await;
        Ok(())
    }

    /// Like an SFTP-only account (`ForceCommand internal-sftp`), it runs no commands: the
    /// request is refused at once, so a client falls back to SFTP instead of waiting.
    async fn exec_request(
        &mut self,
        id: ChannelId,
        _: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(id)?;
        Ok(())
    }

    async fn subsystem_request(
        &mut self,
        id: ChannelId,
        name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        let channel = self.channels.lock().await.remove(&id);
        match channel {
            Some(channel) if name == "sftp" => {
                session.channel_success(id)?;
                let sftp = SftpSide {
                    entries: self.entries.clone(),
                    listed: HashMap::new(),
                    readdir: self.readdir,
                    served_names: 0,
                };
                russh_sftp::server::run(channel.into_stream(), sftp).await;
            }
            _ => session.channel_failure(id)?,
        }
        Ok(())
    }
}

struct SftpSide {
    entries: Arc<Vec<HostileEntry>>,
    /// Folder handles whose listing was already sent (the next READDIR answers EOF).
    listed: HashMap<String, bool>,
    readdir: Readdir,
    /// Names sent so far by an endless listing.
    served_names: u64,
}

fn attributes(dir: bool, size: u64) -> FileAttributes {
    let mut attrs = FileAttributes::empty();
    attrs.size = Some(size);
    attrs.permissions = Some(if dir { 0o040_755 } else { 0o100_644 });
    attrs
}

impl SftpSide {
    fn entry(&self, path: &str) -> Option<&HostileEntry> {
        let name = path
            .strip_prefix(HOSTILE_ROOT)
            .and_then(|rest| rest.strip_prefix('/'))?;
        self.entries.iter().find(|e| e.name == name)
    }

    fn is_root(path: &str) -> bool {
        path.trim_end_matches('/') == HOSTILE_ROOT
    }
}

impl russh_sftp::server::Handler for SftpSide {
    type Error = StatusCode;

    fn unimplemented(&self) -> Self::Error {
        StatusCode::OpUnsupported
    }

    async fn init(&mut self, _: u32, _: HashMap<String, String>) -> Result<Version, Self::Error> {
        Ok(Version::new())
    }

    async fn stat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        if Self::is_root(&path) {
            return Ok(Attrs {
                id,
                attrs: attributes(true, 0),
            });
        }
        match self.entry(&path) {
            Some(entry) => Ok(Attrs {
                id,
                attrs: attributes(entry.dir, entry.announced),
            }),
            None => Err(StatusCode::NoSuchFile),
        }
    }

    async fn lstat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        self.stat(id, path).await
    }

    async fn opendir(&mut self, id: u32, path: String) -> Result<Handle, Self::Error> {
        self.listed.insert(path.clone(), false);
        Ok(Handle { id, handle: path })
    }

    async fn readdir(&mut self, id: u32, handle: String) -> Result<Name, Self::Error> {
        match self.readdir {
            Readdir::Honest => {}
            Readdir::Stalls => std::future::pending::<()>().await,
            Readdir::Endless => {
                let first = self.served_names;
                self.served_names += 1000;
                let files = (first..self.served_names)
                    .map(|n| File::new(format!("file-{n:012}"), attributes(false, 1)))
                    .collect();
                return Ok(Name { id, files });
            }
        }
        let done = self.listed.insert(handle.clone(), true).unwrap_or(true);
        if done || !Self::is_root(&handle) {
            return Err(StatusCode::Eof);
        }
        let mut files = vec![
            File::new(".", attributes(true, 0)),
            File::new("..", attributes(true, 0)),
        ];
        files.extend(
            self.entries
                .iter()
                .map(|e| File::new(e.name.clone(), attributes(e.dir, e.announced))),
        );
        Ok(Name { id, files })
    }

    async fn open(
        &mut self,
        id: u32,
        filename: String,
        _: OpenFlags,
        _: FileAttributes,
    ) -> Result<Handle, Self::Error> {
        match self.entry(&filename) {
            Some(entry) if !entry.dir => Ok(Handle {
                id,
                handle: filename,
            }),
            _ => Err(StatusCode::NoSuchFile),
        }
    }

    async fn read(
        &mut self,
        id: u32,
        handle: String,
        offset: u64,
        len: u32,
    ) -> Result<Data, Self::Error> {
        let served = self.entry(&handle).ok_or(StatusCode::Failure)?.served;
        if offset >= served {
            return Err(StatusCode::Eof);
        }
        let n = (served - offset).min(u64::from(len));
        Ok(Data {
            id,
            data: vec![b'x'; usize::try_from(n).unwrap_or(0)],
        })
    }

    async fn fstat(&mut self, id: u32, handle: String) -> Result<Attrs, Self::Error> {
        self.stat(id, handle).await
    }

    async fn close(&mut self, id: u32, _: String) -> Result<Status, Self::Error> {
        Ok(Status {
            id,
            status_code: StatusCode::Ok,
            error_message: "Ok".to_owned(),
            language_tag: "en-US".to_owned(),
        })
    }

    async fn realpath(&mut self, id: u32, path: String) -> Result<Name, Self::Error> {
        Ok(Name {
            id,
            files: vec![File::dummy(path)],
        })
    }
}

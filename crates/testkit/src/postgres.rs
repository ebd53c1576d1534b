//! A real PostgreSQL server for the team-mode tests and benchmark: Debian's `postgresql`
//! package, a fresh cluster in a temporary folder (`initdb`), its own socket folder, a free
//! loopback port, password (SCRAM) authentication so the password path is the one users meet,
//! and stopped and removed on drop.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then every server command runs as
//! the package's `postgres` user through `setpriv` (which execs, so the child we hold is the
//! postmaster itself).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The superuser every test cluster has.
pub const PG_USER: &str = "leasehold";
/// Its password (test clusters only).
pub const PG_PASSWORD: &str = "lh-pg-Test-4417";
/// The database the tests use.
pub const PG_DATABASE: &str = "team";
/// The system user that runs the server when the tests run as root.
const RUN_AS: &str = "postgres";

/// A running test cluster.
pub struct TestPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    child: Option<Child>,
    tls: bool,
}

/// The newest installed server's `bin` folder (`/usr/lib/postgresql/<version>/bin`).
pub fn server_bin_dir() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .unwrap_or_else(|err| {
            panic!("PostgreSQL is not installed ({err}); `make deps` installs Debian's postgresql")
        })
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .expect("no /usr/lib/postgresql/<version>/bin/postgres; `make deps` installs it")
}

fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

impl TestPostgres {
    /// initdb, start on a free loopback port, create [`PG_DATABASE`].
    pub fn start() -> Self {
        Self::start_with(false)
    }

    /// [`TestPostgres::start`], serving TLS with a certificate for 127.0.0.1 signed by a CA made
    /// for this cluster alone ([`TestPostgres::ca_file`]): a lab's server with its own CA, which
    /// no system trusts.
    pub fn start_tls() -> Self {
        Self::start_with(true)
    }

    /// The CA that signed a [`TestPostgres::start_tls`] cluster's certificate (PEM).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("tls").join("ca.crt")
    }

    /// A CA and a server certificate for 127.0.0.1 / localhost, made with the openssl CLI.
    fn make_certificates(&self) {
        let tls = self.dir.path().join("tls");
        std::fs::create_dir(&tls).expect("create the TLS folder");
        let openssl = |args: &[&str]| {
            run_ok(Command::new("openssl").args(args).current_dir(&tls));
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            &[
                &["req", "-x509"][..],
                &ec,
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.crt",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=Leasehold test CA",
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                ],
            ]
            .concat(),
        );
        openssl(
            &[
                &["req"][..],
                &ec,
                &[
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        );
        std::fs::write(
            tls.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write the certificate extensions");
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        // PostgreSQL refuses a key others can read, and runs as its own user under root.
        std::fs::set_permissions(
            tls.join("server.key"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .expect("restrict the key");
        if is_root() {
            run_ok(Command::new("chown").args(["-R", RUN_AS]).arg(&tls));
        }
    }

    fn start_with(tls: bool) -> Self {
        let bin = server_bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("lh-pg-")
            .tempdir()
            .expect("create the cluster folder");
        let password_file = dir.path().join("pw");
        std::fs::write(&password_file, PG_PASSWORD).expect("write the password file");
        std::fs::create_dir(dir.path().join("sock")).expect("create the socket folder");
        if is_root() {
            run_ok(Command::new("chown").args(["-R", RUN_AS]).arg(dir.path()));
        }
        let mut server = Self {
            dir,
            bin,
            port: 0,
            child: None,
            tls,
        };
        let data = server.data_dir();
        server.run_ok(
            server
                .command("initdb")
                .arg("-D")
                .arg(&data)
                .args([
                    "-U",
                    PG_USER,
                    "--auth=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--locale=C",
                ])
                .arg("--no-sync")
                .arg(format!("--pwfile={}", password_file.display())),
        );
        if tls {
            server.make_certificates();
        }
        server.launch();
        server.run_ok(
            server
                .command("createdb")
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &server.port.to_string(),
                    "-U",
                    PG_USER,
                ])
                .arg(PG_DATABASE)
                .env("PGPASSWORD", PG_PASSWORD),
        );
        server
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A server program, run as the unprivileged user when we are root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if is_root() {
            let mut command = Command::new("setpriv");
            command
                .args([
                    &format!("--reuid={RUN_AS}"),
                    &format!("--regid={RUN_AS}"),
                    "--init-groups",
                    "--",
                ])
                .arg(path);
            command
        } else {
            Command::new(path)
        }
    }

    fn run_ok(&self, command: &mut Command) -> Output {
        run_ok(command)
    }

    fn launch(&mut self) {
        for _ in 0..5 {
            let port = free_port();
            let log = std::fs::File::create(self.dir.path().join("postgres.log"))
                .expect("create the server log");
            if is_root() {
                run_ok(
                    Command::new("chown")
                        .arg(RUN_AS)
                        .arg(self.dir.path().join("postgres.log")),
                );
            }
            let mut command = self.command("postgres");
            if self.tls {
                let tls = self.dir.path().join("tls");
                command.args(["-c", "ssl=on"]).arg("-c").arg(format!(
                    "ssl_cert_file={}",
                    tls.join("server.crt").display()
                ));
                command
                    .arg("-c")
                    .arg(format!("ssl_key_file={}", tls.join("server.key").display()));
            }
            let child = command
                .arg("-D")
                .arg(self.data_dir())
                .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
                .arg("-c")
                .arg(format!(
                    "unix_socket_directories={}",
                    self.dir.path().join("sock").display()
                ))
                // A test cluster need not survive a power cut.
                .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("clone the log handle"))
                .stderr(log)
                .spawn()
                .expect("start postgres");
            self.child = Some(child);
            self.port = port;
            if self.wait_ready() {
                return;
            }
            self.kill();
        }
        panic!("postgres did not start; log:\n{}", self.log());
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(_)) = child.try_wait() {
                    return false;
                }
            }
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-q"])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://USER@127.0.0.1:PORT/DB?sslmode=disable` (no password: it comes from the
    /// keychain, the environment or a `--password-env` variable; no TLS, which Leasehold allows
    /// only on loopback, unless the cluster was started with [`TestPostgres::start_tls`]).
    pub fn url(&self) -> String {
        self.url_on(self.port)
    }

    /// The same database reached through another port (a proxy in front of it).
    pub fn url_on(&self, port: u16) -> String {
        format!("postgres://{PG_USER}@127.0.0.1:{port}/{PG_DATABASE}?sslmode=disable")
    }

    /// The URL without any `sslmode`: what a user types, verified TLS by default.
    pub fn url_with_default_tls(&self) -> String {
        format!("postgres://{PG_USER}@127.0.0.1:{}/{PG_DATABASE}", self.port)
    }

    /// Run SQL with `psql` and return its unaligned, tuples-only output.
    pub fn psql(&self, sql: &str) -> String {
        let out = run_ok(
            Command::new(self.bin.join("psql"))
                .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
                .args([
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    PG_USER,
                    "-d",
                    PG_DATABASE,
                ])
                .arg("-c")
                .arg(sql)
                .env("PGPASSWORD", PG_PASSWORD),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// `psql` reading a file (COPY … FROM STDIN and the like), returning its output.
    pub fn psql_file(&self, script: &Path) -> String {
        let out = run_ok(
            Command::new(self.bin.join("psql"))
                .args([
                    "-X",
                    "-A",
                    "-t",
                    "-q",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-h",
                    "127.0.0.1",
                ])
                .args([
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    PG_USER,
                    "-d",
                    PG_DATABASE,
                ])
                .arg("-f")
                .arg(script)
                .env("PGPASSWORD", PG_PASSWORD),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// The server's log so far (for assertion messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("postgres.log")).unwrap_or_default()
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGINT: PostgreSQL's fast shutdown (ends sessions, no checkpoint wait).
            let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("find a free port")
}

fn run_ok(command: &mut Command) -> Output {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("could not run {command:?}: {err}"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

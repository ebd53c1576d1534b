//! A stand-in update server on loopback for the self-update tests: fixed files by path (a
//! `latest.json`, a fake installer), every request counted, and throwaway minisign keys that
//! sign the way `tauri signer sign --app-version` does (base64 of minisign's text files).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use base64::Engine;

/// What the server answers for one path.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            body: body.into(),
        }
    }

    pub fn status(status: u16) -> Self {
        Self {
            status,
            body: Vec::new(),
        }
    }
}

#[derive(Default)]
struct Shared {
    replies: HashMap<String, Reply>,
    hits: HashMap<String, usize>,
}

/// Serves until dropped (the thread ends with the test process).
pub struct UpdateServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
}

impl UpdateServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binds a loopback port");
        let addr = listener.local_addr().expect("has an address");
        let shared = Arc::new(Mutex::new(Shared::default()));
        let serving = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = serving.clone();
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Self { addr, shared }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }

    pub fn put(&self, path: &str, reply: Reply) {
        self.lock()
            .replies
            .insert(format!("/{}", path.trim_start_matches('/')), reply);
    }

    /// How many requests `path` got.
    pub fn hits(&self, path: &str) -> usize {
        self.lock()
            .hits
            .get(&format!("/{}", path.trim_start_matches('/')))
            .copied()
            .unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().expect("server state")
    }
}

fn serve(stream: TcpStream, shared: &Mutex<Shared>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clones the stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Read the headers to their end; the requests have no body.
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let reply = {
        let mut shared = shared.lock().expect("server state");
        *shared.hits.entry(path.clone()).or_default() += 1;
        shared
            .replies
            .get(&path)
            .cloned()
            .unwrap_or(Reply::status(404))
    };
    let mut stream = stream;
    let head = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        reply.status,
        reply.body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&reply.body);
}

/// A loopback URL nothing listens on (the port was bound, then released).
pub fn refused_url(path: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds a loopback port");
    let addr = listener.local_addr().expect("has an address");
    drop(listener);
    format!("http://{addr}/{}", path.trim_start_matches('/'))
}

/// A throwaway minisign key pair.
pub struct SigningKey {
    pair: minisign::KeyPair,
}

impl SigningKey {
    pub fn generate() -> Self {
        Self {
            pair: minisign::KeyPair::generate_unencrypted_keypair().expect("generates a key"),
        }
    }

    /// The public key as the app takes it: base64 of the `.pub` file's text.
    pub fn public_key_base64(&self) -> String {
        let text = self
            .pair
            .pk
            .to_box()
            .expect("boxes the public key")
            .to_string();
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    /// The signature of `data` for `version`, as `latest.json` carries it: base64 of the `.sig`
    /// file's text, the version in the trusted comment.
    pub fn sign(&self, data: &[u8], version: &str) -> String {
        let trusted = format!("timestamp:1764835200\tfile:update.bin\tversion:{version}");
        let signature = minisign::sign(
            Some(&self.pair.pk),
            &self.pair.sk,
            data,
            Some(&trusted),
            Some("signature from tauri secret key"),
        )
        .expect("signs");
        base64::engine::general_purpose::STANDARD.encode(signature.to_string())
    }
}

/// A `latest.json` announcing `version` for Linux and Windows, each with `url` and `signature`.
pub fn manifest(version: &str, url: &str, signature: &str) -> String {
    serde_json::json!({
        "version": version,
        "pub_date": "2026-12-01T08:00:00Z",
        "notes": "Stop now works with RunPod REST v2.",
        "notes_by_language": {
            "en": "Stop now works with RunPod REST v2.",
            "zh-CN": "“立即关机”已支持 RunPod REST v2。"
        },
        "platforms": {
            "linux-x86_64": { "url": url, "signature": signature },
            "windows-x86_64": { "url": url, "signature": signature }
        }
    })
    .to_string()
}

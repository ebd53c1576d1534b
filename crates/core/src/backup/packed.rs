//! A folder of many small files in one stream: `tar` on the instance writes the folder's
//! regular files to one channel, and they are unpacked here as they arrive. A second channel
//! computes the per-file SHA-256 manifest on the instance at the same time; every unpacked file
//! is hashed while it is written and checked against it. Fetching 100 000 files one SFTP
//! request at a time would cost a round trip each.
//!
//! The stream is untrusted: every entry's path is split into components, each checked with
//! `ssh::check_entry_name` (no `..`, no `/`, no drive, no NUL) and joined with `local_child`,
//! and anything but a regular file or a folder (links, devices) is refused. A second call after
//! a failure resumes: the manifest comes first, files already here with the right hash are
//! skipped, and only the rest is packed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::BackupError;
use crate::shell::quote;
use crate::ssh::{local_child, SshTarget};
use crate::target::{CommandSpec, OutputStream};

/// How long packing one folder may take.
const PACK_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// Chunks read from the SSH channel and not yet unpacked (each at most one channel packet).
const CHUNKS_IN_FLIGHT: usize = 64;
/// Most manifest bytes held (about 100 bytes a file).
const MANIFEST_CAP: usize = 256 * 1024 * 1024;

/// What a packed download produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedReport {
    pub files: u64,
    pub bytes: u64,
    /// Files that were already here with the right hash (a resumed backup).
    pub skipped_files: u64,
    /// SHA-256 of the sorted manifest (`HASH  path` lines).
    pub manifest_sha256: String,
    /// Symbolic links in the folder, not followed and not saved.
    pub links: SkippedLinks,
}

/// Symbolic links a folder backup left alone: how many, and the first few.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedLinks {
    pub count: u64,
    pub named: Vec<String>,
}

/// The links lines the manifest script appends after `sha256sum`'s (`link\tPATH` for the
/// first few, then `links\tCOUNT`).
fn parse_links(text: &str) -> SkippedLinks {
    let mut links = SkippedLinks::default();
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("link\t") {
            if links.named.len() < crate::ssh::MAX_LINKS_NAMED {
                links.named.push(relative(path));
            }
        } else if let Some(count) = line.strip_prefix("links\t") {
            links.count = count.trim().parse().unwrap_or(links.count);
        }
    }
    links.count = links.count.max(links.named.len() as u64);
    links
}

/// The remote folder as the shell sees it (`~/x` is relative to the login folder).
pub(crate) fn shell_path(path: &str) -> String {
    match path {
        "~" | "~/" => ".".to_owned(),
        _ => path.strip_prefix("~/").unwrap_or(path).to_owned(),
    }
}

/// `sha256sum` lines into `path → hash` (paths without the leading `./`). A name with a
/// newline or a backslash comes back escaped, with a `\` before the hash.
pub fn parse_manifest(text: &str) -> BTreeMap<String, String> {
    let mut manifest = BTreeMap::new();
    for line in text.lines() {
        let (escaped, line) = match line.strip_prefix('\\') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let Some(hash) = line.get(..64) else { continue };
        if !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Some(name) = line
            .get(64..)
            .and_then(|r| r.strip_prefix("  ").or_else(|| r.strip_prefix(" *")))
        else {
            continue;
        };
        let name = if escaped {
            unescape(name)
        } else {
            name.to_owned()
        };
        manifest.insert(relative(&name), hash.to_ascii_lowercase());
    }
    manifest
}

fn unescape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A path from the instance without `./` and empty components.
fn relative(path: &str) -> String {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// Where the instance's relative `path` goes under `dir`, each component checked.
fn local_path(dir: &Path, path: &str) -> Result<PathBuf, BackupError> {
    let mut local = dir.to_owned();
    let mut folder = String::from(".");
    for component in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
        local = local_child(&local, component).map_err(|reason| BackupError::UnsafeName {
            folder: folder.clone(),
            name: component.to_owned(),
            reason,
        })?;
        folder = format!("{folder}/{component}");
    }
    if local == dir {
        return Err(BackupError::UnsafeName {
            folder,
            name: path.to_owned(),
            reason: crate::ssh::UnsafeName::Empty,
        });
    }
    Ok(local)
}

fn manifest_digest(manifest: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    for (path, hash) in manifest {
        hasher.update(format!("{hash}  {path}\n").as_bytes());
    }
    hex::encode(hasher.finalize())
}

fn sha256_file(path: &Path) -> Option<(String, u64)> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    let size = std::io::copy(&mut file, &mut hasher).ok()?;
    Some((hex::encode(hasher.finalize()), size))
}

/// Reads the chunks the SSH channel delivers, in order, until the sender is dropped.
struct ChunkReader {
    chunks: mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at >= self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Writes into a file and a hash at once.
struct HashingWriter<'a> {
    file: &'a mut std::fs::File,
    hasher: Sha256,
}

impl std::io::Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Unpack a tar stream into `dir`: `path → (sha256, size)` of every file written.
pub fn unpack(
    stream: impl Read,
    dir: &Path,
) -> Result<BTreeMap<String, (String, u64)>, BackupError> {
    let mut archive = tar::Archive::new(stream);
    let mut written = BTreeMap::new();
    let broken = |err: std::io::Error| BackupError::PackFailed {
        path: dir.display().to_string(),
        message: format!("the stream from the instance is not a valid tar archive: {err}"),
    };
    for entry in archive.entries().map_err(broken)? {
        let mut entry = entry.map_err(broken)?;
        let raw = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if raw.starts_with('/') {
            return Err(BackupError::UnsafeName {
                folder: ".".to_owned(),
                name: raw,
                reason: crate::ssh::UnsafeName::Separator,
            });
        }
        let path = relative(&raw);
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            if !path.is_empty() {
                let local = local_path(dir, &path)?;
                std::fs::create_dir_all(&local).map_err(|err| BackupError::local(&local, &err))?;
            }
            continue;
        }
        if !(kind.is_file() || kind.is_contiguous()) {
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else if kind.is_hard_link() {
                "a hard link"
            } else {
                "a device or other special"
            };
            return Err(BackupError::UnsupportedEntry {
                name: raw,
                kind: what.to_owned(),
            });
        }
        let local = local_path(dir, &path)?;
        if let Some(parent) = local.parent() {
            std::fs::create_dir_all(parent).map_err(|err| BackupError::local(parent, &err))?;
        }
        let mut file =
            std::fs::File::create(&local).map_err(|err| BackupError::local(&local, &err))?;
        let mut writer = HashingWriter {
            file: &mut file,
            hasher: Sha256::new(),
        };
        let size = std::io::copy(&mut entry, &mut writer)
            .map_err(|err| BackupError::local(&local, &err))?;
        let hash = hex::encode(writer.hasher.finalize());
        written.insert(path, (hash, size));
    }
    Ok(written)
}

impl PackedReport {
    fn from_checked(
        manifest: &BTreeMap<String, String>,
        sizes: &BTreeMap<String, u64>,
        skipped_files: u64,
        links: SkippedLinks,
    ) -> Self {
        Self {
            files: manifest.len() as u64,
            bytes: sizes.values().sum(),
            skipped_files,
            manifest_sha256: manifest_digest(manifest),
            links,
        }
    }
}

async fn remote_manifest(
    target: &SshTarget,
    dir: &str,
) -> Result<(BTreeMap<String, String>, SkippedLinks), BackupError> {
    // Links are not followed (what they point to may be outside the folder, or gone), but
    // they are counted: a folder of links (Hugging Face's `snapshots/`) must not look saved.
    let script = format!(
        "cd -- {} && find . -type f -print0 | xargs -0 -r sha256sum -- && \
         find . -type l -printf 'link\\t%p\\n' | awk -v named={} 'NR <= named; END {{ printf \"links\\t%d\\n\", NR }}'",
        quote(dir),
        crate::ssh::MAX_LINKS_NAMED
    );
    let spec = CommandSpec::new(script)
        .timeout(PACK_TIMEOUT)
        .output_cap(MANIFEST_CAP);
    let output = target.exec(&spec).await?;
    if !output.success() {
        return Err(BackupError::PackFailed {
            path: dir.to_owned(),
            message: format!("sha256sum failed: {}", output.stderr_text().trim()),
        });
    }
    let text = output.stdout_text();
    Ok((parse_manifest(&text), parse_links(&text)))
}

/// Files of `manifest` already in `local_dir` with the right hash (a resumed backup).
fn already_here(local_dir: &Path, manifest: &BTreeMap<String, String>) -> BTreeMap<String, u64> {
    manifest
        .iter()
        .filter_map(|(path, hash)| {
            let local = local_path(local_dir, path).ok()?;
            let (sum, size) = sha256_file(&local)?;
            (sum == *hash).then(|| (path.clone(), size))
        })
        .collect()
}

/// Download folder `remote` into `local_dir` (which becomes the folder's copy) through one tar
/// stream. `progress` gets the bytes of each chunk as it arrives.
pub async fn download_packed(
    target: &SshTarget,
    remote: &str,
    local_dir: &Path,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<PackedReport, BackupError> {
    let remote = shell_path(remote);
    std::fs::create_dir_all(local_dir).map_err(|err| BackupError::local(local_dir, &err))?;
    let resuming = std::fs::read_dir(local_dir)
        .map_err(|err| BackupError::local(local_dir, &err))?
        .next()
        .is_some();
    let pack_all = format!(
        "cd -- {} && find . -type f -print0 | tar --null --no-recursion -T - -cf -",
        quote(&remote)
    );
    if resuming {
        // Resume: learn what should be here, keep what already is, pack only the rest.
        let (manifest, links) = remote_manifest(target, &remote).await?;
        let kept = already_here(local_dir, &manifest);
        progress(kept.values().sum());
        let missing: Vec<&String> = manifest.keys().filter(|p| !kept.contains_key(*p)).collect();
        let mut sizes = kept.clone();
        if !missing.is_empty() {
            let mut list = Vec::new();
            for path in &missing {
                list.extend_from_slice(b"./");
                list.extend_from_slice(path.as_bytes());
                list.push(0);
            }
            let script = format!(
                "cd -- {} && tar --null --no-recursion -T - -cf -",
                quote(&remote)
            );
            let written =
                stream_tar(target, &remote, &script, Some(list), local_dir, progress).await?;
            check(&manifest, &written, &missing)?;
            sizes.extend(written.into_iter().map(|(p, (_, s))| (p, s)));
        }
        return Ok(PackedReport::from_checked(
            &manifest,
            &sizes,
            kept.len() as u64,
            links,
        ));
    }
    let ((manifest, links), written) = tokio::try_join!(
        remote_manifest(target, &remote),
        stream_tar(target, &remote, &pack_all, None, local_dir, progress)
    )?;
    let expected: Vec<&String> = manifest.keys().collect();
    check(&manifest, &written, &expected)?;
    let sizes = written.into_iter().map(|(p, (_, s))| (p, s)).collect();
    Ok(PackedReport::from_checked(&manifest, &sizes, 0, links))
}

fn check(
    manifest: &BTreeMap<String, String>,
    written: &BTreeMap<String, (String, u64)>,
    expected: &[&String],
) -> Result<(), BackupError> {
    for path in expected {
        let remote = &manifest[*path];
        match written.get(*path) {
            None => {
                return Err(BackupError::MissingFile {
                    path: (*path).clone(),
                })
            }
            Some((local, _)) if local != remote => {
                return Err(BackupError::ChecksumMismatch {
                    path: (*path).clone(),
                    local: local.clone(),
                    remote: remote.clone(),
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Run `script` (which writes a tar stream) and unpack its output into `local_dir` as it
/// arrives.
async fn stream_tar(
    target: &SshTarget,
    remote: &str,
    script: &str,
    stdin: Option<Vec<u8>>,
    local_dir: &Path,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<BTreeMap<String, (String, u64)>, BackupError> {
    // Bounded: the instance can send faster than this disk writes, and what it sent must not
    // pile up in memory. A full channel makes the sink wait, which stops reading the SSH
    // channel, whose window then stops the sender. The unpacking runs on its own thread, so
    // the wait always ends.
    let (chunks, receiver) = mpsc::sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT);
    let dir = local_dir.to_owned();
    let mut unpacking = tokio::task::spawn_blocking(move || {
        unpack(
            ChunkReader {
                chunks: receiver,
                current: Vec::new(),
                at: 0,
            },
            &dir,
        )
    });
    let spec = CommandSpec::new(script).timeout(PACK_TIMEOUT);
    let stderr = std::sync::Mutex::new(Vec::new());
    let stderr_text = || stderr.lock().map(|bytes| bytes.clone()).unwrap_or_default();
    let exit = {
        let chunks = chunks;
        let mut sink = |stream: OutputStream, chunk: &[u8]| match stream {
            OutputStream::Stdout => {
                progress(chunk.len() as u64);
                // A closed receiver means unpacking stopped; its error is reported below.
                let _ = chunks.send(chunk.to_vec());
            }
            OutputStream::Stderr => {
                if let Ok(mut kept) = stderr.lock() {
                    if kept.len() < 8192 {
                        kept.extend_from_slice(chunk);
                    }
                }
            }
        };
        let input = stdin.map(|bytes| {
            Box::new(std::io::Cursor::new(bytes)) as Box<dyn tokio::io::AsyncRead + Send + Unpin>
        });
        let exec = target.exec_streaming(&spec, input, &mut sink);
        tokio::pin!(exec);
        tokio::select! {
            exit = &mut exec => exit,
            unpacked = &mut unpacking => {
                // Unpacking ended before the stream: an unsafe entry or a broken archive stops
                // the transfer at once; a finished archive still waits for tar's exit.
                match unpacked {
                    Ok(Err(err)) => return Err(err),
                    Err(join) => return Err(BackupError::PackFailed { path: remote.to_owned(), message: join.to_string() }),
                    Ok(Ok(written)) => {
                        let exit = exec.await?;
                        return finish(remote, exit.status, &stderr_text(), Ok(written));
                    }
                }
            }
        }
    }?;
    let unpacked = unpacking.await.map_err(|join| BackupError::PackFailed {
        path: remote.to_owned(),
        message: join.to_string(),
    })?;
    finish(remote, exit.status, &stderr_text(), unpacked)
}

fn finish(
    remote: &str,
    status: Option<u32>,
    stderr: &[u8],
    unpacked: Result<BTreeMap<String, (String, u64)>, BackupError>,
) -> Result<BTreeMap<String, (String, u64)>, BackupError> {
    let written = unpacked?;
    // GNU tar exits 1 when a file changed while it was read; the checksums decide then.
    match status {
        Some(0 | 1) => Ok(written),
        _ => Err(BackupError::PackFailed {
            path: remote.to_owned(),
            message: String::from_utf8_lossy(stderr).trim().to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_lines_with_escaped_names_are_read_back() {
        let hash = "a".repeat(64);
        let text = format!(
            "{hash}  ./x/y.txt\n\\{hash}  ./new\\nline\\\\name\nnot a line\n{hash} *./bin\n"
        );
        let manifest = parse_manifest(&text);
        assert_eq!(manifest.get("x/y.txt"), Some(&hash));
        assert_eq!(
            manifest.get("new\nline\\name"),
            Some(&hash),
            "escapes are undone: {manifest:?}"
        );
        assert_eq!(manifest.get("bin"), Some(&hash));
        assert_eq!(manifest.len(), 3, "junk lines are skipped");
    }

    fn archive(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            // Write the raw name so hostile paths reach the unpacker unchanged.
            let bytes = name.as_bytes();
            header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
            header.set_cksum();
            builder.append(&header, *data).expect("append");
        }
        builder.into_inner().expect("finish")
    }

    #[test]
    fn a_plain_archive_unpacks_with_hashes() {
        let dir = tempfile::tempdir().expect("dir");
        let bytes = archive(&[
            ("./", tar::EntryType::Directory, b""),
            ("./a/b.txt", tar::EntryType::Regular, b"hello"),
        ]);
        let written = unpack(&bytes[..], dir.path()).expect("unpacks");
        let (hash, size) = &written["a/b.txt"];
        assert_eq!(*size, 5);
        assert_eq!(hash, &hex::encode(Sha256::digest(b"hello")));
        assert_eq!(
            std::fs::read(dir.path().join("a/b.txt")).expect("read"),
            b"hello"
        );
    }

    #[test]
    fn hostile_entries_are_refused_and_nothing_lands_outside() {
        let outer = tempfile::tempdir().expect("dir");
        let dir = outer.path().join("backup");
        std::fs::create_dir(&dir).expect("mkdir");
        for (name, kind) in [
            ("../escape.txt", tar::EntryType::Regular),
            ("./a/../../escape.txt", tar::EntryType::Regular),
            ("/etc/escape.txt", tar::EntryType::Regular),
            ("C:evil", tar::EntryType::Regular),
            ("./link", tar::EntryType::Symlink),
            ("./dev", tar::EntryType::Char),
        ] {
            let bytes = archive(&[(name, kind, b"x")]);
            let err = unpack(&bytes[..], &dir).expect_err(name);
            assert!(
                matches!(
                    err,
                    BackupError::UnsafeName { .. } | BackupError::UnsupportedEntry { .. }
                ),
                "{name}: {err}"
            );
        }
        let left: Vec<_> = std::fs::read_dir(outer.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("backup")],
            "nothing was written beside the folder"
        );
        assert!(
            std::fs::read_dir(&dir).expect("list").next().is_none(),
            "nor inside it"
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().expect("dir");
        for garbage in [&b"not a tar"[..], &[0xffu8; 1024][..], &[]] {
            let _ = unpack(garbage, dir.path());
        }
    }
}

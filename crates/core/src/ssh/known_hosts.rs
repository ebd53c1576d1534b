//! Trust on first use, and a hard stop when a host key changes.
//!
//! Leasehold keeps its own known_hosts file (OpenSSH format, in the app-data folder) and also
//! consults `~/.ssh/known_hosts`, so hosts the user already trusts in a terminal are trusted here.
//! Lines are parsed one by one with `ssh-key`'s parser so a single line we cannot read (an
//! unsupported key type, a typo) does not make the whole file unusable — russh's own helper
//! gives up on the first such line.

use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use russh::keys::ssh_key::known_hosts::{Entry, HostPatterns, Marker};
use russh::keys::{Algorithm, HashAlg, PublicKey};
use sha1::Sha1;

use super::error::KnownKey;
use super::SshError;

/// The known_hosts files to consult and the one that learns new hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownHosts {
    consulted: Vec<PathBuf>,
    learn_into: PathBuf,
}

/// What the known_hosts files say about a presented host key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKeyVerdict {
    /// A matching line exists.
    Trusted,
    /// No line for this host at all: first contact.
    Unknown,
    /// Lines for this host hold other keys: a different key of the presented type, or keys of
    /// other types only (the host stopped offering every type we know it by — OpenSSH would
    /// have negotiated a known type, so this is a change, never a first contact). Keys of the
    /// presented type come first.
    Changed { recorded: Vec<RecordedKey> },
    /// The presented key is marked `@revoked`.
    Revoked { file: PathBuf },
    /// The only lines for this host are `@cert-authority` ones: the user trusts the host
    /// through its certificate, which Leasehold does not check. Never a first contact to
    /// trust on first use.
    ByCertificateAuthority { file: PathBuf, line: usize },
}

/// A host key found in a known_hosts file, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedKey {
    pub key: PublicKey,
    pub file: PathBuf,
    pub line: usize,
}

impl From<&RecordedKey> for KnownKey {
    fn from(recorded: &RecordedKey) -> Self {
        Self {
            algorithm: recorded.key.algorithm().to_string(),
            fingerprint: fingerprint(&recorded.key),
            known_hosts: recorded.file.display().to_string(),
            line: recorded.line,
        }
    }
}

impl KnownHosts {
    /// The app's own file plus `~/.ssh/known_hosts`; new hosts are written to the app's file only,
    /// so we never edit the user's OpenSSH files.
    pub fn app_default() -> Self {
        let app = crate::paths::data_dir().join("known_hosts");
        let mut consulted = vec![app.clone()];
        if let Some(ssh_dir) = super::destination::user_ssh_dir() {
            consulted.push(ssh_dir.join("known_hosts"));
        }
        Self {
            consulted,
            learn_into: app,
        }
    }

    /// Exactly one file, read and written (`--known-hosts FILE`, tests).
    pub fn only(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        Self {
            consulted: vec![path.clone()],
            learn_into: path,
        }
    }

    /// Every file read, in order.
    pub fn consulted(&self) -> &[PathBuf] {
        &self.consulted
    }

    pub fn learn_into(&self) -> &Path {
        &self.learn_into
    }

    /// Judge `key` presented by `host:port`. A matching `@revoked` line wins wherever it is in
    /// the files, before or after a line that trusts the key (OpenSSH checks revocation over
    /// everything it loaded first).
    pub fn check(&self, host: &str, port: u16, key: &PublicKey) -> HostKeyVerdict {
        let entries = self.entries_for(host, port);
        if let Some((_, file, _)) = entries.iter().find(|(entry, _, _)| {
            entry.marker() == Some(&Marker::Revoked) && same_key(entry.public_key(), key)
        }) {
            return HostKeyVerdict::Revoked { file: file.clone() };
        }
        let mut recorded = Vec::new();
        let mut authority = None;
        for (entry, file, line) in entries {
            let known = entry.public_key();
            match entry.marker() {
                Some(Marker::CertAuthority) => {
                    authority.get_or_insert((file, line));
                    continue;
                }
                Some(_) => continue,
                None => {}
            }
            if same_key(known, key) {
                return HostKeyVerdict::Trusted;
            }
            recorded.push(RecordedKey {
                key: known.clone(),
                file,
                line,
            });
        }
        if recorded.is_empty() {
            return match authority {
                Some((file, line)) => HostKeyVerdict::ByCertificateAuthority { file, line },
                None => HostKeyVerdict::Unknown,
            };
        }
        // The key this one replaced (same type) first; then the types the host no longer offers.
        recorded.sort_by_key(|r| !same_family(&r.key.algorithm(), &key.algorithm()));
        HostKeyVerdict::Changed { recorded }
    }

    /// The key types recorded for `host:port` (revoked and CA lines aside), in file order: the
    /// ones to ask the server for first, as OpenSSH orders `HostKeyAlgorithms`.
    pub fn known_algorithms(&self, host: &str, port: u16) -> Vec<Algorithm> {
        let mut algorithms: Vec<Algorithm> = Vec::new();
        for (entry, _, _) in self.entries_for(host, port) {
            let algorithm = entry.public_key().algorithm();
            if entry.marker().is_none() && !algorithms.contains(&algorithm) {
                algorithms.push(algorithm);
            }
        }
        algorithms
    }

    /// Every readable line of every consulted file that names `host:port`, with its file and
    /// line number.
    fn entries_for(&self, host: &str, port: u16) -> Vec<(Entry, PathBuf, usize)> {
        let name = host_port_name(host, port);
        let mut found = Vec::new();
        for file in &self.consulted {
            let Ok(text) = std::fs::read_to_string(file) else {
                continue;
            };
            for (index, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let Ok(entry) = line.parse::<Entry>() else {
                    tracing::debug!(file = %file.display(), line = index + 1, "skipping unreadable known_hosts line");
                    continue;
                };
                if patterns_match(entry.host_patterns(), &name) {
                    found.push((entry, file.clone(), index + 1));
                }
            }
        }
        found
    }

    /// Record `key` for `host:port` in the app's file (creating it and its folder).
    pub fn learn(&self, host: &str, port: u16, key: &PublicKey) -> Result<(), SshError> {
        use std::io::Write;
        let failed = |err: &dyn std::fmt::Display| SshError::KnownHostsWrite {
            path: self.learn_into.clone(),
            message: err.to_string(),
        };
        if let Some(parent) = self.learn_into.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(&e))?;
        }
        let existing = std::fs::read(&self.learn_into).unwrap_or_default();
        let key_text = key.to_openssh().map_err(|e| failed(&e))?;
        let mut line = String::new();
        if existing.last().is_some_and(|last| *last != b'\n') {
            line.push('\n');
        }
        line.push_str(&format!(
            "{} {}\n",
            host_port_name(host, port),
            key_text.trim()
        ));
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.learn_into)
            .and_then(|mut file| file.write_all(line.as_bytes()))
            .map_err(|e| failed(&e))
    }
}

/// `SHA256:…`, as OpenSSH prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

fn same_key(a: &PublicKey, b: &PublicKey) -> bool {
    a.key_data() == b.key_data()
}

/// One key type, whatever signature hash it is used with (`ssh-rsa` keys sign as
/// `rsa-sha2-512` and `rsa-sha2-256` too).
fn same_family(a: &Algorithm, b: &Algorithm) -> bool {
    match (a, b) {
        (Algorithm::Rsa { .. }, Algorithm::Rsa { .. }) => true,
        _ => a == b,
    }
}

/// `preferred` reordered so the key types already known for a host come first (keeping their
/// relative order), as OpenSSH does: a host known by its ed25519 key that also has an RSA key
/// is asked for the ed25519 one, and a host known only by RSA is asked for RSA.
pub(crate) fn prefer_known(preferred: &[Algorithm], known: &[Algorithm]) -> Vec<Algorithm> {
    let (mut first, rest): (Vec<Algorithm>, Vec<Algorithm>) = preferred
        .iter()
        .cloned()
        .partition(|algorithm| known.iter().any(|k| same_family(k, algorithm)));
    first.extend(rest);
    first
}

/// OpenSSH writes non-standard ports as `[host]:port`.
fn host_port_name(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_owned()
    } else {
        format!("[{host}]:{port}")
    }
}

fn patterns_match(patterns: &HostPatterns, name: &str) -> bool {
    match patterns {
        HostPatterns::HashedName { salt, hash } => {
            let Ok(mut mac) = Hmac::<Sha1>::new_from_slice(salt) else {
                return false;
            };
            mac.update(name.as_bytes());
            mac.verify_slice(hash).is_ok()
        }
        HostPatterns::Patterns(list) => {
            let mut matched = false;
            for pattern in list {
                if let Some(negated) = pattern.strip_prefix('!') {
                    if glob_match(negated, name) {
                        return false;
                    }
                } else if glob_match(pattern, name) {
                    matched = true;
                }
            }
            matched
        }
    }
}

/// OpenSSH host patterns: `*` any run, `?` one character, case-insensitive.
fn glob_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.to_lowercase().chars().collect();
    let name: Vec<char> = name.to_lowercase().chars().collect();
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(c) if *c == '?' || *c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_A: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAOwUaK+WnyHoHxwZScL/xkJN4MFNJ706Tc8IdHZM9+e";
    const KEY_B: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB6yMsubqer5F+9xRNzB5OUR9W+D/OcsvSzFuL0DWsNE";
    const KEY_ECDSA: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNudzCpmS8DZinO1cLsHlq/uJgVDBXKv+bzFrAt3xS6wrAYXPo7wk3xueMDVvPsMwHsDh97w+GexSPFIY7W1S3M=";

    fn key(text: &str) -> PublicKey {
        PublicKey::from_openssh(text).expect("test key parses")
    }

    fn file_with(text: &str) -> (tempfile::TempDir, KnownHosts) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("known_hosts");
        std::fs::write(&path, text).expect("write known_hosts");
        (dir, KnownHosts::only(path))
    }

    #[test]
    fn a_recorded_key_is_trusted_and_another_key_is_a_change_with_its_line() {
        let (_dir, hosts) = file_with(&format!(
            "# comment\n\ngarbage line\n[10.0.0.1]:2222 {KEY_A}\n"
        ));
        assert_eq!(
            hosts.check("10.0.0.1", 2222, &key(KEY_A)),
            HostKeyVerdict::Trusted
        );
        match hosts.check("10.0.0.1", 2222, &key(KEY_B)) {
            HostKeyVerdict::Changed { recorded } => {
                assert_eq!(recorded.len(), 1);
                assert_eq!(recorded[0].key, key(KEY_A), "the old key must be reported");
                assert_eq!(
                    recorded[0].line, 4,
                    "line numbers count blank and comment lines"
                );
            }
            other => panic!("a different key must be a change, got {other:?}"),
        }
        assert_eq!(
            hosts.check("10.0.0.1", 22, &key(KEY_A)),
            HostKeyVerdict::Unknown,
            "another port is another host"
        );
    }

    #[test]
    fn a_key_of_another_type_for_a_known_host_is_a_change_not_a_first_contact() {
        let (_dir, hosts) = file_with(&format!("[10.0.0.1]:2222 {KEY_A}\n"));
        match hosts.check("10.0.0.1", 2222, &key(KEY_ECDSA)) {
            HostKeyVerdict::Changed { recorded } => {
                assert_eq!(recorded.len(), 1);
                assert_eq!(
                    recorded[0].key,
                    key(KEY_A),
                    "the known ed25519 key is named"
                );
                assert_eq!(KnownKey::from(&recorded[0]).algorithm, "ssh-ed25519");
            }
            other => panic!("only another type offered must be a change, got {other:?}"),
        }
    }

    #[test]
    fn the_replaced_key_of_the_same_type_is_named_first() {
        let (_dir, hosts) = file_with(&format!(
            "[10.0.0.1]:2222 {KEY_ECDSA}\n[10.0.0.1]:2222 {KEY_A}\n"
        ));
        let HostKeyVerdict::Changed { recorded } = hosts.check("10.0.0.1", 2222, &key(KEY_B))
        else {
            panic!("a new ed25519 key is a change");
        };
        assert_eq!(recorded[0].key, key(KEY_A), "same type first");
        assert_eq!(
            recorded[1].key,
            key(KEY_ECDSA),
            "then the other recorded types"
        );
        assert_eq!(
            hosts.known_algorithms("10.0.0.1", 2222),
            vec![
                Algorithm::Ecdsa {
                    curve: russh::keys::EcdsaCurve::NistP256
                },
                Algorithm::Ed25519
            ]
        );
    }

    #[test]
    fn known_types_are_asked_for_first() {
        let default = [
            Algorithm::Ed25519,
            Algorithm::Ecdsa {
                curve: russh::keys::EcdsaCurve::NistP256,
            },
            Algorithm::Rsa {
                hash: Some(HashAlg::Sha512),
            },
            Algorithm::Rsa { hash: None },
        ];
        let rsa_known = prefer_known(&default, &[Algorithm::Rsa { hash: None }]);
        assert_eq!(
            rsa_known,
            vec![
                Algorithm::Rsa {
                    hash: Some(HashAlg::Sha512)
                },
                Algorithm::Rsa { hash: None },
                Algorithm::Ed25519,
                Algorithm::Ecdsa {
                    curve: russh::keys::EcdsaCurve::NistP256
                },
            ],
            "every RSA signature type moves up, in its own order"
        );
        assert_eq!(
            prefer_known(&default, &[]),
            default.to_vec(),
            "nothing known: as is"
        );
    }

    #[test]
    fn learned_keys_are_trusted_next_time_in_openssh_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hosts = KnownHosts::only(dir.path().join("sub").join("known_hosts"));
        assert_eq!(
            hosts.check("h.example", 2200, &key(KEY_A)),
            HostKeyVerdict::Unknown
        );
        hosts
            .learn("h.example", 2200, &key(KEY_A))
            .expect("learn writes the file");
        assert_eq!(
            hosts.check("h.example", 2200, &key(KEY_A)),
            HostKeyVerdict::Trusted
        );
        hosts
            .learn("other", 22, &key(KEY_B))
            .expect("a second host is appended");
        let text = std::fs::read_to_string(hosts.learn_into()).expect("file exists");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "one line per host, no blank lines: {text:?}"
        );
        assert!(
            lines[0].starts_with("[h.example]:2200 ssh-ed25519 "),
            "OpenSSH format: {text}"
        );
        assert!(lines[1].starts_with("other ssh-ed25519 "), "{text}");
    }

    #[test]
    fn hashed_wildcard_and_negated_patterns_match_like_openssh() {
        // `ssh-keygen -H` style entry for "[127.0.0.1]:2222".
        let mut mac = Hmac::<Sha1>::new_from_slice(b"0123456789abcdefghij").expect("hmac key");
        mac.update(b"[127.0.0.1]:2222");
        let hash = mac.finalize().into_bytes();
        use russh::keys::ssh_encoding::base64::{Base64, Encoding};
        let line = format!(
            "|1|{}|{} {KEY_A}\n*.lab,!evil.lab {KEY_B}\n",
            Base64::encode_string(b"0123456789abcdefghij"),
            Base64::encode_string(&hash)
        );
        let (_dir, hosts) = file_with(&line);
        assert_eq!(
            hosts.check("127.0.0.1", 2222, &key(KEY_A)),
            HostKeyVerdict::Trusted
        );
        assert_eq!(
            hosts.check("node1.lab", 22, &key(KEY_B)),
            HostKeyVerdict::Trusted
        );
        assert_eq!(
            hosts.check("evil.lab", 22, &key(KEY_B)),
            HostKeyVerdict::Unknown
        );
    }

    #[test]
    fn a_revoked_line_after_a_trusting_one_still_wins() {
        let (_dir, hosts) = file_with(&format!(
            "host.example {KEY_A}\n@revoked host.example {KEY_A}\n"
        ));
        assert!(
            matches!(
                hosts.check("host.example", 22, &key(KEY_A)),
                HostKeyVerdict::Revoked { .. }
            ),
            "OpenSSH refuses a revoked key whatever line trusts it"
        );
    }

    #[test]
    fn a_host_known_only_through_a_certificate_authority_is_not_a_first_contact() {
        let (_dir, hosts) = file_with(&format!("@cert-authority *.example {KEY_A}\n"));
        assert_eq!(
            hosts.check("gpu.example", 22, &key(KEY_B)),
            HostKeyVerdict::ByCertificateAuthority {
                file: hosts.learn_into().to_owned(),
                line: 1
            }
        );
        assert_eq!(
            hosts.check("other.net", 22, &key(KEY_B)),
            HostKeyVerdict::Unknown
        );
    }

    #[test]
    fn revoked_keys_are_refused() {
        let (_dir, hosts) = file_with(&format!("@revoked * {KEY_A}\n"));
        assert!(matches!(
            hosts.check("any", 22, &key(KEY_A)),
            HostKeyVerdict::Revoked { .. }
        ));
    }

    #[test]
    fn fingerprints_use_openssh_sha256_format() {
        assert!(fingerprint(&key(KEY_A)).starts_with("SHA256:"));
    }

    #[test]
    fn glob_matching_handles_stars_and_question_marks() {
        assert!(glob_match("*.autodl.com", "region-1.autodl.com"));
        assert!(glob_match("[10.0.0.?]:22*", "[10.0.0.5]:2222"));
        assert!(!glob_match("*.autodl.com", "autodl.com.evil"));
    }
}

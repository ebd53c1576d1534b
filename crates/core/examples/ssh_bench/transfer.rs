//! SFTP throughput: one large incompressible file down and up with each client, connection
//! included, every copy checked against the source's SHA-256 afterwards.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::host::{io, BenchHost, BenchResult};
use crate::report::{self, TransferFigures};
use crate::{leasehold, openssh};

pub fn figures(
    runtime: &tokio::runtime::Runtime,
    host: &BenchHost,
    megabytes: u64,
) -> BenchResult<()> {
    let remote = host.sshd.remote_dir();
    let local = host.root().join("local");
    fs::create_dir_all(&local).map_err(io("local dir"))?;
    let source = remote.join("source.bin");
    let expected = write_random_file(&source, megabytes * 1_000_000)?;

    let downloaded = local.join("openssh-down.bin");
    let openssh_down = openssh::sftp_batch(
        host,
        &format!(
            "get {} {}",
            openssh::sftp_word(&source),
            openssh::sftp_word(&downloaded)
        ),
    )?;
    check_same(&downloaded, &expected, "OpenSSH download")?;
    let uploaded = remote.join("openssh-up.bin");
    let openssh_up = openssh::sftp_batch(
        host,
        &format!(
            "put {} {}",
            openssh::sftp_word(&downloaded),
            openssh::sftp_word(&uploaded)
        ),
    )?;
    check_same(&uploaded, &expected, "OpenSSH upload")?;
    fs::remove_file(&uploaded).map_err(io("clean up"))?;

    let downloaded = local.join("leasehold-down.bin");
    let leasehold_down = runtime.block_on(leasehold::download(host, &source, &downloaded))?;
    check_same(&downloaded, &expected, "Leasehold download")?;
    let uploaded = remote.join("leasehold-up.bin");
    let leasehold_up = runtime.block_on(leasehold::upload(host, &downloaded, &uploaded))?;
    check_same(&uploaded, &expected, "Leasehold upload")?;
    fs::remove_file(&uploaded).map_err(io("clean up"))?;

    report::print_transfers(&TransferFigures {
        megabytes,
        openssh_down,
        openssh_up,
        leasehold: Some((leasehold_down, leasehold_up)),
    });
    Ok(())
}

/// Incompressible data, so no client gains from compression; returns its SHA-256.
fn write_random_file(path: &Path, bytes: u64) -> BenchResult<String> {
    let mut random = fs::File::open("/dev/urandom").map_err(io("/dev/urandom"))?;
    let mut file = std::io::BufWriter::new(fs::File::create(path).map_err(io("test file"))?);
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let take = usize::try_from(left.min(chunk.len() as u64)).unwrap_or(chunk.len());
        random
            .read_exact(&mut chunk[..take])
            .map_err(io("/dev/urandom"))?;
        file.write_all(&chunk[..take]).map_err(io("test file"))?;
        hasher.update(&chunk[..take]);
        left -= take as u64;
    }
    file.flush().map_err(io("test file"))?;
    Ok(hex::encode(hasher.finalize()))
}

fn check_same(path: &Path, expected: &str, what: &str) -> BenchResult<()> {
    let mut file = fs::File::open(path).map_err(io("transferred file"))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(io("transferred file"))?;
    let actual = hex::encode(hasher.finalize());
    if actual == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}: checksum {actual} differs from the source's {expected}"
        ))
    }
}

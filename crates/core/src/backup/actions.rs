//! The other ways to save work: the environment exported to this computer, `git push` run in a
//! repository on the instance, and a copy into the provider's file storage. Each is recorded
//! as a backup of its own.

use std::path::Path;
use std::time::Duration;

use super::packed::shell_path;
use super::provider::ProviderStorage;
use super::record::{self, BackupItem, BackupRecord, ItemKind};
use super::run::sha256_of;
use super::BackupError;
use crate::clock::Clock;
use crate::install::export_setup;
use crate::job::record::succeeded_recipes;
use crate::shell::quote;
use crate::ssh::SshTarget;
use crate::store::Store;
use crate::target::CommandSpec;

/// Most bytes of `git push` output kept.
const PUSH_OUTPUT_CAP: usize = 64 * 1024;

fn write_file(path: &Path, text: &str) -> Result<BackupItem, BackupError> {
    std::fs::write(path, text).map_err(|err| BackupError::local(path, &err))?;
    Ok(BackupItem {
        kind: ItemKind::Environment,
        remote_path: String::new(),
        local_path: Some(path.display().to_string()),
        files: 1,
        bytes: text.len() as u64,
        sha256: Some(sha256_of(path)?),
        detail: None,
    })
}

/// Save `conda env export` of every environment, `pip freeze`, and (for a recorded instance)
/// the setup script of the recipes run, into `local_dir/environment/`.
pub async fn export_environment(
    store: &Store,
    target: &SshTarget,
    instance: Option<&str>,
    local_dir: &Path,
    clock: &dyn Clock,
) -> Result<BackupRecord, BackupError> {
    let started_at = clock.now();
    let dir = local_dir.join("environment");
    std::fs::create_dir_all(&dir).map_err(|err| BackupError::LocalFolder {
        path: dir.clone(),
        message: err.to_string(),
    })?;
    // Sections split by a line no environment file contains.
    let script = r#"if command -v conda >/dev/null 2>&1; then
  conda env list 2>/dev/null | awk '!/^#/ && NF {print $NF}' | while IFS= read -r e; do
    printf '\n@@leasehold conda %s\n' "$e"; conda env export -p "$e" 2>/dev/null
  done
fi
py=$(command -v python3 || command -v python) && { printf '\n@@leasehold pip %s\n' "$py"; "$py" -m pip freeze 2>/dev/null; }
true"#;
    let output = target
        .exec(
            &CommandSpec::new(script)
                .login_shell()
                .timeout(Duration::from_secs(600)),
        )
        .await?;
    let mut items = Vec::new();
    let text = output.stdout_text();
    for section in text.split("\n@@leasehold ").skip(1) {
        let (header, body) = section.split_once('\n').unwrap_or((section, ""));
        let (kind, path) = header.split_once(' ').unwrap_or((header, ""));
        let stem: String = path
            .rsplit('/')
            .next()
            .unwrap_or("env")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stem = stem.trim_start_matches('.');
        let file = match kind {
            "conda" => format!("conda-{}.yml", if stem.is_empty() { "env" } else { stem }),
            "pip" => "pip-freeze.txt".to_owned(),
            _ => continue,
        };
        let mut item = write_file(&dir.join(file), body)?;
        item.remote_path = path.to_owned();
        items.push(item);
    }
    if let Some(name) = instance {
        if let Ok(jobs) = succeeded_recipes(store, name).await {
            let runs: Vec<_> = jobs
                .into_iter()
                .filter_map(|job| Some((job.recipe?, job.updated_at, job.script)))
                .collect();
            if !runs.is_empty() {
                let mut item = write_file(&dir.join("setup.sh"), &export_setup(name, &runs))?;
                item.remote_path = "leasehold recipes".to_owned();
                items.push(item);
            }
        }
    }
    record::save(
        store,
        instance,
        &target.destination().label(),
        local_dir,
        started_at,
        clock.now(),
        items,
    )
    .await
}

/// Run `git push` in repository `repo` on the instance; its output is kept with the record.
pub async fn git_push(
    store: &Store,
    target: &SshTarget,
    instance: Option<&str>,
    repo: &str,
    clock: &dyn Clock,
) -> Result<BackupRecord, BackupError> {
    let started_at = clock.now();
    // Never wait for a password prompt nobody can answer.
    let script = format!(
        "cd -- {} && GIT_TERMINAL_PROMPT=0 GIT_SSH_COMMAND='ssh -o BatchMode=yes' git -c safe.directory='*' push 2>&1",
        quote(&shell_path(repo))
    );
    let output = target
        .exec(
            &CommandSpec::new(script)
                .login_shell()
                .timeout(Duration::from_secs(600))
                .output_cap(PUSH_OUTPUT_CAP),
        )
        .await?;
    let said = output.stdout_text().trim().to_owned();
    if !output.success() {
        return Err(BackupError::PushFailed {
            path: repo.to_owned(),
            message: said,
        });
    }
    let item = BackupItem {
        kind: ItemKind::GitPush,
        remote_path: repo.to_owned(),
        local_path: None,
        files: 0,
        bytes: 0,
        sha256: None,
        detail: Some(said),
    };
    record::save(
        store,
        instance,
        &target.destination().label(),
        Path::new(""),
        started_at,
        clock.now(),
        vec![item],
    )
    .await
}

/// Copy `path` into the file storage of recorded instance `name`'s provider (the Back up page's
/// action): [`copy_to_file_storage`] with the storage its provider has.
pub async fn copy_to_instance_file_storage(
    store: &Store,
    target: &SshTarget,
    name: &str,
    path: &str,
    clock: &dyn Clock,
) -> Result<BackupRecord, BackupError> {
    let context = super::InstanceContext::load(store, name, clock.now()).await?;
    copy_to_file_storage(store, target, Some(name), &context.storage, path, clock).await
}

/// Copy `path` into the provider's file storage (`<storage>/leasehold-backup/<time>/`).
pub async fn copy_to_file_storage(
    store: &Store,
    target: &SshTarget,
    instance: Option<&str>,
    storage: &ProviderStorage,
    path: &str,
    clock: &dyn Clock,
) -> Result<BackupRecord, BackupError> {
    let root = storage
        .file_storage
        .as_deref()
        .ok_or(BackupError::NoFileStorage)?;
    let started_at = clock.now();
    let into = format!(
        "{}/leasehold-backup/{}",
        root.trim_end_matches('/'),
        started_at.format("%Y%m%dT%H%M%SZ")
    );
    let script = format!(
        "mkdir -p -- {into} && cp -a -- {path} {into}/ && du -sb -- {into} | cut -f1",
        into = quote(&into),
        path = quote(&shell_path(path)),
    );
    let output = target
        .exec(&CommandSpec::new(script).timeout(Duration::from_secs(24 * 3600)))
        .await?;
    if !output.success() {
        return Err(BackupError::PackFailed {
            path: path.to_owned(),
            message: output.stderr_text().trim().to_owned(),
        });
    }
    let item = BackupItem {
        kind: ItemKind::FileStorage,
        remote_path: path.to_owned(),
        local_path: None,
        files: 0,
        bytes: output.stdout_text().trim().parse().unwrap_or(0),
        sha256: None,
        detail: Some(format!("copied into {into} on the instance")),
    };
    record::save(
        store,
        instance,
        &target.destination().label(),
        Path::new(""),
        started_at,
        clock.now(),
        vec![item],
    )
    .await
}

//! Jobs as rows in the database: what `job start` (or an install) used to reach the instance,
//! so `attach`, `status` and `cancel` from any later process connect the same way, plus the
//! last state and log offset seen.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::Serialize;
use ts_rs::TS;

use super::{JobError, JobId, JobState, JobStatus};
use crate::ssh::{ConnectRequest, Secret};
use crate::store::{jobs, ledger, Store};

/// One job as recorded here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct JobRecord {
    pub id: String,
    /// The recorded instance it ran on, when the user named one.
    pub instance: Option<String>,
    /// `user@host:port`.
    pub target: String,
    pub ssh_command: String,
    pub identity_files: Vec<String>,
    pub known_hosts: Option<String>,
    pub name: Option<String>,
    /// The install recipe, or `None` for a plain command.
    pub recipe: Option<String>,
    pub options: BTreeMap<String, String>,
    #[serde(skip)]
    pub script: String,
    pub state: JobState,
    pub exit_code: Option<i32>,
    #[ts(type = "number")]
    pub log_bytes: u64,
    /// Log bytes already delivered; the next attach of the app continues here.
    #[ts(type = "number")]
    pub last_offset: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl JobRecord {
    pub fn job_id(&self) -> Result<JobId, JobError> {
        JobId::parse(&self.id)
    }

    /// How to reach the instance again: what `job start` used, with a password given again
    /// (from `--password-env`) or found in the keychain by `ConnectRequest::connect`.
    pub fn connect_request(&self, password: Option<Secret>) -> ConnectRequest {
        ConnectRequest {
            ssh_command: self.ssh_command.clone(),
            identity_files: self.identity_files.iter().map(PathBuf::from).collect(),
            known_hosts: self.known_hosts.as_ref().map(PathBuf::from),
            // The first connect recorded the host key; a later one must match it.
            accept_new_host_key: false,
            password,
            connect_timeout: None,
            boot_wait: std::time::Duration::ZERO,
        }
    }
}

/// What a new job row needs; state starts as `running`.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub id: &'a JobId,
    pub instance: Option<&'a str>,
    pub target: &'a str,
    pub request: &'a ConnectRequest,
    pub name: Option<&'a str>,
    pub recipe: Option<&'a str>,
    pub options: &'a BTreeMap<String, String>,
    pub script: &'a str,
    pub now: DateTime<Utc>,
}

fn corrupt(what: &str) -> JobError {
    JobError::Corrupt(what.to_owned())
}

async fn instance_id(store: &Store, name: &str) -> Result<Option<i64>, JobError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    Ok(ledger::find_instance(&mut conn, name)
        .await?
        .map(|row| row.id))
}

/// Refuse an instance name that is not recorded (bad input), before anything starts.
pub async fn check_instance(store: &Store, name: &str) -> Result<(), JobError> {
    match instance_id(store, name).await? {
        Some(_) => Ok(()),
        None => Err(JobError::UnknownInstance(name.to_owned())),
    }
}

/// Start the job on `target` and record it (the CLI's `job start` and `install`, the app's
/// Install page). The instance name is checked before anything starts.
pub async fn start_recorded(
    store: &Store,
    target: &dyn crate::target::Target,
    root: &super::JobRoot,
    job: &NewJob<'_>,
) -> Result<JobStatus, JobError> {
    if let Some(name) = job.instance {
        check_instance(store, name).await?;
    }
    let status = super::start(target, root, job.id, job.script).await?;
    insert(store, job).await?;
    Ok(status)
}

/// Insert the row of a job that was just started.
pub async fn insert(store: &Store, job: &NewJob<'_>) -> Result<(), JobError> {
    let instance_id = match job.instance {
        Some(name) => Some(
            instance_id(store, name)
                .await?
                .ok_or_else(|| JobError::UnknownInstance(name.to_owned()))?,
        ),
        None => None,
    };
    let identity: Vec<String> = job
        .request
        .identity_files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let row = jobs::JobRow {
        id: job.id.to_string(),
        instance_id,
        target: job.target.to_owned(),
        ssh_command: job.request.ssh_command.clone(),
        identity_files: serde_json::to_string(&identity).map_err(|e| corrupt(&e.to_string()))?,
        known_hosts: job
            .request
            .known_hosts
            .as_ref()
            .map(|p| p.display().to_string()),
        name: job.name.map(str::to_owned),
        recipe: job.recipe.map(str::to_owned),
        options: serde_json::to_string(job.options).map_err(|e| corrupt(&e.to_string()))?,
        script: job.script.to_owned(),
        state: JobState::Running.as_str().to_owned(),
        exit_code: None,
        log_bytes: 0,
        last_offset: 0,
        created_at: job.now,
        updated_at: job.now,
    };
    let mut tx = store.write().await?;
    jobs::insert(&mut tx, &row).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(())
}

async fn decode(store: &Store, row: jobs::JobRow) -> Result<JobRecord, JobError> {
    let instance = match row.instance_id {
        Some(id) => {
            let mut conn = store
                .pool()
                .acquire()
                .await
                .map_err(crate::store::StoreError::from)?;
            crate::store::ledger::instance_name(&mut conn, id).await?
        }
        None => None,
    };
    Ok(JobRecord {
        state: JobState::parse(&row.state).ok_or_else(|| corrupt(&row.state))?,
        identity_files: serde_json::from_str(&row.identity_files)
            .map_err(|_| corrupt("identity_files"))?,
        options: serde_json::from_str(&row.options).map_err(|_| corrupt("options"))?,
        exit_code: row.exit_code.and_then(|c| i32::try_from(c).ok()),
        log_bytes: u64::try_from(row.log_bytes).unwrap_or(0),
        last_offset: u64::try_from(row.last_offset).unwrap_or(0),
        id: row.id,
        instance,
        target: row.target,
        ssh_command: row.ssh_command,
        known_hosts: row.known_hosts,
        name: row.name,
        recipe: row.recipe,
        script: row.script,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The job `id`; a malformed id or one never recorded here is bad input.
pub async fn load(store: &Store, id: &str) -> Result<JobRecord, JobError> {
    JobId::parse(id)?;
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let row = jobs::find(&mut conn, id)
        .await?
        .ok_or_else(|| JobError::UnknownJob(id.to_owned()))?;
    drop(conn);
    decode(store, row).await
}

/// Every job, oldest first.
pub async fn list(store: &Store) -> Result<Vec<JobRecord>, JobError> {
    let mut conn = store
        .pool()
        .acquire()
        .await
        .map_err(crate::store::StoreError::from)?;
    let rows = jobs::list(&mut conn).await?;
    drop(conn);
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(decode(store, row).await?);
    }
    Ok(out)
}

/// Keep a state just read from the instance.
pub async fn save_status(
    store: &Store,
    status: &JobStatus,
    now: DateTime<Utc>,
) -> Result<(), JobError> {
    let mut tx = store.write().await?;
    jobs::update_state(
        &mut tx,
        &status.id,
        status.state.as_str(),
        status.exit_code.map(i64::from),
        i64::try_from(status.log_bytes).unwrap_or(i64::MAX),
        now,
    )
    .await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(())
}

/// Keep how far the log was delivered (never moves back).
pub async fn save_offset(
    store: &Store,
    id: &str,
    offset: u64,
    now: DateTime<Utc>,
) -> Result<(), JobError> {
    let mut tx = store.write().await?;
    jobs::update_offset(&mut tx, id, i64::try_from(offset).unwrap_or(i64::MAX), now).await?;
    tx.commit().await.map_err(crate::store::StoreError::from)?;
    Ok(())
}

/// Recipe jobs that succeeded on an instance, oldest first: what export-setup replays.
/// `instance` is a recorded instance name or a target (`user@host:port`, or just the host).
pub async fn succeeded_recipes(store: &Store, instance: &str) -> Result<Vec<JobRecord>, JobError> {
    let all = list(store).await?;
    let matches = |job: &JobRecord| {
        job.instance.as_deref() == Some(instance)
            || job.target == instance
            || job
                .target
                .rsplit_once('@')
                .and_then(|(_, host_port)| host_port.rsplit_once(':'))
                .is_some_and(|(host, _)| host.trim_matches(['[', ']']) == instance)
    };
    if !all.iter().any(&matches) {
        return Err(JobError::UnknownInstance(instance.to_owned()));
    }
    Ok(all
        .into_iter()
        .filter(|job| matches(job) && job.recipe.is_some() && job.state == JobState::Succeeded)
        .collect())
}

/// The jobs of one recorded instance, oldest first.
pub async fn list_for_instance(store: &Store, instance: &str) -> Result<Vec<JobRecord>, JobError> {
    check_instance(store, instance).await?;
    Ok(list(store)
        .await?
        .into_iter()
        .filter(|job| job.instance.as_deref() == Some(instance))
        .collect())
}

/// Attach to a recorded job and keep its final state and how far its log was delivered;
/// `on_link` hears when the link is lost and back (the job goes on meanwhile).
pub async fn attach_recorded(
    store: &Store,
    target: &dyn crate::target::Target,
    id: &str,
    offset: &mut u64,
    sink: &mut (dyn FnMut(&[u8]) + Send),
    on_link: &mut (dyn FnMut(super::LinkChange) + Send),
    clock: &dyn crate::clock::Clock,
) -> Result<JobStatus, JobError> {
    let ended = attach_recorded_until(
        store,
        target,
        id,
        offset,
        sink,
        on_link,
        clock,
        std::future::pending(),
    )
    .await?;
    Ok(ended.expect("a pending shutdown never comes"))
}

/// [`attach_recorded`] until the job ends or `shutdown` comes (the CLI's Ctrl-C: the job goes
/// on, and `None` says so). Either way the offset reached is kept for the next attach.
// The job, where its log goes, who hears of the link, the clock and the stop signal are each
// their own; bundling them would only rename the list.
#[allow(clippy::too_many_arguments)]
pub async fn attach_recorded_until(
    store: &Store,
    target: &dyn crate::target::Target,
    id: &str,
    offset: &mut u64,
    sink: &mut (dyn FnMut(&[u8]) + Send),
    on_link: &mut (dyn FnMut(super::LinkChange) + Send),
    clock: &dyn crate::clock::Clock,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Option<JobStatus>, JobError> {
    let job = load(store, id).await?.job_id()?;
    let result = {
        let attach = super::attach_watching(
            target,
            &super::JobRoot::Home,
            &job,
            offset,
            sink,
            super::AttachOptions::default(),
            on_link,
        );
        tokio::select! {
            result = attach => Some(result),
            () = shutdown => None,
        }
    };
    save_offset(store, id, *offset, clock.now()).await?;
    let Some(result) = result else {
        return Ok(None);
    };
    let status = result?;
    save_status(store, &status, clock.now()).await?;
    Ok(Some(status))
}

/// Cancel a recorded job and keep its new state.
pub async fn cancel_recorded(
    store: &Store,
    target: &dyn crate::target::Target,
    id: &str,
    clock: &dyn crate::clock::Clock,
) -> Result<super::CancelReport, JobError> {
    let job = load(store, id).await?.job_id()?;
    let report = super::cancel(
        target,
        &super::JobRoot::Home,
        &job,
        std::time::Duration::from_secs(5),
    )
    .await?;
    save_status(store, &report.status, clock.now()).await?;
    Ok(report)
}

/// Read the state of every job of `instance` still recorded as running from the instance and
/// keep it (after an app restart or a reconnect: a job may have ended, or been lost, meanwhile).
/// Returns the instance's jobs, oldest first. A job whose state cannot be read stays as it was.
pub async fn refresh_running(
    store: &Store,
    target: &dyn crate::target::Target,
    instance: &str,
    clock: &dyn crate::clock::Clock,
) -> Result<Vec<JobRecord>, JobError> {
    for job in list_for_instance(store, instance).await? {
        if job.state != JobState::Running {
            continue;
        }
        match super::status(target, &super::JobRoot::Home, &job.job_id()?).await {
            Ok(now) => save_status(store, &now, clock.now()).await?,
            Err(JobError::Target(err)) => {
                tracing::info!(job = %job.id, %err, "job state not readable now; kept as running");
            }
            Err(err) => return Err(err),
        }
    }
    list_for_instance(store, instance).await
}

//! Following jobs in the background: an install runs for many minutes, and its user switches to
//! other work meanwhile. While the app runs, each round reads again every job recorded as
//! running whose instance has an open connection, saves the ones that ended and returns them, so
//! the app can tell the user (a desktop notification, the Install page's list) even when nobody
//! had the job open. It never dials: an instance without a connection waits for the next round,
//! and the Install page reads its jobs again when opened. A job is reported once per run of the
//! app, whichever path saw it end.

use std::collections::{BTreeMap, HashSet};

use crate::clock::Clock;
use crate::connect::LiveTargets;
use crate::job::record::{self, JobRecord};
use crate::job::{self, JobError, JobRoot, JobState};
use crate::store::Store;

/// The watch's memory between rounds: the jobs it last saw running. A job can also end through
/// another path (the Install page following it, even after the page was left, or reading the
/// instance's jobs again); the next round reports it all the same, once.
#[derive(Debug, Default)]
pub struct JobWatch {
    running: HashSet<String>,
}

impl JobWatch {
    /// One round: the jobs that ended since the last round, with their state saved.
    pub async fn round(
        &mut self,
        store: &Store,
        live: &LiveTargets,
        clock: &dyn Clock,
    ) -> Result<Vec<JobRecord>, JobError> {
        let jobs = record::list(store).await?;
        let mut ended: Vec<JobRecord> = jobs
            .iter()
            .filter(|job| job.state != JobState::Running && self.running.contains(&job.id))
            .cloned()
            .collect();
        let mut by_instance: BTreeMap<String, Vec<JobRecord>> = BTreeMap::new();
        for job in jobs {
            if job.state != JobState::Running {
                continue;
            }
            if let Some(instance) = job.instance.clone() {
                by_instance.entry(instance).or_default().push(job);
            }
        }
        let mut still_running = HashSet::new();
        for (instance, jobs) in by_instance {
            let target = live.get(&instance).await;
            for job in jobs {
                match &target {
                    Some(target) => match read_end(store, target.as_ref(), &job, clock).await? {
                        Some(done) => ended.push(done),
                        None => {
                            still_running.insert(job.id);
                        }
                    },
                    None => {
                        still_running.insert(job.id);
                    }
                }
            }
        }
        self.running = still_running;
        Ok(ended)
    }
}

/// Read `job`'s state on the instance; once it is over, save it and return the record.
async fn read_end(
    store: &Store,
    target: &dyn crate::target::Target,
    job: &JobRecord,
    clock: &dyn Clock,
) -> Result<Option<JobRecord>, JobError> {
    let status = match job::status(target, &JobRoot::Home, &job.job_id()?).await {
        Ok(status) => status,
        Err(JobError::Target(err)) => {
            tracing::info!(job = %job.id, %err, "job state not readable now; next round");
            return Ok(None);
        }
        Err(err) => return Err(err),
    };
    if status.state == JobState::Running {
        return Ok(None);
    }
    record::save_status(store, &status, clock.now()).await?;
    Ok(Some(record::load(store, &job.id).await?))
}

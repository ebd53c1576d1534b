//! When an update may install: never while work that a restart would cut is running (a backup
//! downloading, a recipe being followed, a stop waiting for its confirmation, a release being
//! recorded). What runs is counted by [`RunningWork`]; whether to wait is [`may_install`], pure.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;
use ts_rs::TS;

/// Work a restart would cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Activity {
    Backup,
    InstallFollow,
    Stop,
    Release,
}

/// Whether an update may install now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "state", rename_all = "snake_case")]
#[ts(export)]
pub enum Readiness {
    Ready,
    /// Wait until these end (each named once, in a fixed order).
    Wait {
        for_activities: Vec<Activity>,
    },
}

/// Ready when nothing a restart would cut is running.
pub fn may_install(running: &[Activity]) -> Readiness {
    let mut waiting: Vec<Activity> = running.to_vec();
    waiting.sort_unstable();
    waiting.dedup();
    if waiting.is_empty() {
        Readiness::Ready
    } else {
        Readiness::Wait {
            for_activities: waiting,
        }
    }
}

/// What is running now, counted per kind; each run holds a [`WorkGuard`] for its length.
#[derive(Debug, Default)]
pub struct RunningWork {
    /// A std mutex: held to count, never across `.await`.
    counts: Mutex<BTreeMap<Activity, usize>>,
    changed: tokio::sync::Notify,
}

/// Counts one run of an activity until dropped (whichever way the run ends).
#[must_use = "the activity counts only while the guard is held"]
pub struct WorkGuard<'a> {
    work: &'a RunningWork,
    activity: Activity,
}

impl RunningWork {
    pub fn begin(&self, activity: Activity) -> WorkGuard<'_> {
        *self.lock().entry(activity).or_default() += 1;
        WorkGuard {
            work: self,
            activity,
        }
    }

    /// The kinds running now.
    pub fn running(&self) -> Vec<Activity> {
        self.lock()
            .iter()
            .filter(|(_, count)| **count > 0)
            .map(|(activity, _)| *activity)
            .collect()
    }

    pub fn readiness(&self) -> Readiness {
        may_install(&self.running())
    }

    /// Returns once nothing a restart would cut is running; `waiting` is told what it waits for
    /// each time that changes.
    pub async fn until_ready(&self, mut waiting: impl FnMut(&[Activity])) {
        let mut told: Option<Vec<Activity>> = None;
        loop {
            // Registered before reading, so an end between the read and the wait is not missed.
            let changed = self.changed.notified();
            match self.readiness() {
                Readiness::Ready => return,
                Readiness::Wait { for_activities } => {
                    if told.as_ref() != Some(&for_activities) {
                        waiting(&for_activities);
                        told = Some(for_activities);
                    }
                }
            }
            changed.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Activity, usize>> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for WorkGuard<'_> {
    fn drop(&mut self) {
        {
            let mut counts = self.work.lock();
            if let Some(count) = counts.get_mut(&self.activity) {
                *count = count.saturating_sub(1);
            }
        }
        self.work.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn an_update_waits_for_each_kind_of_work_and_names_it_once() {
        use Activity::*;
        let cases: &[(&[Activity], Readiness)] = &[
            (&[], Readiness::Ready),
            (
                &[Backup],
                Readiness::Wait {
                    for_activities: vec![Backup],
                },
            ),
            (
                &[Release, Stop, Release, InstallFollow],
                Readiness::Wait {
                    for_activities: vec![InstallFollow, Stop, Release],
                },
            ),
        ];
        for (running, expected) in cases {
            assert_eq!(&may_install(running), expected, "{running:?}");
        }
    }

    #[tokio::test]
    async fn waiting_ends_when_the_last_run_ends() {
        let work = Arc::new(RunningWork::default());
        let backup = work.begin(Activity::Backup);
        let stop = work.begin(Activity::Stop);
        assert_eq!(work.running(), [Activity::Backup, Activity::Stop]);
        let (told_tx, mut told_rx) = tokio::sync::mpsc::unbounded_channel();
        let waiter = {
            let work = work.clone();
            tokio::spawn(async move {
                work.until_ready(|what| {
                    let _ = told_tx.send(what.to_vec());
                })
                .await;
            })
        };
        assert_eq!(
            told_rx.recv().await,
            Some(vec![Activity::Backup, Activity::Stop])
        );
        drop(backup);
        assert_eq!(told_rx.recv().await, Some(vec![Activity::Stop]));
        assert!(!waiter.is_finished());
        drop(stop);
        waiter.await.expect("the wait ends");
        assert_eq!(work.readiness(), Readiness::Ready);
    }
}

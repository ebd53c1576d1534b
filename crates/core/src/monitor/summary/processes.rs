//! The compute processes of the last ten minutes without keeping every look: the latest list,
//! and every other process once, as it was the last time it was seen.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::TREND;
use crate::monitor::sample::{ComputeProcess, ProcessList};

/// Most processes remembered besides the latest list (an instance that starts thousands of short
/// GPU processes must not grow the app).
const MAX_SEEN: usize = 1024;

#[derive(Debug, Default, Clone)]
pub struct SeenProcesses {
    latest: Option<ProcessList>,
    /// By PID: the process as last seen before the latest list, and when.
    earlier: BTreeMap<u32, (ComputeProcess, DateTime<Utc>)>,
}

impl SeenProcesses {
    /// Add a look (looks come oldest first) and forget what was last seen more than ten minutes
    /// before it.
    pub fn push(&mut self, look: ProcessList) {
        if let Some(previous) = self.latest.take() {
            for process in previous.processes {
                self.earlier.insert(process.pid, (process, previous.at));
            }
        }
        let from = look.at - TREND;
        self.earlier.retain(|_, (_, seen)| *seen >= from);
        if self.earlier.len() > MAX_SEEN {
            let mut by_age: Vec<(DateTime<Utc>, u32)> = self
                .earlier
                .iter()
                .map(|(pid, (_, seen))| (*seen, *pid))
                .collect();
            by_age.sort_unstable();
            let excess = by_age.len() - MAX_SEEN;
            for (_, pid) in by_age.into_iter().take(excess) {
                self.earlier.remove(&pid);
            }
        }
        self.latest = Some(look);
    }

    pub fn latest(&self) -> Option<&ProcessList> {
        self.latest.as_ref()
    }

    /// Processes seen within ten minutes before the latest list, each with when it was last
    /// seen, by PID.
    pub fn earlier(&self) -> impl Iterator<Item = (&ComputeProcess, DateTime<Utc>)> {
        self.earlier
            .values()
            .map(|(process, seen)| (process, *seen))
    }

    pub fn len(&self) -> usize {
        self.earlier.len() + usize::from(self.latest.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

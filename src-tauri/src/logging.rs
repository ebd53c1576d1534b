//! Where the app's diagnostics go: a daily-rotating file in the app-data log folder, so a user can
//! attach it to a bug report. Arguments that may carry secrets are skipped at each `instrument`.

use std::path::Path;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;

/// How many daily files to keep; older ones are deleted by the appender.
const KEPT_LOG_FILES: usize = 7;

/// Lines waiting for the writer thread. The appender's default (128 000) allocates and touches a
/// 4 MiB queue at start-up, a twentieth of the app process's idle memory; the writer drains a
/// desktop app's few lines a second long before a few thousand pile up (past that, lines are
/// dropped rather than the caller blocked, as with the default).
const BUFFERED_LINES: usize = 4_096;

/// Installs the global subscriber writing to `dir`. The returned guard flushes the writer when
/// dropped, so the caller keeps it alive for the life of the app. `RUST_LOG` overrides the level.
pub fn init(dir: &Path) -> Result<WorkerGuard, String> {
    std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix("leasehold")
        .filename_suffix("log")
        .max_log_files(KEPT_LOG_FILES)
        .build(dir)
        .map_err(|err| err.to_string())?;
    let (writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(BUFFERED_LINES)
        .finish(appender);
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,leasehold_app=debug,leasehold_core=debug"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .map_err(|err| err.to_string())?;
    Ok(guard)
}

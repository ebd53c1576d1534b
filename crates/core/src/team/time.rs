//! Times that arrive from the team's server, in the one form the local ledger stores. Why a
//! module of its own: the pull's row checks and the conflict resolutions both take such times,
//! and neither should depend on the other for it.

use chrono::{DateTime, Utc};

/// `time` in the one form the local ledger stores (RFC 3339 in UTC, as sqlx writes a
/// `DateTime<Utc>`), so that text order is time order in every replay's `ORDER BY at`. A time
/// with an offset names a real instant, so it is taken, in that form.
pub fn canonical_time(time: &str) -> Result<String, String> {
    DateTime::parse_from_rfc3339(time)
        .map(|t| {
            t.with_timezone(&Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
        })
        .map_err(|_| format!("{time:?} is not a time"))
}

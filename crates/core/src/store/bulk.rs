//! Reading tens of thousands of rows at once (a team's whole working copy, a push's chunk).
//!
//! sqlx hands SQLite rows over one at a time from its worker thread, a few microseconds each,
//! which is most of the cost of reading 100 000 events. Here SQLite builds the rows into one JSON
//! array (`json_group_array`) and a single text value crosses over, parsed by serde in one go.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::de::DeserializeOwned;

use super::StoreError;

/// Parse the JSON array a `SELECT json_group_array(…)` returned (`None`: it had no rows).
pub fn json_rows<T: DeserializeOwned>(
    what: &'static str,
    doc: Option<String>,
) -> Result<Vec<T>, StoreError> {
    let Some(doc) = doc else {
        return Ok(Vec::new());
    };
    serde_json::from_str(&doc).map_err(|err| StoreError::Corrupt {
        what,
        value: err.to_string(),
    })
}

/// A time as the ledger stores it: RFC 3339 as sqlx writes it, or one of the SQLite forms sqlx
/// also reads (rows written by older versions or by hand).
pub fn stored_time(what: &'static str, text: &str) -> Result<DateTime<Utc>, StoreError> {
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    const WITH_OFFSET: [&str; 2] = ["%F %T%.f%:z", "%FT%T%.f%:z"];
    const WITHOUT_OFFSET: [&str; 4] = ["%F %T%.f", "%FT%T%.f", "%F %T%.fZ", "%FT%T%.fZ"];
    for format in WITH_OFFSET {
        if let Ok(time) = DateTime::parse_from_str(text, format) {
            return Ok(time.with_timezone(&Utc));
        }
    }
    for format in WITHOUT_OFFSET {
        if let Ok(time) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(time.and_utc());
        }
    }
    Err(StoreError::Corrupt {
        what,
        value: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_read_as_sqlx_reads_them() {
        let expected = "2026-03-01T08:30:15.250Z".parse::<DateTime<Utc>>().unwrap();
        for text in [
            "2026-03-01T08:30:15.250+00:00",
            "2026-03-01T16:30:15.25+08:00",
            "2026-03-01 08:30:15.250",
            "2026-03-01 08:30:15.25+00:00",
            "2026-03-01T08:30:15.250Z",
        ] {
            assert_eq!(stored_time("t", text).unwrap(), expected, "{text}");
        }
        assert!(stored_time("t", "yesterday").is_err());
    }
}

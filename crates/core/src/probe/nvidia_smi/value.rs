//! One nvidia-smi field value, in any of the forms the tool prints it.
//!
//! The same reading appears as `46068 MiB` (CSV with units, XML), `46068` (CSV `nounits`),
//! `46068MiB` (the table), `[N/A]` / `N/A` / `[Not Supported]` (no reading) or `ERR!` /
//! `[Unknown Error]` / `[GPU is lost]` (the GPU failed to answer). Keeping "no reading" apart
//! from "the GPU failed" is what lets a GPU be marked as being in an error state.

/// What a raw field says, before it is turned into a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading<'a> {
    Value(&'a str),
    /// `N/A`, `[Not Supported]`, an empty cell: nothing to report, nothing wrong.
    Missing,
    /// `ERR!`, `[Unknown Error]`, `[GPU is lost]`: the GPU did not answer.
    Failed,
}

pub(crate) fn read(raw: &str) -> Reading<'_> {
    let text = raw.trim();
    if text.is_empty() {
        return Reading::Missing;
    }
    if is_failure(text) {
        return Reading::Failed;
    }
    let unbracketed = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    if unbracketed.eq_ignore_ascii_case("N/A")
        || text.starts_with('[')
        || unbracketed.eq_ignore_ascii_case("Not Supported")
        || unbracketed.eq_ignore_ascii_case("Not Available")
    {
        return Reading::Missing;
    }
    Reading::Value(text)
}

/// True when the text is one of the markers nvidia-smi prints for a GPU that failed to answer.
pub(crate) fn is_failure(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("err!") || lower.contains("unknown error") || lower.contains("gpu is lost")
}

/// The number at the start of a reading, with any unit (`MiB`, `W`, `%`, `C`, `MHz`, `x`) dropped.
fn leading_number(text: &str) -> Option<&str> {
    let end = text
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+'))))
        .map_or(text.len(), |(i, _)| i);
    let number = &text[..end];
    (!number.is_empty() && number != "-" && number != "+").then_some(number)
}

/// A whole number reading (`24564MiB`, `64 %`, `47`, `16x`); `None` when absent or unreadable.
pub(crate) fn integer(raw: &str) -> Option<u64> {
    match read(raw) {
        Reading::Value(text) => {
            let number = leading_number(text)?;
            number
                .parse::<u64>()
                .ok()
                .or_else(|| number.parse::<f64>().ok().and_then(whole))
        }
        _ => None,
    }
}

/// A signed whole number (temperatures can in principle be negative).
pub(crate) fn signed(raw: &str) -> Option<i64> {
    match read(raw) {
        Reading::Value(text) => leading_number(text)?.parse::<i64>().ok(),
        _ => None,
    }
}

/// A decimal reading such as `213.77 W`.
pub(crate) fn decimal(raw: &str) -> Option<f64> {
    match read(raw) {
        Reading::Value(text) => leading_number(text)?
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite()),
        _ => None,
    }
}

/// A text reading, or `None` for the "no reading" and failure markers.
pub(crate) fn text(raw: &str) -> Option<String> {
    match read(raw) {
        Reading::Value(text) => Some(text.to_owned()),
        _ => None,
    }
}

fn whole(value: f64) -> Option<u64> {
    (value.is_finite() && value >= 0.0 && value <= u64::MAX as f64).then(|| value.round() as u64)
}

/// Narrow to `u32`, dropping values that cannot be real readings.
pub(crate) fn small(value: Option<u64>) -> Option<u32> {
    value.and_then(|v| u32::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_dropped_from_every_form() {
        assert_eq!(integer("46068 MiB"), Some(46068));
        assert_eq!(integer("24564MiB"), Some(24564));
        assert_eq!(integer("64 %"), Some(64));
        assert_eq!(integer("16x"), Some(16));
        assert_eq!(decimal("213.77 W"), Some(213.77));
        assert_eq!(signed("40 C"), Some(40));
    }

    #[test]
    fn missing_markers_are_not_failures() {
        for raw in [
            "[N/A]",
            "N/A",
            "[Not Supported]",
            "",
            "  ",
            "[Requested functionality has been deprecated]",
        ] {
            assert_eq!(read(raw), Reading::Missing, "{raw:?} means no reading");
        }
    }

    #[test]
    fn failure_markers_are_recognised() {
        for raw in ["ERR!", "[Unknown Error]", "Unknown Error", "[GPU is lost]"] {
            assert_eq!(
                read(raw),
                Reading::Failed,
                "{raw:?} means the GPU did not answer"
            );
            assert_eq!(integer(raw), None);
        }
    }

    #[test]
    fn garbage_is_none_not_a_panic() {
        for raw in ["-", "+", "MiB", ".", "1e999", "99999999999999999999999"] {
            let _ = (integer(raw), decimal(raw), signed(raw));
        }
        assert_eq!(decimal("."), None);
    }
}

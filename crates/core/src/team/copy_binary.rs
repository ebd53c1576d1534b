//! Rows in PostgreSQL's binary `COPY` format, for pushing large batches.
//!
//! Why binary and not text or CSV: every field is written as its length and its bytes, so
//! another laptop's text (names, notes: untrusted) needs no escaping at all — a tab, newline,
//! backslash, quote or `\N` in a value is just bytes, and NULL is a length of -1, never a
//! marker a value could spell. Fields are `text`, `int8`, `uuid` and `jsonb`, each in the
//! column type's own binary form. (A NUL character is refused by the server in both formats, as
//! in any PostgreSQL text value.)
//!
//! Format: <https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4>

/// The signature, flags (no OIDs) and an empty header extension.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// One `COPY ... FROM STDIN (FORMAT binary)` payload being built.
#[derive(Debug)]
pub struct CopyRows {
    buf: Vec<u8>,
    columns: i16,
    /// Fields still owed to the row being written (checked in debug builds).
    left_in_row: i16,
}

impl CopyRows {
    pub fn new(columns: i16) -> Self {
        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(HEADER);
        Self {
            buf,
            columns,
            left_in_row: 0,
        }
    }

    /// Start a row; exactly `columns` fields must follow.
    pub fn row(&mut self) {
        debug_assert_eq!(self.left_in_row, 0, "the previous row is short");
        self.buf.extend_from_slice(&self.columns.to_be_bytes());
        self.left_in_row = self.columns;
    }

    pub fn text(&mut self, value: Option<&str>) {
        self.left_in_row -= 1;
        match value {
            None => self.buf.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(text) => {
                // A field longer than 2 GiB cannot be sent; no ledger value comes near it, and
                // the server refuses a wrong length rather than misreading what follows.
                let len = i32::try_from(text.len()).unwrap_or(i32::MAX);
                self.buf.extend_from_slice(&len.to_be_bytes());
                self.buf.extend_from_slice(text.as_bytes());
            }
        }
    }

    pub fn int8(&mut self, value: i64) {
        self.left_in_row -= 1;
        self.buf.extend_from_slice(&8i32.to_be_bytes());
        self.buf.extend_from_slice(&value.to_be_bytes());
    }

    pub fn uuid(&mut self, value: uuid::Uuid) {
        self.left_in_row -= 1;
        self.buf.extend_from_slice(&16i32.to_be_bytes());
        self.buf.extend_from_slice(value.as_bytes());
    }

    /// A `jsonb` field: the format's version byte (1), then the JSON text.
    pub fn jsonb(&mut self, json: Option<&str>) {
        self.left_in_row -= 1;
        match json {
            None => self.buf.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(text) => {
                let len = i32::try_from(text.len() + 1).unwrap_or(i32::MAX);
                self.buf.extend_from_slice(&len.to_be_bytes());
                self.buf.push(1);
                self.buf.extend_from_slice(text.as_bytes());
            }
        }
    }

    /// The payload with its trailer.
    pub fn finish(mut self) -> Vec<u8> {
        debug_assert_eq!(self.left_in_row, 0, "the last row is short");
        self.buf.extend_from_slice(&(-1i16).to_be_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read a payload back the way the format defines it (the server's side of the test is the
    /// round trip in `tests/team_sync.rs`).
    fn decode(bytes: &[u8]) -> Vec<Vec<Option<Vec<u8>>>> {
        assert!(bytes.starts_with(HEADER));
        let mut at = HEADER.len();
        let mut rows = Vec::new();
        loop {
            let n = i16::from_be_bytes([bytes[at], bytes[at + 1]]);
            at += 2;
            if n == -1 {
                assert_eq!(at, bytes.len(), "bytes after the trailer");
                return rows;
            }
            let mut row = Vec::new();
            for _ in 0..n {
                let len = i32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
                at += 4;
                if len < 0 {
                    row.push(None);
                } else {
                    let len = usize::try_from(len).unwrap();
                    row.push(Some(bytes[at..at + len].to_vec()));
                    at += len;
                }
            }
            rows.push(row);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_and_null_come_back_as_written(
            values in proptest::collection::vec(
                proptest::option::of(proptest::string::string_regex(
                    "(\\\\N|\\\\|\t|\n|\r|\"|'|,|[\\PC]|\\PC{0,3})*"
                ).unwrap()),
                0..20,
            ),
            number in proptest::num::i64::ANY,
        ) {
            let mut rows = CopyRows::new(2);
            for value in &values {
                rows.row();
                rows.text(value.as_deref());
                rows.int8(number);
            }
            let decoded = decode(&rows.finish());
            proptest::prop_assert_eq!(decoded.len(), values.len());
            for (row, value) in decoded.iter().zip(&values) {
                proptest::prop_assert_eq!(
                    row[0].clone(),
                    value.as_ref().map(|v| v.as_bytes().to_vec())
                );
                proptest::prop_assert_eq!(row[1].clone(), Some(number.to_be_bytes().to_vec()));
            }
        }
    }
}

//! Rows in PostgreSQL's binary `COPY` format: built for pushing large batches, read for pulling
//! them.
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

/// The signature alone, as every payload starts.
const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

/// A payload that does not read as `COPY` rows of the expected shape. The bytes come from the
/// team database, which other members write to: they are read with every length checked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CopyReadError {
    #[error("the COPY data does not start with PostgreSQL's binary signature")]
    Signature,
    #[error("the COPY data ends inside a row")]
    Truncated,
    #[error("a COPY row has {found} fields, {expected} expected")]
    FieldCount { expected: usize, found: i16 },
    #[error("the COPY data goes on after its trailer")]
    AfterTrailer,
}

/// A field of a row read back: its bytes, or `None` for NULL.
pub type Field<'a> = Option<&'a [u8]>;

/// Every row of a binary `COPY ... TO STDOUT` payload of exactly `N` columns, each field still in
/// the column type's binary form (for `text`, its UTF-8 bytes).
pub fn read_rows<const N: usize>(bytes: &[u8]) -> Result<Vec<[Field<'_>; N]>, CopyReadError> {
    let mut input = Input { bytes, at: 0 };
    if input.take(SIGNATURE.len())? != SIGNATURE {
        return Err(CopyReadError::Signature);
    }
    let _flags = input.take(4)?;
    let extension = u32::from_be_bytes(input.array()?);
    input.take(usize::try_from(extension).map_err(|_| CopyReadError::Truncated)?)?;
    let mut rows = Vec::new();
    loop {
        let fields = i16::from_be_bytes(input.array()?);
        if fields == -1 {
            return if input.at == bytes.len() {
                Ok(rows)
            } else {
                Err(CopyReadError::AfterTrailer)
            };
        }
        if usize::try_from(fields).ok() != Some(N) {
            return Err(CopyReadError::FieldCount {
                expected: N,
                found: fields,
            });
        }
        let mut row = [None; N];
        for field in &mut row {
            let len = i32::from_be_bytes(input.array()?);
            // Any negative length is NULL (the format only ever writes -1).
            if let Ok(len) = usize::try_from(len) {
                *field = Some(input.take(len)?);
            }
        }
        rows.push(row);
    }
}

/// The unread rest of a payload.
struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], CopyReadError> {
        let end = self.at.checked_add(len).ok_or(CopyReadError::Truncated)?;
        let taken = self
            .bytes
            .get(self.at..end)
            .ok_or(CopyReadError::Truncated)?;
        self.at = end;
        Ok(taken)
    }

    fn array<const L: usize>(&mut self) -> Result<[u8; L], CopyReadError> {
        let mut out = [0; L];
        out.copy_from_slice(self.take(L)?);
        Ok(out)
    }
}

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
            let payload = rows.finish();
            let decoded = read_rows::<2>(&payload).expect("read back");
            proptest::prop_assert_eq!(decoded.len(), values.len());
            for (row, value) in decoded.iter().zip(&values) {
                proptest::prop_assert_eq!(row[0], value.as_ref().map(|v| v.as_bytes()));
                proptest::prop_assert_eq!(row[1], Some(&number.to_be_bytes()[..]));
            }
        }

        /// Whatever bytes arrive, reading them returns rows or an error, and never reads past
        /// the end.
        #[test]
        fn any_bytes_read_without_panicking(
            tail in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        ) {
            let mut payload = HEADER.to_vec();
            payload.extend_from_slice(&tail);
            let _ = read_rows::<3>(&payload);
            let _ = read_rows::<3>(&tail);
        }
    }

    #[test]
    fn a_cut_or_misshapen_payload_is_refused() {
        let mut rows = CopyRows::new(2);
        rows.row();
        rows.text(Some("a value"));
        rows.text(None);
        let payload = rows.finish();
        assert_eq!(read_rows::<2>(&payload).expect("whole").len(), 1);
        for cut in 0..payload.len() {
            assert!(read_rows::<2>(&payload[..cut]).is_err(), "cut at {cut}");
        }
        assert_eq!(
            read_rows::<3>(&payload),
            Err(CopyReadError::FieldCount {
                expected: 3,
                found: 2
            })
        );
        let mut longer = payload.clone();
        longer.push(0);
        assert_eq!(read_rows::<2>(&longer), Err(CopyReadError::AfterTrailer));
        assert_eq!(
            read_rows::<2>(b"PGCOPY\n\xff\r\n\x01"),
            Err(CopyReadError::Signature)
        );
        // A header extension is skipped, as the format asks of readers.
        let mut extended = SIGNATURE.to_vec();
        extended.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3, 9, 9, 9]);
        extended.extend_from_slice(&payload[HEADER.len()..]);
        assert_eq!(read_rows::<2>(&extended).expect("extended")[0][1], None);
    }
}

//! Where a pull's two cursors stand after a page, and whether another page follows: one rule for
//! every page, pure, so it is tested here without a server.
//!
//! The server numbers events and shared records from one counter, in commit order. A page holds
//! at most `limit` events after the events cursor; only once the events are caught up (fewer than
//! `limit` came) does it also hold up to `limit` records after the records cursor, so every
//! instance a record names is already here when the record is written. A cursor that is caught up
//! moves to the team's counter read in the same snapshot, past this laptop's own rows (which a
//! pull skips) and past numbers that belong to the other kind.

/// What a page says besides its rows: the team's counter, how many events and records it
/// brought, and the last number of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Page {
    pub(super) head: i64,
    pub(super) events: i64,
    pub(super) last_event: Option<i64>,
    pub(super) records: i64,
    pub(super) last_record: Option<i64>,
    /// The most events (and records) asked for.
    pub(super) limit: i64,
}

impl Page {
    /// Fewer events than asked for: the events are caught up, and this page brought the records
    /// and the team budgets.
    pub(super) fn caught_up(&self) -> bool {
        self.events < self.limit
    }
}

/// The cursors a pull continues from: the last event and the last record applied here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cursors {
    pub(super) events: i64,
    pub(super) records: i64,
}

/// Where the cursors stand once `page` is applied, and whether more pages follow.
pub(super) fn after(page: &Page, at: Cursors) -> (Cursors, bool) {
    if !page.caught_up() {
        // Records wait until the events are caught up.
        let events = page.last_event.unwrap_or(at.events).max(at.events);
        return (
            Cursors {
                events,
                records: at.records,
            },
            true,
        );
    }
    let events = page.head.max(at.events);
    if page.records >= page.limit {
        let records = page.last_record.unwrap_or(at.records).max(at.records);
        return (Cursors { events, records }, true);
    }
    let records = page.head.max(at.records);
    (Cursors { events, records }, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(events: &[i64], records: &[i64], head: i64, limit: i64) -> Page {
        Page {
            head,
            events: events.len() as i64,
            last_event: events.iter().copied().max(),
            records: records.len() as i64,
            last_record: records.iter().copied().max(),
            limit,
        }
    }

    const START: Cursors = Cursors {
        events: 0,
        records: 0,
    };

    #[test]
    fn a_full_page_moves_the_events_cursor_to_its_last_event_and_holds_the_records_back() {
        let (next, more) = after(&page(&[11, 12, 14], &[], 90, 3), START);
        assert!(more);
        assert_eq!(
            next,
            Cursors {
                events: 14,
                records: 0
            }
        );
    }

    #[test]
    fn a_caught_up_page_moves_both_cursors_to_the_counter_and_ends_the_pull() {
        let at = Cursors {
            events: 14,
            records: 3,
        };
        let (next, more) = after(&page(&[15], &[16], 20, 3), at);
        assert!(!more);
        assert_eq!(
            next,
            Cursors {
                events: 20,
                records: 20
            }
        );
        // Nothing new at all: the counter alone moves the cursors past this laptop's own rows.
        let (next, more) = after(&page(&[], &[], 25, 3), next);
        assert!(!more);
        assert_eq!(next.events, 25);
    }

    #[test]
    fn a_full_page_of_records_moves_the_records_cursor_to_its_last_record_and_asks_again() {
        let (next, more) = after(&page(&[], &[4, 5, 9], 30, 3), START);
        assert!(more);
        assert_eq!(
            next,
            Cursors {
                events: 30,
                records: 9
            }
        );
    }

    #[test]
    fn no_cursor_ever_moves_back() {
        let at = Cursors {
            events: 50,
            records: 50,
        };
        // A counter behind the cursors (a team database restored from an older backup).
        let (next, _) = after(&page(&[], &[], 10, 3), at);
        assert_eq!(next, at);
        let (next, _) = after(&page(&[7, 8, 9], &[], 10, 3), at);
        assert_eq!(next, at);
    }

    /// A server's rows, each numbered from one counter: `(seq, is_event, from_this_laptop)`.
    struct Team {
        rows: Vec<(i64, bool, bool)>,
    }

    impl Team {
        /// The page the server would send for `at`: the events after the events cursor not
        /// pushed from here, and, when those are caught up, the records after the records
        /// cursor likewise.
        fn page(&self, at: Cursors, limit: i64) -> (Page, Vec<i64>, Vec<i64>) {
            let others = |event: bool, after: i64| -> Vec<i64> {
                self.rows
                    .iter()
                    .filter(|(seq, is_event, mine)| *is_event == event && !mine && *seq > after)
                    .map(|(seq, ..)| *seq)
                    .take(usize::try_from(limit).expect("limit"))
                    .collect()
            };
            let events = others(true, at.events);
            let records = if (events.len() as i64) < limit {
                others(false, at.records)
            } else {
                Vec::new()
            };
            let head = self.rows.iter().map(|(seq, ..)| *seq).max().unwrap_or(0);
            (page(&events, &records, head, limit), events, records)
        }
    }

    #[test]
    fn a_pull_page_by_page_brings_every_row_of_the_others_once_whatever_the_page_size() {
        // Events and records interleaved on one counter, a third of them from this laptop, in
        // runs long enough to fill pages of every size tried.
        let rows: Vec<(i64, bool, bool)> = (1..=400)
            .map(|seq| (seq, seq % 7 != 3 && seq % 11 != 5, seq % 3 == 0))
            .collect();
        let team = Team { rows };
        let expected = |event: bool| -> Vec<i64> {
            team.rows
                .iter()
                .filter(|(_, is_event, mine)| *is_event == event && !mine)
                .map(|(seq, ..)| *seq)
                .collect()
        };
        for limit in [1, 2, 3, 7, 50, 1_000] {
            let mut at = START;
            let (mut events, mut records) = (Vec::new(), Vec::new());
            let mut pages = 0;
            loop {
                let (page, page_events, page_records) = team.page(at, limit);
                events.extend(page_events);
                records.extend(page_records);
                let (next, more) = after(&page, at);
                at = next;
                pages += 1;
                assert!(pages < 1_000, "a pull of page size {limit} never ends");
                if !more {
                    break;
                }
            }
            assert_eq!(events, expected(true), "events, page size {limit}");
            assert_eq!(records, expected(false), "records, page size {limit}");
            assert_eq!(
                at,
                Cursors {
                    events: 400,
                    records: 400
                }
            );
            // Pulling again brings nothing, in one page.
            let (page, again_events, again_records) = team.page(at, limit);
            assert!(again_events.is_empty() && again_records.is_empty());
            assert_eq!(after(&page, at), (at, false));
        }
    }
}

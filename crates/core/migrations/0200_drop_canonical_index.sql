-- `ledger_events_canonical` (0140) spared `ledger::events_for` sorting one instance's events, a
-- few hundred rows it sorts in well under a millisecond. Every inserted event paid for it: a
-- team pull writes tens of thousands of events at once, and this index was a quarter of that
-- cost. `ledger_events_instance` still finds an instance's events.
DROP INDEX ledger_events_canonical;

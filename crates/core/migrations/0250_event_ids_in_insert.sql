-- A new event's uid, member and own order number are written by the one statement that records
-- it (`store::ledger::insert_event`) instead of by a trigger. The trigger's condition was checked
-- for every row of every insert, pulled events included, which bring their own: about a tenth
-- of the work of writing a pulled page.
DROP TRIGGER ledger_events_new_uid;

-- The events a push delivered are marked by one number instead of row by row: every event with
-- an id up to `team_link.shared_through` is on the team's server, whatever its `shared` flag
-- says. Marking 100 000 pushed events rewrote each of their rows and index entries, about a
-- fifth of a large push's local work; moving the number costs one row. Whenever the link
-- changes (connect, disconnect) the flags are first set from the number and the number goes back
-- to 0 (`store::team::settle_shared`), so without a link the flags alone say what was shared.
ALTER TABLE team_link ADD COLUMN shared_through INTEGER NOT NULL DEFAULT 0;

-- A notice a pull stored (a shared name kept under another name here, a row this version cannot
-- read) can be dismissed once the user has read it: it is kept, with when, and no longer listed.
ALTER TABLE team_conflicts ADD COLUMN dismissed_at TEXT;

-- A team reminder (a team budget's threshold, a left-running alert) can be put off like an
-- instance's: hidden until this time, then sent once more if it still holds.
ALTER TABLE team_reminders ADD COLUMN snoozed_until TEXT;

-- What the user plans to run on an instance (the VRAM estimator's inputs as JSON), so that an
-- error explained later (a CUDA out of memory) can be measured against the plan: what the setting
-- needs, what each remedy would need, and which card would fit. One plan per instance; saving
-- again replaces it.
CREATE TABLE instance_plans (
    instance_id INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    request     TEXT    NOT NULL CHECK (json_valid(request)),
    saved_at    TEXT    NOT NULL
);

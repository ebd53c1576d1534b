-- The provider's own id of a rental (a RunPod pod id, a Vast.ai instance id): what its API
-- needs to stop the instance. Optional, one per instance; the API key itself lives in the OS
-- keychain only.
CREATE TABLE provider_ids (
    instance_id          INTEGER PRIMARY KEY NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    provider_instance_id TEXT    NOT NULL CHECK (length(provider_instance_id) BETWEEN 1 AND 64),
    saved_at             TEXT    NOT NULL
);

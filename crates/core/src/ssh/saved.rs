//! The SSH target saved on an instance (host, port, user, key path, how to log in) so the app
//! reconnects without asking again. Secrets stay in the OS keychain; when AutoDL-style providers
//! change the port on power-on, saving again replaces the old target.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::destination::Destination;
use crate::store::ssh_targets::{self, SshTargetRow};
use crate::store::{Store, StoreError};

/// How the user chose to log in (the secret itself is in the keychain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum AuthKind {
    Key,
    Agent,
    Password,
}

impl AuthKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Key => "key",
            Self::Agent => "agent",
            Self::Password => "password",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "key" => Some(Self::Key),
            "agent" => Some(Self::Agent),
            "password" => Some(Self::Password),
            _ => None,
        }
    }
}

/// Where an instance is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SavedTarget {
    pub host: String,
    pub port: u16,
    pub user: String,
    #[ts(type = "string | null")]
    pub identity_file: Option<PathBuf>,
    pub jump: Vec<String>,
    pub auth: AuthKind,
    pub host_key_fingerprint: Option<String>,
}

impl SavedTarget {
    pub fn from_destination(destination: &Destination, auth: AuthKind) -> Self {
        Self {
            host: destination.host.clone(),
            port: destination.port,
            user: destination.user.clone(),
            identity_file: destination.identity_files.first().cloned(),
            jump: destination
                .jump
                .iter()
                .map(|hop| format!("{}@{}:{}", hop.user, hop.host, hop.port))
                .collect(),
            auth,
            host_key_fingerprint: None,
        }
    }

    /// The equivalent `ssh …` command (every value quoted), to feed back into
    /// [`super::ConnectRequest`] or show to the user.
    pub fn ssh_command(&self) -> String {
        let port = self.port.to_string();
        let destination = format!("{}@{}", self.user, self.host);
        let mut words: Vec<String> = vec!["ssh".into(), "-p".into(), port, destination];
        if let Some(key) = &self.identity_file {
            words.push("-i".into());
            words.push(key.display().to_string());
        }
        if !self.jump.is_empty() {
            words.push("-J".into());
            words.push(self.jump.join(","));
        }
        crate::shell::join(words)
    }
}

/// Save (or replace) the instance's target.
pub async fn save_target(
    store: &Store,
    instance_id: i64,
    target: &SavedTarget,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    ssh_targets::save(
        &mut tx,
        &SshTargetRow {
            instance_id,
            host: target.host.clone(),
            port: i64::from(target.port),
            user: target.user.clone(),
            identity_file: target
                .identity_file
                .as_ref()
                .map(|p| p.display().to_string()),
            jump: target.jump.join(","),
            auth: target.auth.as_str().to_owned(),
            host_key_fingerprint: target.host_key_fingerprint.clone(),
            updated_at: now,
        },
    )
    .await?;
    tx.commit().await.map_err(StoreError::Query)
}

/// The instance's saved target, if any.
pub async fn load_target(
    store: &Store,
    instance_id: i64,
) -> Result<Option<SavedTarget>, StoreError> {
    let mut conn = store.pool().acquire().await?;
    let Some(row) = ssh_targets::for_instance(&mut conn, instance_id).await? else {
        return Ok(None);
    };
    let corrupt = |what: &'static str, value: String| StoreError::Corrupt { what, value };
    Ok(Some(SavedTarget {
        port: u16::try_from(row.port).map_err(|_| corrupt("ssh port", row.port.to_string()))?,
        auth: AuthKind::parse(&row.auth).ok_or_else(|| corrupt("ssh auth", row.auth.clone()))?,
        host: row.host,
        user: row.user,
        identity_file: row.identity_file.map(PathBuf::from),
        jump: row
            .jump
            .split(',')
            .filter(|hop| !hop.is_empty())
            .map(str::to_owned)
            .collect(),
        host_key_fingerprint: row.host_key_fingerprint,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssh::parse_ssh_command;

    async fn store_with_instance() -> (Store, i64) {
        let store = Store::open_in_memory().await.expect("store opens");
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO instances (name, provider, gpu_model, currency, created_at)
             VALUES ('box', 'autodl', 'RTX 4090', 'CNY', '2026-01-01T00:00:00Z') RETURNING id",
        )
        .fetch_one(store.pool())
        .await
        .expect("instance row");
        (store, id)
    }

    fn target(port: u16) -> SavedTarget {
        let command = parse_ssh_command(&format!(
            "ssh -p {port} root@region-1.autodl.com -i /keys/id -J ops@jump:2222"
        ))
        .expect("parses");
        SavedTarget::from_destination(
            &Destination::resolve(&command, None).expect("resolves"),
            AuthKind::Password,
        )
    }

    #[tokio::test]
    async fn a_saved_target_loads_back_and_a_new_port_replaces_it() {
        let (store, id) = store_with_instance().await;
        assert_eq!(load_target(&store, id).await.expect("reads"), None);
        save_target(&store, id, &target(12345), Utc::now())
            .await
            .expect("saves");
        assert_eq!(
            load_target(&store, id).await.expect("reads"),
            Some(target(12345))
        );
        // AutoDL powered the instance on again with a new port.
        save_target(&store, id, &target(23456), Utc::now())
            .await
            .expect("replaces");
        let loaded = load_target(&store, id)
            .await
            .expect("reads")
            .expect("saved");
        assert_eq!(loaded.port, 23456, "the new port replaces the old one");
    }

    #[tokio::test]
    async fn the_table_has_no_place_for_secrets() {
        let (store, _) = store_with_instance().await;
        let columns: Vec<String> =
            sqlx::query_scalar("SELECT name FROM pragma_table_info('ssh_targets')")
                .fetch_all(store.pool())
                .await
                .expect("schema");
        assert!(!columns.is_empty());
        for column in &columns {
            assert!(
                !["password", "passphrase", "secret", "private_key"]
                    .iter()
                    .any(|word| column.contains(word)),
                "column {column} would hold a secret; secrets belong in the keychain"
            );
        }
    }

    #[test]
    fn the_saved_target_rebuilds_an_equivalent_ssh_command() {
        let saved = target(12345);
        let again = parse_ssh_command(&saved.ssh_command()).expect("parses back");
        assert_eq!(again.port, Some(12345));
        assert_eq!(again.user.as_deref(), Some("root"));
        assert_eq!(again.identity_files, vec!["/keys/id".to_owned()]);
        assert_eq!(again.jump, vec!["ops@jump:2222".to_owned()]);
    }
}

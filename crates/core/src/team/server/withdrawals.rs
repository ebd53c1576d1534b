//! `ledger_withdrawals`: conflict resolutions, a member's choice between two events that cannot
//! both stand, as every laptop shares them.

use super::Server;
use crate::store::team::withdrawals::WithdrawalRow;
use crate::team::TeamError;

/// A resolution as the server holds it, written by another member's laptop: unchecked.
#[derive(sqlx::FromRow)]
pub struct ServerWithdrawal {
    pub uid: String,
    pub instance_uid: String,
    pub event_uid: String,
    pub kept_uid: String,
    pub recorded_by: String,
    pub at: String,
}

impl Server {
    /// Send this laptop's resolutions; one the server holds already is skipped.
    pub async fn push_withdrawals(
        &mut self,
        team_id: i64,
        rows: &[WithdrawalRow],
    ) -> Result<(), TeamError> {
        let column = |f: fn(&WithdrawalRow) -> &String| -> Vec<String> {
            rows.iter().map(|r| f(r).clone()).collect()
        };
        sqlx::query(
            "INSERT INTO ledger_withdrawals (uid, team_id, instance_uid, event_uid, kept_uid, recorded_by, at)
             SELECT u::uuid, $1, i::uuid, e::uuid, k::uuid, r, a
             FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                  AS t(u, i, e, k, r, a)
             ON CONFLICT (uid) DO NOTHING",
        )
        .bind(team_id)
        .bind(column(|r| &r.uid))
        .bind(column(|r| &r.instance_uid))
        .bind(column(|r| &r.event_uid))
        .bind(column(|r| &r.kept_uid))
        .bind(column(|r| &r.recorded_by))
        .bind(column(|r| &r.at))
        .execute(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    /// Every resolution of the team, in the order they were pushed.
    pub async fn withdrawals(&mut self, team_id: i64) -> Result<Vec<ServerWithdrawal>, TeamError> {
        sqlx::query_as(
            "SELECT uid::text AS uid, instance_uid::text AS instance_uid, event_uid::text AS event_uid,
                kept_uid::text AS kept_uid, recorded_by, at
         FROM ledger_withdrawals WHERE team_id = $1 ORDER BY pushed_at, uid",
        )
        .bind(team_id)
        .fetch_all(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))
    }
}

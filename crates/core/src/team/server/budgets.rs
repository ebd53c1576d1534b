//! `team_budgets`: the team's monthly budget per currency, set by any member.

use super::Server;
use crate::team::TeamError;

impl Server {
    /// Set the team's budget in `currency` to `amount` (decimal text), as `member`.
    pub async fn set_budget(
        &mut self,
        team_id: i64,
        currency: &str,
        amount: &str,
        member: &str,
    ) -> Result<(), TeamError> {
        sqlx::query(
            "INSERT INTO team_budgets (team_id, currency, amount, set_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (team_id, currency)
         DO UPDATE SET amount = excluded.amount, set_by = excluded.set_by, set_at = now()",
        )
        .bind(team_id)
        .bind(currency)
        .bind(amount)
        .bind(member)
        .execute(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    /// `(currency, amount, set_by)` of each budget, by currency, as the server holds them
    /// (the amount unchecked).
    pub async fn budgets(
        &mut self,
        team_id: i64,
    ) -> Result<Vec<(String, String, String)>, TeamError> {
        sqlx::query_as(
            "SELECT currency, amount, set_by FROM team_budgets WHERE team_id = $1 ORDER BY currency",
        )
        .bind(team_id)
        .fetch_all(&mut self.conn)
        .await
        .map_err(|e| self.failed(&e))
    }
}

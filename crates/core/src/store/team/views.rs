//! What the team views read and cache here: who recorded each instance, its project, and the
//! team budgets as last pulled.

use sqlx::SqliteConnection;

use crate::store::StoreError;

/// Who recorded each instance (`None` before the laptop joined a team), by local id.
pub async fn instance_recorders(
    conn: &mut SqliteConnection,
) -> Result<Vec<(i64, String, Option<String>)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT id, uid, recorded_by FROM instances ORDER BY id")
            .fetch_all(conn)
            .await?,
    )
}

/// Replace the cached team budgets (`(currency, amount, set_by)`).
pub async fn replace_team_budgets(
    conn: &mut SqliteConnection,
    budgets: &[(String, String, String)],
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM team_budgets")
        .execute(&mut *conn)
        .await?;
    for (currency, amount, set_by) in budgets {
        sqlx::query("INSERT INTO team_budgets (currency, amount, set_by) VALUES (?, ?, ?)")
            .bind(currency)
            .bind(amount)
            .bind(set_by)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The team budgets as last pulled (`(currency, amount, set_by)`).
pub async fn team_budgets(
    conn: &mut SqliteConnection,
) -> Result<Vec<(String, String, String)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT currency, amount, set_by FROM team_budgets ORDER BY currency")
            .fetch_all(conn)
            .await?,
    )
}

/// The local id of the instance called `name`, if there is one.
pub async fn instance_id_by_name(
    conn: &mut SqliteConnection,
    name: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT id FROM instances WHERE name = ?")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

/// Set an instance's project (`None` clears it); false when no such instance.
pub async fn set_project(
    conn: &mut SqliteConnection,
    instance_id: i64,
    project: Option<&str>,
) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE instances SET project = ? WHERE id = ?")
        .bind(project)
        .bind(instance_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// The project of the instance called `name`: `None` when there is no such instance.
pub async fn project_of(
    conn: &mut SqliteConnection,
    name: &str,
) -> Result<Option<Option<String>>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT project FROM instances WHERE name = ?")
            .bind(name)
            .fetch_optional(conn)
            .await?,
    )
}

/// Each instance's project, by local id (instances without one are left out).
pub async fn projects(conn: &mut SqliteConnection) -> Result<Vec<(i64, String)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT id, project FROM instances WHERE project IS NOT NULL")
            .fetch_all(conn)
            .await?,
    )
}

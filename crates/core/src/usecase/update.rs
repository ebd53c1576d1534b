//! The self-update's offer and install. The install itself (the updater plugin) stays with the
//! app; it comes in as a closure, called once the bytes are downloaded and verified.

use super::ActionError;
use crate::update::{self, Endpoints, Fetched, UpdateError, UpdateOffer, UpdateProgress};

use super::Context;

/// What the last check (`last`) offers in `language`, a skipped version left out; `None`:
/// nothing to offer.
pub async fn pending(
    context: &Context<'_>,
    last: Option<Fetched>,
    language: &str,
) -> Result<Option<UpdateOffer>, ActionError> {
    let Some(fetched) = last else {
        return Ok(None);
    };
    offer(context, &fetched, language, true).await
}

/// "Check now": asks the servers at once, hands what they answered to `remember`, and offers
/// it even when it was skipped.
pub async fn check_now(
    context: &Context<'_>,
    language: &str,
    remember: impl FnOnce(&Fetched),
) -> Result<Option<UpdateOffer>, ActionError> {
    let fetched = update::fetch_latest(&Endpoints::from_env()?).await?;
    remember(&fetched);
    offer(context, &fetched, language, false).await
}

async fn offer(
    context: &Context<'_>,
    fetched: &Fetched,
    language: &str,
    respect_skip: bool,
) -> Result<Option<UpdateOffer>, ActionError> {
    let running = context.running_work.running();
    let mut conn = context
        .store
        .pool()
        .acquire()
        .await
        .map_err(|err| ActionError::from(crate::store::StoreError::from(err)))?;
    Ok(update::offer(&mut conn, fetched, language, &running, respect_skip).await?)
}

/// "Install and restart" up to the restart: waits while a backup, a followed install, a stop or
/// a release runs, downloads and checks the signature, then calls `install` with the bytes.
/// Nothing is installed when any step fails. Answers the release installed.
pub async fn install(
    context: &Context<'_>,
    last: Option<Fetched>,
    progress: impl Fn(UpdateProgress),
    install: impl FnOnce(&Fetched, &[u8]) -> Result<(), UpdateError>,
) -> Result<Fetched, ActionError> {
    let fetched = last.ok_or(UpdateError::NothingToInstall)?;
    context
        .running_work
        .until_ready(|activities| {
            progress(UpdateProgress::Waiting {
                for_activities: activities.to_vec(),
            });
        })
        .await;
    let mut told = None;
    let bytes = update::download_for_this_computer(&fetched.release, |done, total| {
        let step = update::progress_step(done, total);
        if told != Some(step) {
            told = Some(step);
            progress(UpdateProgress::Downloading { done, total });
        }
    })
    .await?;
    progress(UpdateProgress::Installing);
    install(&fetched, &bytes)?;
    tracing::info!(version = %fetched.release.version, "update installed, restarting");
    Ok(fetched)
}

//! "Run checks" on an instance, and a run kept from before.

use super::ActionError;
use crate::diagnose::Lang;
use crate::probe::{BatteryOptions, ProbeSink};
use crate::verify::history::{self, RecordedRun};
use crate::verify::{self, VerifyOutcome};

use super::Context;

/// Run the checks on `instance` (`stress` adds the matmul stress test), findings in `lang`,
/// each probe reported to `sink`; stoppable by the instance's name in the context's checks.
pub async fn run(
    context: &Context<'_>,
    instance: &str,
    stress: bool,
    lang: Lang,
    sink: &dyn ProbeSink,
) -> Result<VerifyOutcome, ActionError> {
    let mut options = BatteryOptions::default();
    options.stress = stress;
    let run = verify::run_on_instance(
        context.store,
        context.live,
        context.checks,
        instance,
        options,
        lang,
        sink,
        context.now(),
    );
    Ok(run.await?)
}

/// Stored run `id` and what changed since the run before it (Verify's history).
pub async fn load_run(context: &Context<'_>, id: i64) -> Result<VerifyOutcome, ActionError> {
    let report = history::load(context.store, id).await?;
    let changes = history::changes(context.store, id).await?;
    Ok(VerifyOutcome {
        report,
        run: RecordedRun { id, changes },
    })
}

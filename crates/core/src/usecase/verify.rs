//! "Run checks" on an instance.

use super::ActionError;
use crate::diagnose::Lang;
use crate::probe::{BatteryOptions, ProbeSink};
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

//! The one confirmation loop of the provider route: after a power request, ask the provider
//! about the same instance until it reports the state the request asked for. Only an answer
//! about the id asked for counts: a look at pod A answered with pod B's `EXITED` confirms
//! nothing (an answer that carries no id is about the id in the request's path).

use std::future::Future;
use std::time::{Duration, Instant};

use crate::account::remote::RemoteInstance;
use crate::account::{AccountError, PowerVerb, RemoteState};

use super::StopWait;

/// What one look says about the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The provider reports the state that confirms the verb.
    Confirmed,
    /// Not yet, in the provider's own word (`gone` when it no longer has the instance).
    NotYet(String),
    /// The answer was about another instance, with that instance's id.
    OtherInstance(String),
}

/// What a direct look (`None`: the provider no longer has it) says about `verb` on `asked`.
/// Powered off is confirmed by stopped or gone (no GPU bills either way), on by running, a
/// release by gone.
pub fn verdict(verb: PowerVerb, asked: &str, look: Option<&RemoteInstance>) -> Verdict {
    let Some(remote) = look else {
        return match verb {
            PowerVerb::Off | PowerVerb::Release => Verdict::Confirmed,
            PowerVerb::On => Verdict::NotYet("gone".to_owned()),
        };
    };
    if remote.id != asked {
        return Verdict::OtherInstance(remote.id.clone());
    }
    let confirmed = match verb {
        PowerVerb::Off => matches!(remote.state, RemoteState::Stopped | RemoteState::Gone),
        PowerVerb::On => remote.state == RemoteState::Running,
        PowerVerb::Release => remote.state == RemoteState::Gone,
    };
    if confirmed {
        Verdict::Confirmed
    } else {
        Verdict::NotYet(remote.provider_word.clone())
    }
}

/// Why the loop gave up.
#[derive(Debug)]
pub enum Unconfirmed {
    /// The wait ran out while the provider still reported `last` of the instance.
    StillSays { seconds: u64, last: String },
    /// The wait ran out and the last answer was about another instance.
    OtherInstance { seconds: u64, other: String },
    /// A look that will not pass on its own (a refused key).
    Failed(AccountError),
}

/// The first look waits this long (at most `wait.every`): a power change takes a moment.
const FIRST_LOOK_AFTER: Duration = Duration::from_millis(200);

/// Ask `look` until it confirms `verb` on `id`, every `wait.every`, until `wait.limit` after
/// `started`. A look that fails (the API briefly unreachable, a malformed answer) is asked
/// again; a refused key ends the loop.
pub async fn until_confirmed<F, Fut>(
    mut look: F,
    id: &str,
    verb: PowerVerb,
    wait: StopWait,
    started: Instant,
) -> Result<(), Unconfirmed>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<RemoteInstance>, AccountError>>,
{
    tokio::time::sleep(FIRST_LOOK_AFTER.min(wait.every)).await;
    loop {
        let outcome = match look().await {
            Ok(remote) => verdict(verb, id, remote.as_ref()),
            Err(err @ AccountError::KeyRefused { .. }) => return Err(Unconfirmed::Failed(err)),
            Err(err) => Verdict::NotYet(err.to_string()),
        };
        let seconds = started.elapsed().as_secs();
        match outcome {
            Verdict::Confirmed => return Ok(()),
            Verdict::NotYet(last) if started.elapsed() >= wait.limit => {
                return Err(Unconfirmed::StillSays { seconds, last })
            }
            Verdict::OtherInstance(other) if started.elapsed() >= wait.limit => {
                tracing::warn!(asked = id, answered = %other, "the provider answered about another instance");
                return Err(Unconfirmed::OtherInstance { seconds, other });
            }
            Verdict::NotYet(_) | Verdict::OtherInstance(_) => {}
        }
        tokio::time::sleep(wait.every).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use chrono::{TimeZone, Utc};
    use serde_json::{json, Value};

    use super::*;
    use crate::account::{runpod, vast};

    fn pod(value: &Value) -> RemoteInstance {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        runpod::parse_pod(value, now).expect("a pod")
    }

    #[test]
    fn each_providers_word_for_powered_off_about_the_same_id_only() {
        let now = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let off = |remote: &RemoteInstance| verdict(PowerVerb::Off, "p1", Some(remote));
        assert_eq!(
            off(&pod(&json!({"id": "p1", "status": "EXITED"}))),
            Verdict::Confirmed
        );
        assert_eq!(
            off(&pod(&json!({"id": "p1", "status": "TERMINATED"}))),
            Verdict::Confirmed
        );
        assert_eq!(
            off(&pod(&json!({"id": "p1", "status": "RUNNING"}))),
            Verdict::NotYet("RUNNING".into())
        );
        assert_eq!(
            off(&pod(&json!({"id": "p2", "status": "EXITED"}))),
            Verdict::OtherInstance("p2".into()),
            "pod B's EXITED says nothing about pod A"
        );
        let vast = |v: &Value| vast::parse_instance(v, now).expect("an instance");
        let off4 = |remote: &RemoteInstance| verdict(PowerVerb::Off, "4", Some(remote));
        assert_eq!(
            off4(&vast(&json!({"id": 4, "actual_status": "stopped"}))),
            Verdict::Confirmed
        );
        assert_eq!(
            off4(&vast(
                &json!({"id": 4, "actual_status": "running", "intended_status": "stopped"})
            )),
            Verdict::NotYet("running".into()),
            "asked to stop is not stopped"
        );
        assert_eq!(
            off4(&vast(&json!({"id": 5, "actual_status": "stopped"}))),
            Verdict::OtherInstance("5".into())
        );
    }

    #[test]
    fn gone_confirms_off_and_release_but_not_on() {
        assert_eq!(verdict(PowerVerb::Off, "p1", None), Verdict::Confirmed);
        assert_eq!(verdict(PowerVerb::Release, "p1", None), Verdict::Confirmed);
        assert_eq!(
            verdict(PowerVerb::On, "p1", None),
            Verdict::NotYet("gone".into())
        );
        let running = pod(&json!({"id": "p1", "status": "RUNNING"}));
        assert_eq!(
            verdict(PowerVerb::On, "p1", Some(&running)),
            Verdict::Confirmed
        );
        assert_eq!(
            verdict(PowerVerb::Release, "p1", Some(&running)),
            Verdict::NotYet("RUNNING".into())
        );
    }

    type Answer = Result<Option<RemoteInstance>, AccountError>;

    /// A look whose n-th answer is `answer(n)`, counting the looks.
    fn counted(
        answer: impl Fn(usize) -> Answer,
    ) -> (
        impl FnMut() -> std::future::Ready<Answer>,
        Arc<Mutex<usize>>,
    ) {
        let looks = Arc::new(Mutex::new(0));
        let counter = looks.clone();
        let look = move || {
            let mut n = counter.lock().unwrap();
            let next = answer(*n);
            *n += 1;
            std::future::ready(next)
        };
        (look, looks)
    }

    fn quick(limit_ms: u64) -> StopWait {
        StopWait {
            limit: Duration::from_millis(limit_ms),
            every: Duration::from_millis(5),
            ..StopWait::default()
        }
    }

    #[tokio::test]
    async fn another_ids_exited_never_confirms_and_the_wait_ends_saying_so() {
        let (look, looks) = counted(|_| Ok(Some(pod(&json!({"id": "p2", "status": "EXITED"})))));
        let outcome = until_confirmed(look, "p1", PowerVerb::Off, quick(100), Instant::now()).await;
        match outcome {
            Err(Unconfirmed::OtherInstance { other, .. }) => assert_eq!(other, "p2"),
            other => panic!("expected OtherInstance, got {other:?}"),
        }
        assert!(
            *looks.lock().unwrap() > 2,
            "it kept asking until the wait ran out"
        );
    }

    #[tokio::test]
    async fn the_same_ids_answer_confirms_after_other_ids_and_failed_looks() {
        let (look, looks) = counted(|n| match n {
            0 => Ok(Some(pod(&json!({"id": "p2", "status": "EXITED"})))),
            1 => Err(AccountError::Unreachable {
                provider: "RunPod",
                detail: "timeout".into(),
            }),
            2 => Ok(Some(pod(&json!({"id": "p1", "status": "RUNNING"})))),
            _ => Ok(Some(pod(&json!({"id": "p1", "status": "EXITED"})))),
        });
        until_confirmed(look, "p1", PowerVerb::Off, quick(5_000), Instant::now())
            .await
            .expect("confirmed by p1's own EXITED");
        assert_eq!(*looks.lock().unwrap(), 4);
    }

    #[tokio::test]
    async fn a_pod_still_running_times_out_with_its_last_word() {
        let (look, _) = counted(|_| Ok(Some(pod(&json!({"id": "p1", "status": "RUNNING"})))));
        let started = Instant::now();
        match until_confirmed(look, "p1", PowerVerb::Off, quick(60), started).await {
            Err(Unconfirmed::StillSays { last, .. }) => assert_eq!(last, "RUNNING"),
            other => panic!("expected StillSays, got {other:?}"),
        }
        assert!(
            started.elapsed() >= Duration::from_millis(60),
            "waited the whole limit"
        );
    }

    #[tokio::test]
    async fn a_refused_key_ends_the_loop_at_once() {
        let (look, looks) = counted(|_| {
            Err(AccountError::KeyRefused {
                provider: "RunPod",
                detail: "401".into(),
            })
        });
        let outcome =
            until_confirmed(look, "p1", PowerVerb::Off, quick(5_000), Instant::now()).await;
        assert!(
            matches!(
                outcome,
                Err(Unconfirmed::Failed(AccountError::KeyRefused { .. }))
            ),
            "{outcome:?}"
        );
        assert_eq!(*looks.lock().unwrap(), 1);
    }
}

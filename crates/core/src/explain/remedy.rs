//! The setting that fits this card: a search over combinations of the usual remedies for a job
//! too big (a smaller batch with gradient accumulation, gradient checkpointing, a lower
//! precision, shorter sequences, LoRA / QLoRA), ranked by what each gives up, so the advice
//! leads with the cheapest change that closes the gap instead of one halving per remedy, each
//! "still too big", and then a card four times the price.
//!
//! Pure, over the estimator; a remedy the plan already has (checkpointing on, QLoRA, batch 1)
//! is never offered.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::catalog::{estimate, EstimateRequest, Precision, Task};
use crate::diagnose::Lang;

/// One change to the planned setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RemedyChange {
    /// Stable code: `smaller_batch`, `grad_checkpointing`, `lower_precision`,
    /// `shorter_context`, `lora_instead_of_full`, `qlora_instead_of_lora`.
    pub remedy: String,
    /// What changes, in the context's language ("batch 16 → 4, gradient accumulation ×4").
    pub label: String,
}

/// A combination of changes and what the estimator says it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RemedyPlan {
    pub changes: Vec<RemedyChange>,
    pub setting: EstimateRequest,
    /// GiB per GPU with these changes.
    pub need_gib: f64,
    /// Fits the card with the estimator's headroom.
    pub fits: bool,
    /// What the changes give up, summed (lower is cheaper): a smaller batch with gradient
    /// accumulation costs little, shorter sequences or a quantised model change the result.
    pub cost: u32,
}

// What each change gives up, relative to the others.
const COST_BATCH_STEP_TRAINING: u32 = 1;
const COST_BATCH_STEP_INFERENCE: u32 = 2;
const COST_CHECKPOINTING: u32 = 2;
const COST_FP32_TO_HALF: u32 = 1;
const COST_QUANTISE_STEP: u32 = 3;
const COST_CONTEXT_STEP: u32 = 4;
const COST_LORA: u32 = 5;
const COST_QLORA: u32 = 3;
/// Sequences are not cut below this many tokens.
const MIN_CONTEXT: u32 = 512;

/// The levels of one knob: each a setting change, its label and cost (the first is "as
/// planned").
type Level = (
    Option<RemedyChange>,
    u32,
    fn(&mut EstimateRequest, u32),
    u32,
);

fn keep(_: &mut EstimateRequest, _: u32) {}

/// The level every knob starts at: the setting as planned.
fn as_planned() -> Level {
    (None, 0, keep, 0)
}

fn change(remedy: &str, label: String) -> Option<RemedyChange> {
    Some(RemedyChange {
        remedy: remedy.to_owned(),
        label,
    })
}

fn batch_levels(plan: &EstimateRequest, lang: Lang) -> Vec<Level> {
    let mut levels: Vec<Level> = vec![as_planned()];
    let training = plan.task.is_training();
    let step_cost = if training {
        COST_BATCH_STEP_TRAINING
    } else {
        COST_BATCH_STEP_INFERENCE
    };
    let (mut batch, mut steps) = (plan.batch, 0);
    while batch > 1 {
        batch /= 2;
        steps += 1;
        let accumulate = plan.batch / batch.max(1);
        let label = if training {
            lang.pick(
                format!("batch {} → {batch}，梯度累积 ×{accumulate}", plan.batch),
                format!(
                    "batch {} → {batch}, gradient accumulation ×{accumulate}",
                    plan.batch
                ),
            )
        } else {
            format!("batch {} → {batch}", plan.batch)
        };
        let set: fn(&mut EstimateRequest, u32) = |r, v| r.batch = v;
        levels.push((
            change("smaller_batch", label),
            step_cost * steps,
            set,
            batch,
        ));
    }
    levels
}

fn checkpoint_on(request: &mut EstimateRequest, _: u32) {
    request.grad_checkpointing = true;
}

fn checkpointing_levels(plan: &EstimateRequest, lang: Lang) -> Vec<Level> {
    let mut levels: Vec<Level> = vec![as_planned()];
    if plan.task.is_training() && !plan.grad_checkpointing {
        levels.push((
            change(
                "grad_checkpointing",
                lang.pick("开启梯度检查点", "gradient checkpointing on"),
            ),
            COST_CHECKPOINTING,
            checkpoint_on,
            1,
        ));
    }
    levels
}

fn precision_code(p: Precision) -> u32 {
    match p {
        Precision::Fp32 => 0,
        Precision::Fp16 => 1,
        Precision::Bf16 => 2,
        Precision::Int8 => 3,
        _ => 4,
    }
}

fn precision_of(code: u32) -> Precision {
    match code {
        0 => Precision::Fp32,
        1 => Precision::Fp16,
        2 => Precision::Bf16,
        3 => Precision::Int8,
        _ => Precision::Int4,
    }
}

fn precision_levels(plan: &EstimateRequest) -> Vec<Level> {
    let mut levels: Vec<Level> = vec![as_planned()];
    let set: fn(&mut EstimateRequest, u32) = |r, v| r.precision = precision_of(v);
    let mut cost = 0;
    let mut from = plan.precision;
    if from == Precision::Fp32 {
        cost += COST_FP32_TO_HALF;
        from = Precision::Bf16;
        levels.push((
            change("lower_precision", format!("{} → {from}", plan.precision)),
            cost,
            set,
            precision_code(from),
        ));
    }
    // Quantising the weights is for inference; training's answer is QLoRA.
    if plan.task == Task::Inference {
        for lower in [Precision::Int8, Precision::Int4] {
            if precision_code(lower) <= precision_code(from) {
                continue;
            }
            cost += COST_QUANTISE_STEP;
            levels.push((
                change("lower_precision", format!("{} → {lower}", plan.precision)),
                cost,
                set,
                precision_code(lower),
            ));
        }
    }
    levels
}

fn set_context(request: &mut EstimateRequest, tokens: u32) {
    request.context = tokens;
}

fn context_levels(plan: &EstimateRequest, lang: Lang) -> Vec<Level> {
    let mut levels: Vec<Level> = vec![as_planned()];
    let (mut context, mut steps) = (plan.context, 0);
    while context / 2 >= MIN_CONTEXT {
        context /= 2;
        steps += 1;
        levels.push((
            change(
                "shorter_context",
                lang.pick(
                    format!("序列长度 {} → {context}", plan.context),
                    format!("sequence length {} → {context}", plan.context),
                ),
            ),
            COST_CONTEXT_STEP * steps,
            set_context,
            context,
        ));
    }
    levels
}

fn task_levels(plan: &EstimateRequest, lang: Lang) -> Vec<Level> {
    let mut levels: Vec<Level> = vec![as_planned()];
    let to_lora: fn(&mut EstimateRequest, u32) = |r, _| r.task = Task::Lora;
    let to_qlora: fn(&mut EstimateRequest, u32) = |r, _| {
        r.task = Task::Qlora;
        r.precision = Precision::Bf16;
    };
    match plan.task {
        Task::Full => {
            levels.push((
                change(
                    "lora_instead_of_full",
                    lang.pick("全参微调 → LoRA", "full fine-tune → LoRA"),
                ),
                COST_LORA,
                to_lora,
                0,
            ));
            levels.push((
                change(
                    "qlora_instead_of_lora",
                    lang.pick(
                        "全参微调 → QLoRA（4-bit 底座）",
                        "full fine-tune → QLoRA (4-bit base)",
                    ),
                ),
                COST_LORA + COST_QLORA,
                to_qlora,
                0,
            ));
        }
        Task::Lora => levels.push((
            change(
                "qlora_instead_of_lora",
                lang.pick("LoRA → QLoRA（4-bit 底座）", "LoRA → QLoRA (4-bit base)"),
            ),
            COST_QLORA,
            to_qlora,
            0,
        )),
        _ => {}
    }
    levels
}

/// The cheapest combination of remedies whose estimate fits in `usable_gib` (the card's memory
/// less the estimator's headroom), ties broken by fewer changes, then by more room left; when
/// none fits, the combination that comes closest, with `fits: false`. `None` when the plan
/// cannot be estimated or there is nothing to change.
pub fn search(plan: &EstimateRequest, usable_gib: f64, lang: Lang) -> Option<RemedyPlan> {
    let knobs = [
        batch_levels(plan, lang),
        checkpointing_levels(plan, lang),
        precision_levels(plan),
        context_levels(plan, lang),
        task_levels(plan, lang),
    ];
    let mut best_fit: Option<RemedyPlan> = None;
    let mut closest: Option<RemedyPlan> = None;
    let mut choice = [0usize; 5];
    loop {
        if choice.iter().any(|&c| c > 0) {
            let mut setting = plan.clone();
            let mut changes = Vec::new();
            let mut cost = 0;
            for (knob, &level) in knobs.iter().zip(&choice) {
                let (what, level_cost, apply, value) = &knob[level];
                apply(&mut setting, *value);
                cost += level_cost;
                changes.extend(what.clone());
            }
            if let Ok(e) = estimate(&setting) {
                let candidate = RemedyPlan {
                    changes,
                    setting,
                    need_gib: (e.total_gib * 100.0).round() / 100.0,
                    fits: e.total_gib <= usable_gib,
                    cost,
                };
                if candidate.fits {
                    if best_fit.as_ref().is_none_or(|b| cheaper(&candidate, b)) {
                        best_fit = Some(candidate);
                    }
                } else if closest
                    .as_ref()
                    .is_none_or(|c| candidate.need_gib < c.need_gib)
                {
                    closest = Some(candidate);
                }
            }
        }
        // The next combination, like an odometer.
        let mut knob = 0;
        loop {
            if knob == choice.len() {
                return best_fit.or(closest);
            }
            choice[knob] += 1;
            if choice[knob] < knobs[knob].len() {
                break;
            }
            choice[knob] = 0;
            knob += 1;
        }
    }
}

fn cheaper(a: &RemedyPlan, b: &RemedyPlan) -> bool {
    (a.cost, a.changes.len())
        .cmp(&(b.cost, b.changes.len()))
        .then(b.need_gib.total_cmp(&a.need_gib))
        .is_lt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Optimizer;

    fn lora_7b(batch: u32) -> EstimateRequest {
        EstimateRequest {
            params_b: Some(7.0),
            model: None,
            task: Task::Lora,
            precision: Precision::Bf16,
            context: 2048,
            batch,
            optimizer: Optimizer::Adamw,
            grad_checkpointing: true,
            lora_rank: 16,
        }
    }

    fn need(request: &EstimateRequest) -> f64 {
        estimate(request).expect("estimates").total_gib
    }

    #[test]
    fn a_7b_lora_at_batch_16_fits_a_24gb_card_with_a_smaller_batch_and_accumulation() {
        let plan = lora_7b(16);
        let usable = 24.0 * 0.9;
        assert!(need(&plan) > usable, "the premise: batch 16 does not fit");
        let found = search(&plan, usable, Lang::En).expect("a plan");
        assert!(found.fits, "{found:?}");
        assert_eq!(found.changes.len(), 1, "one change is enough: {found:?}");
        assert_eq!(found.changes[0].remedy, "smaller_batch");
        assert!(
            found.changes[0].label.contains("gradient accumulation"),
            "the effective batch is kept: {}",
            found.changes[0].label
        );
        // The cheapest: the largest batch that fits, not batch 1.
        let bigger = EstimateRequest {
            batch: found.setting.batch * 2,
            ..plan
        };
        assert!(
            need(&bigger) > usable,
            "batch {} would not fit",
            bigger.batch
        );
    }

    #[test]
    fn checkpointing_the_plan_already_has_is_never_offered() {
        let plan = lora_7b(64);
        let found = search(&plan, 10.0, Lang::En).expect("a plan");
        assert!(
            found
                .changes
                .iter()
                .all(|c| c.remedy != "grad_checkpointing"),
            "{found:?}"
        );
        let off = EstimateRequest {
            grad_checkpointing: false,
            ..plan
        };
        let levels = checkpointing_levels(&off, Lang::En);
        assert_eq!(levels.len(), 2, "offered when it is off");
    }

    #[test]
    fn remedies_combine_when_no_single_one_closes_the_gap() {
        // A 13B full fine-tune on a 48 GB card: LoRA alone is not enough at this batch.
        let plan = EstimateRequest {
            params_b: Some(13.0),
            task: Task::Full,
            batch: 8,
            context: 4096,
            ..lora_7b(8)
        };
        let usable = 48.0 * 0.9;
        let found = search(&plan, usable, Lang::En).expect("a plan");
        assert!(found.fits, "{found:?}");
        assert!(need(&found.setting) <= usable);
        assert!(
            found.changes.len() >= 2,
            "more than one change was needed: {found:?}"
        );
    }

    #[test]
    fn when_nothing_fits_the_closest_is_returned_as_not_fitting() {
        let plan = EstimateRequest {
            params_b: Some(70.0),
            ..lora_7b(4)
        };
        let found = search(&plan, 4.0, Lang::En).expect("a plan");
        assert!(!found.fits);
        assert!(found.need_gib > 4.0);
    }

    #[test]
    fn labels_follow_the_language() {
        let found = search(&lora_7b(16), 21.6, Lang::ZhCn).expect("a plan");
        assert!(found.changes[0].label.contains("梯度累积"), "{found:?}");
    }
}

//! `cargo bench -p leasehold-core --bench explain_log`: how long `explain` takes on a 50 MB
//! training log with a CUDA OOM in the middle (and on 50 MB of one line, and of keywords that
//! need confirming). Goal: under a second each, in release. Prints the figures; asserts nothing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use leasehold_core::diagnose::Lang;
use leasehold_core::explain::{explain, ExplainContext};

const SIZE: usize = 50 * 1024 * 1024;
const GOAL: Duration = Duration::from_secs(1);
const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated.\n";

fn training_log() -> String {
    let mut text = String::with_capacity(SIZE + 4096);
    let mut i = 0usize;
    while text.len() < SIZE / 2 {
        line(&mut text, i);
        i += 1;
    }
    text.push_str(OOM);
    while text.len() < SIZE {
        line(&mut text, i);
        i += 1;
    }
    text
}

fn line(text: &mut String, i: usize) {
    use std::fmt::Write;
    let _ = match i % 4 {
        0 => writeln!(
            text,
            "Epoch 3: {}%|█████     | {i}/900000 [01:23<01:10, 2.96it/s, loss=0.{i}]",
            i % 100
        ),
        1 => writeln!(
            text,
            "[2026-11-30 10:00:00] INFO trainer.py:412 step {i} lr=2e-5 grad_norm=0.93"
        ),
        2 => writeln!(text, "  File \"/root/work/train.py\", line {i}, in forward"),
        _ => writeln!(
            text,
            "{{\"loss\": 1.{i}, \"learning_rate\": 1.9e-05, \"epoch\": 0.{i}}}"
        ),
    };
}

fn time(name: &str, text: &str) {
    let context = ExplainContext::new(Lang::En);
    let mut best = Duration::MAX;
    let mut codes = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let explanation = black_box(explain(black_box(text), &context));
        best = best.min(started.elapsed());
        codes = explanation
            .findings
            .iter()
            .map(|f| f.code.clone())
            .collect();
    }
    let mb = text.len() as f64 / (1024.0 * 1024.0);
    println!(
        "{name:<34} {mb:>5.1} MB  best {:>7.1} ms  ({:>6.0} MB/s)  {} goal {GOAL:?}  → {codes:?}",
        best.as_secs_f64() * 1000.0,
        mb / best.as_secs_f64(),
        if best < GOAL { "within" } else { "OVER" },
    );
}

fn main() {
    time("training log, OOM in the middle", &training_log());
    time("one 50 MB line", &"x".repeat(SIZE));
    time("50 MB of \"Killed\" lines", &"Killed\n".repeat(SIZE / 7));
    time(
        "50 MB of \"out of memory\" lines",
        &"out of memory in step\n".repeat(SIZE / 22),
    );
}

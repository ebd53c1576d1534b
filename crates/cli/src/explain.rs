//! `leasehold explain [FILE | -] [--instance NAME] [--lang zh-CN|en] --json`: what an error
//! text means and what to do. With `--instance`, the instance's latest Verify facts and planned
//! task sharpen the answer (which disk is full, what a too-big job needs). Exit 0 with findings;
//! 2 for an empty input, an unreadable file or an unknown instance.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use leasehold_core::diagnose::Lang;
use leasehold_core::explain::{self, ExplainContext, ExplainError, Explanation};
use leasehold_core::store::Store;

use crate::output;

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The error text (a traceback, a log, dmesg lines); `-` or nothing reads standard input.
    file: Option<PathBuf>,
    /// Use this recorded instance's latest Verify run and planned task.
    #[arg(long)]
    instance: Option<String>,
    /// Language of the findings: zh-CN or en (default from LANG).
    #[arg(long)]
    lang: Option<String>,
    #[arg(long)]
    json: bool,
}

fn read_input(file: Option<&Path>) -> Result<String, ExplainError> {
    let mut bytes = Vec::new();
    match file.filter(|f| f.as_os_str() != "-") {
        Some(path) => {
            bytes = std::fs::read(path).map_err(|source| ExplainError::Read {
                path: path.display().to_string(),
                source,
            })?;
        }
        None => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|source| ExplainError::Read {
                    path: "standard input".to_owned(),
                    source,
                })?;
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    explain::check_input(&text)?;
    Ok(text)
}

pub fn run(db: &Path, args: &ExplainArgs) -> ExitCode {
    let lang = match &args.lang {
        Some(tag) => match Lang::from_tag(tag) {
            Some(lang) => lang,
            None => return output::bad_input(format!("--lang {tag}: use zh-CN or en")),
        },
        None => Lang::from_locale(std::env::var("LANG").ok().as_deref()),
    };
    let text = match read_input(args.file.as_deref()) {
        Ok(text) => text,
        Err(err) => return output::fail(&err),
    };
    let context = match &args.instance {
        Some(name) => match load(db, name, lang) {
            Ok(context) => context,
            Err(err) => return output::fail(&err),
        },
        None => ExplainContext::new(lang),
    };
    let explanation = explain::explain(&text, &context);
    if args.json {
        return output::print_json(&explanation);
    }
    print_text(&explanation, lang);
    ExitCode::SUCCESS
}

fn load(db: &Path, name: &str, lang: Lang) -> Result<ExplainContext, ExplainError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| ExplainError::Read {
            path: "the async runtime".to_owned(),
            source,
        })?;
    runtime.block_on(async {
        let store = Store::open(db).await?;
        let context = explain::load_context(&store, name, lang).await;
        store.close().await;
        context
    })
}

fn print_text(explanation: &Explanation, lang: Lang) {
    if let Some(oom) = &explanation.oom {
        say!(
            "{}: {:.0} / {:.0} MiB free, {} MiB requested, {} MiB reserved, {:.0} MiB other processes → {}",
            lang.pick("CUDA 显存", "CUDA memory"),
            oom.free_mib,
            oom.total_mib,
            oom.tried_mib,
            oom.reserved_mib.map_or("?".to_owned(), |r| format!("{r:.0}")),
            oom.other_processes_mib,
            serde_json::to_value(oom.cause)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        );
        say!("");
    }
    for finding in &explanation.findings {
        crate::verify::print_finding(finding, lang);
    }
}

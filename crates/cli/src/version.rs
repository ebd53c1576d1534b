//! `leasehold version [--check] [--json] [--lang zh-CN|en]`: this build's version, date and
//! channel; with `--check`, whether a newer one exists. The `--check --json` shape is a contract:
//! `{"current","latest","notes","url","pub_date"}`; exit 0 up to date, 10 when a newer version
//! exists, 1 when no update server answered (each one's failure named on stderr).

use std::process::ExitCode;

use leasehold_core::update::{self, Endpoints};

use crate::output;

/// Exit code when a newer version exists.
pub const EXIT_NEWER: u8 = 10;

#[derive(clap::Args)]
pub struct VersionArgs {
    /// Ask the update servers whether a newer version exists (LEASEHOLD_UPDATE_URLS replaces
    /// the built-in list).
    #[arg(long)]
    check: bool,
    #[arg(long)]
    json: bool,
    /// The language of the release notes (zh-CN or en; English by default).
    #[arg(long, default_value = "en", value_parser = ["zh-CN", "en"])]
    lang: String,
}

pub fn run(args: &VersionArgs) -> ExitCode {
    if !args.check {
        let info = update::build_info();
        if args.json {
            return output::print_json(&info);
        }
        say!("Leasehold {} ({} channel)", info.version, info.channel);
        match info.build_date {
            Some(date) => say!("built {}", date.format("%Y-%m-%d")),
            None => say!("a development build (no build date)"),
        }
        return ExitCode::SUCCESS;
    }
    let endpoints = match Endpoints::from_env() {
        Ok(endpoints) => endpoints,
        Err(err) => return output::fail(&err),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            esay!("error: could not start the async runtime: {err}");
            return ExitCode::from(output::EXIT_FAILURE);
        }
    };
    let checked = match runtime.block_on(update::check(
        &endpoints,
        update::CURRENT_VERSION,
        &args.lang,
    )) {
        Ok(checked) => checked,
        Err(err) => return output::fail(&err),
    };
    let code = if checked.newer { EXIT_NEWER } else { 0 };
    if args.json {
        return match serde_json::to_string_pretty(&checked.check) {
            Ok(text) => {
                say!("{text}");
                ExitCode::from(code)
            }
            Err(err) => {
                esay!("error: could not encode the result as JSON: {err}");
                ExitCode::from(output::EXIT_FAILURE)
            }
        };
    }
    let check = &checked.check;
    if checked.newer {
        say!(
            "Leasehold {} is available (this is {}).",
            check.latest,
            check.current
        );
        if let Some(date) = check.pub_date {
            say!("published {}", date.format("%Y-%m-%d"));
        }
        if let Some(notes) = &check.notes {
            for line in notes.lines() {
                say!("  {line}");
            }
        }
        match &check.url {
            Some(url) => say!("download: {url}"),
            None => say!("no download for this computer in this release"),
        }
    } else {
        say!("Leasehold {} is up to date.", check.current);
    }
    ExitCode::from(code)
}

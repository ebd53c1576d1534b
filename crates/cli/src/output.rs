//! How the CLI reports: JSON or text on stdout, errors on stderr, and the exit-code contract
//! (0 success, 2 bad input, 1 any other failure).

use std::process::ExitCode;

use leasehold_core::printable::printable;
use leasehold_core::Coded;
use serde::Serialize;

/// Exit code for bad input: nothing was written, the message says what to fix.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for every other failure.
pub const EXIT_FAILURE: u8 = 1;

/// Write one line to stdout. A closed pipe (`leasehold … | head`) ends the program quietly,
/// as Unix tools do, instead of the panic `println!` would raise. Escape sequences and control
/// characters are removed first: lines carry what the instance sent (GPU names, paths,
/// remote errors), and the user's terminal must not obey them.
pub fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = line.to_string();
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = stdout
        .write_all(printable(&text).as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
    {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: could not write to stdout: {err}");
        std::process::exit(i32::from(EXIT_FAILURE));
    }
}

/// Write one line to stderr, cleaned like [`say`].
pub fn esay(line: std::fmt::Arguments<'_>) {
    eprintln!("{}", printable(&line.to_string()));
}

/// A progress line redrawn in place on a terminal (`\r`, clear the line), else one line each.
pub fn progress_line(line: &str, interactive: bool) {
    use std::io::Write;
    let line = printable(line);
    let mut stderr = std::io::stderr().lock();
    let _ = if interactive {
        write!(stderr, "\r\x1b[2K{line}").and_then(|()| stderr.flush())
    } else {
        writeln!(stderr, "{line}")
    };
}

/// Print `value` as pretty JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) -> ExitCode {
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            say!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: could not encode the result as JSON: {err}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Report a core error on stderr (`error: message [code]`) and map it to the exit code.
pub fn fail<E: Coded>(err: &E) -> ExitCode {
    esay(format_args!("error: {err} [{}]", err.code()));
    ExitCode::from(if err.is_bad_input() {
        EXIT_BAD_INPUT
    } else {
        EXIT_FAILURE
    })
}

/// Report bad command-line input that never reached core.
pub fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    esay(format_args!("error: {message}"));
    ExitCode::from(EXIT_BAD_INPUT)
}

//! How the CLI reports: JSON or text on stdout, errors on stderr, and the exit-code contract
//! (0 success, 2 bad input, 1 any other failure).

use std::process::ExitCode;

use leasehold_core::Coded;
use serde::Serialize;

/// Exit code for bad input: nothing was written, the message says what to fix.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for every other failure.
pub const EXIT_FAILURE: u8 = 1;

/// Write one line to stdout. A closed pipe (`leasehold … | head`) ends the program quietly,
/// as Unix tools do, instead of the panic `println!` would raise.
pub fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = stdout
        .write_fmt(line)
        .and_then(|()| stdout.write_all(b"\n"))
    {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: could not write to stdout: {err}");
        std::process::exit(i32::from(EXIT_FAILURE));
    }
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
    eprintln!("error: {err} [{}]", err.code());
    ExitCode::from(if err.is_bad_input() {
        EXIT_BAD_INPUT
    } else {
        EXIT_FAILURE
    })
}

/// Report bad command-line input that never reached core.
pub fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
}

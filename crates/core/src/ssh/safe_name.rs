//! Names the instance sends us become local file names only when each is one plain path
//! component.
//!
//! The instance is untrusted: a hostile or broken SFTP server can answer READDIR with
//! `../../.bashrc`, `/etc/cron.d/x` or `C:\Users\…`, and joining that onto the folder the user
//! chose would write outside it (the class of OpenSSH's CVE-2019-6111). Every remote name that
//! becomes a local path goes through [`local_child`]: a folder download today, a backup later.

use std::path::{Path, PathBuf};

/// Why a remote entry name cannot be used as a local file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeName {
    #[error("the name is empty")]
    Empty,
    #[error("the name is `.` or `..`, which points at a folder, not an entry")]
    DotOrDotDot,
    #[error("the name contains a path separator (`/` or `\\`)")]
    Separator,
    #[error("the name contains a NUL byte")]
    Nul,
    #[error("the name starts with a drive letter")]
    Drive,
    #[error("the name contains `:`, which Windows reads as a drive or a hidden data stream")]
    Colon,
    #[error("the name is reserved on Windows (a device name, or it ends in a dot or a space)")]
    WindowsReserved,
    #[error("the name contains a character Windows does not allow in file names (< > \" | ? * or a control character)")]
    WindowsForbiddenChar,
}

/// Check that `name`, as sent by the instance, is one plain path component on this computer.
pub fn check_entry_name(name: &str) -> Result<(), UnsafeName> {
    check_for(name, cfg!(windows))
}

/// `dir` joined with the remote entry `name`, or why `name` is refused. The result is always
/// directly inside `dir`.
pub fn local_child(dir: &Path, name: &str) -> Result<PathBuf, UnsafeName> {
    check_entry_name(name)?;
    Ok(dir.join(name))
}

/// The rules, for this computer's platform or (in tests) the other one: names must be safe on
/// Windows laptops as much as on Linux ones.
fn check_for(name: &str, windows: bool) -> Result<(), UnsafeName> {
    if name.is_empty() {
        return Err(UnsafeName::Empty);
    }
    if name == "." || name == ".." {
        return Err(UnsafeName::DotOrDotDot);
    }
    if name.contains('\0') {
        return Err(UnsafeName::Nul);
    }
    if name.contains(['/', '\\']) {
        return Err(UnsafeName::Separator);
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(UnsafeName::Drive);
    }
    if windows {
        if name.contains(':') {
            return Err(UnsafeName::Colon);
        }
        // Windows drops trailing dots and spaces (`.. ` would become `..`), and opens devices
        // for these names whatever their extension.
        if name.ends_with(['.', ' ']) {
            return Err(UnsafeName::WindowsReserved);
        }
        if name
            .chars()
            .any(|c| matches!(c, '<' | '>' | '"' | '|' | '?' | '*') || c.is_ascii_control())
        {
            return Err(UnsafeName::WindowsForbiddenChar);
        }
        let stem = name
            .split('.')
            .next()
            .unwrap_or(name)
            .trim_end()
            .to_ascii_uppercase();
        let device = matches!(
            stem.as_str(),
            "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
        ) || stem
            .strip_prefix("COM")
            .or_else(|| stem.strip_prefix("LPT"))
            .is_some_and(|n| {
                // Windows counts the superscript digits as port numbers too.
                (n.len() == 1 && n.as_bytes()[0].is_ascii_digit()) || matches!(n, "¹" | "²" | "³")
            });
        if device {
            return Err(UnsafeName::WindowsReserved);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept_as_they_are() {
        for name in [
            "model.safetensors",
            ".bashrc",
            "...",
            "..hidden",
            "checkpoint-2026-01-01T10:00",
            "数据集",
            "a b",
        ] {
            assert_eq!(
                check_for(name, false),
                Ok(()),
                "{name:?} is an ordinary name"
            );
        }
        assert_eq!(
            local_child(Path::new("/dl"), "a.bin"),
            Ok(PathBuf::from("/dl/a.bin"))
        );
    }

    #[test]
    fn names_that_leave_the_folder_are_refused_on_every_platform() {
        for windows in [false, true] {
            for (name, why) in [
                ("", UnsafeName::Empty),
                (".", UnsafeName::DotOrDotDot),
                ("..", UnsafeName::DotOrDotDot),
                ("../../.bashrc", UnsafeName::Separator),
                ("/etc/passwd", UnsafeName::Separator),
                ("a/b", UnsafeName::Separator),
                ("..\\..\\x", UnsafeName::Separator),
                ("\\\\server\\share", UnsafeName::Separator),
                ("x\0y", UnsafeName::Nul),
                ("C:", UnsafeName::Drive),
                ("c:evil.txt", UnsafeName::Drive),
            ] {
                assert_eq!(
                    check_for(name, windows),
                    Err(why),
                    "{name:?} (windows: {windows})"
                );
            }
        }
    }

    #[test]
    fn windows_also_refuses_streams_devices_and_trailing_dots() {
        for name in [
            "a:stream",
            "CON",
            "nul.txt",
            "com1",
            "LPT9.log",
            ".. ",
            "name.",
            "x ",
            "aux.txt",
            "AUX",
            "con .txt",
            "COM¹",
            "lpt³.dat",
            "COM0",
            "what?",
            "a<b",
            "x|y",
            "star*",
            "say\"hi\"",
            "tab\there",
            "bell\u{7}",
        ] {
            assert!(
                check_for(name, true).is_err(),
                "{name:?} is unsafe on Windows"
            );
        }
        for name in ["ab:stream", "CON", "com1"] {
            assert_eq!(check_for(name, false), Ok(()), "{name:?} is fine on Linux");
        }
        for name in [
            "console",
            "COM10",
            "contract.txt",
            "COM",
            "auxiliary.txt",
            "数据集 v2",
        ] {
            assert_eq!(check_for(name, true), Ok(()), "{name:?} is no device name");
        }
    }

    #[test]
    fn local_child_never_leaves_the_folder() {
        let dir = Path::new("/downloads/run");
        for name in ["../x", "/x", "..", "x/../../y"] {
            assert!(local_child(dir, name).is_err(), "{name:?} must be refused");
        }
    }
}

//! Reading the `ssh …` command a provider hands out (`ssh -p 12345 root@region-1.autodl.com`,
//! `ssh root@1.2.3.4 -p 22 -i ~/.ssh/id_ed25519`, `-o Port=…`, `-J jump`) into where to connect.
//!
//! It follows OpenSSH's own option grammar (getopt letters, options after the destination,
//! `ssh://` destinations) so anything that works in a terminal works here. Options that do not
//! change where or as whom we connect are kept in `ignored` and shown to the user, never
//! silently dropped.

use serde::Serialize;
use ts_rs::TS;

use super::SshError;

/// OpenSSH option letters that take a value (`ssh(1)` synopsis).
const OPTIONS_WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";
/// OpenSSH option letters that are plain flags.
const FLAG_OPTIONS: &str = "46AaCfGgKkMNnqsTtVvXxYy";
/// Programs people paste by mistake; naming them beats a confusing "bad option" message.
const NOT_SSH: &[&str] = &["scp", "sftp", "rsync", "mosh", "telnet", "sshpass", "putty"];

/// What a pasted `ssh …` command says, before `~/.ssh/config` is consulted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SshCommand {
    /// The destination host as written (an address or a `~/.ssh/config` alias).
    pub host: String,
    /// `None` when the command gave no port (so `~/.ssh/config` or 22 decides).
    pub port: Option<u16>,
    pub user: Option<String>,
    /// `-i` files in the order given, as written (`~` not yet expanded).
    pub identity_files: Vec<String>,
    /// ProxyJump hops, each `[user@]host[:port]`, in the order they are crossed.
    pub jump: Vec<String>,
    /// `-o HostName=…` overrides the address while `host` stays the name the user knows.
    pub host_name: Option<String>,
    /// `-o ServerAliveInterval=N` in seconds.
    pub server_alive_interval: Option<u64>,
    /// `-o ConnectTimeout=N` in seconds.
    pub connect_timeout: Option<u64>,
    /// Options and remote command words that do not affect the connection, as written.
    pub ignored: Vec<String>,
}

/// The stable JSON shape of `leasehold ssh-parse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SshCommandSummary {
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub identity_file: Option<String>,
    pub jump: Vec<String>,
    pub ignored: Vec<String>,
}

impl SshCommand {
    /// The command rebuilt from what was understood — where and as whom to connect, and how —
    /// without the options that change nothing and the remote command words, where a pasted
    /// password would land. This, never the pasted line, is what gets stored.
    pub fn to_command_line(&self) -> String {
        let mut words: Vec<String> = vec!["ssh".to_owned()];
        if let Some(port) = self.port {
            words.extend(["-p".to_owned(), port.to_string()]);
        }
        for file in &self.identity_files {
            words.extend(["-i".to_owned(), file.clone()]);
        }
        if !self.jump.is_empty() {
            words.extend(["-J".to_owned(), self.jump.join(",")]);
        }
        if let Some(name) = &self.host_name {
            words.extend(["-o".to_owned(), format!("HostName={name}")]);
        }
        if let Some(seconds) = self.server_alive_interval {
            words.extend(["-o".to_owned(), format!("ServerAliveInterval={seconds}")]);
        }
        if let Some(seconds) = self.connect_timeout {
            words.extend(["-o".to_owned(), format!("ConnectTimeout={seconds}")]);
        }
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        words.push(match &self.user {
            Some(user) => format!("{user}@{host}"),
            None => host,
        });
        crate::shell::join(words.iter().map(String::as_str))
    }

    pub fn summary(&self) -> SshCommandSummary {
        SshCommandSummary {
            host: self.host.clone(),
            port: self.port.unwrap_or(22),
            user: self.user.clone(),
            identity_file: self.identity_files.first().cloned(),
            jump: self.jump.clone(),
            ignored: self.ignored.clone(),
        }
    }
}

fn bad(part: impl Into<String>, problem: impl Into<String>) -> SshError {
    SshError::BadCommand {
        part: part.into(),
        problem: problem.into(),
    }
}

/// Parse a pasted `ssh …` command line. The leading `ssh` may be left out.
pub fn parse_ssh_command(input: &str) -> Result<SshCommand, SshError> {
    // Errors name the offending option or word, never the whole input: a pasted line can carry
    // a password (`… root@h MyPassw0rd`), and errors reach logs.
    // A command pasted over several lines: Windows ends them with CRLF, and a `\` before the
    // line end continues it (shlex would leave an empty word there, read as an empty host).
    let input = crate::shell::unix_newlines(input).replace("\\\n", " ");
    let words = shlex::split(input.trim())
        .ok_or_else(|| bad("", "unbalanced quotes; paste the command exactly as given"))?;
    let mut rest = words.as_slice();
    let Some(first) = rest.first() else {
        return Err(bad("", "the command is empty"));
    };
    let program = first
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(first)
        .to_ascii_lowercase();
    if program == "ssh" || program == "ssh.exe" {
        rest = &rest[1..];
    } else if NOT_SSH.contains(&program.trim_end_matches(".exe")) {
        return Err(bad(first.as_str(), "this is not an ssh command"));
    }

    let mut parsed = SshCommand::default();
    let mut destination: Option<String> = None;
    let mut remote_command: Vec<String> = Vec::new();
    let mut options_ended = false;
    let mut index = 0;
    while index < rest.len() {
        let word = &rest[index];
        index += 1;
        if !remote_command.is_empty() {
            remote_command.push(word.clone());
            continue;
        }
        if !options_ended && word == "--" {
            options_ended = true;
            continue;
        }
        if !options_ended && word.len() > 1 && word.starts_with('-') {
            let letters: Vec<char> = word[1..].chars().collect();
            let mut at = 0;
            while at < letters.len() {
                let letter = letters[at];
                at += 1;
                if FLAG_OPTIONS.contains(letter) {
                    parsed.ignored.push(format!("-{letter}"));
                } else if OPTIONS_WITH_VALUE.contains(letter) {
                    let attached: String = letters[at..].iter().collect();
                    let value = if attached.is_empty() {
                        let Some(next) = rest.get(index) else {
                            return Err(bad(format!("-{letter}"), "this option needs a value"));
                        };
                        index += 1;
                        next.clone()
                    } else {
                        attached
                    };
                    apply_option(&mut parsed, letter, &value)?;
                    break;
                } else {
                    return Err(bad(
                        format!("-{letter}"),
                        format!("ssh has no option -{letter}"),
                    ));
                }
            }
            continue;
        }
        if destination.is_none() {
            destination = Some(word.clone());
        } else {
            remote_command.push(word.clone());
        }
    }
    if !remote_command.is_empty() {
        parsed.ignored.push(remote_command.join(" "));
    }
    let Some(destination) = destination else {
        return Err(bad(
            "",
            "no destination: expected user@host after the options",
        ));
    };
    apply_destination(&mut parsed, &destination)?;
    Ok(parsed)
}

fn apply_option(parsed: &mut SshCommand, letter: char, value: &str) -> Result<(), SshError> {
    match letter {
        'p' => parsed.port = Some(parse_port(value, &format!("-p {value}"))?),
        'l' => parsed.user = Some(parse_user(value, &format!("-l {value}"))?),
        'i' => parsed.identity_files.push(value.to_owned()),
        'J' => parsed.jump = parse_jump_list(value, &format!("-J {value}"))?,
        'o' => apply_config_option(parsed, value)?,
        other => parsed.ignored.push(format!("-{other} {value}")),
    }
    Ok(())
}

/// `-o Key=Value` or `-o "Key Value"`; OpenSSH keywords are case-insensitive.
fn apply_config_option(parsed: &mut SshCommand, option: &str) -> Result<(), SshError> {
    let part = format!("-o {option}");
    let (key, value) = option
        .split_once('=')
        .or_else(|| option.trim().split_once(char::is_whitespace))
        .map(|(k, v)| (k.trim(), v.trim()))
        .ok_or_else(|| bad(part.as_str(), "expected -o Key=Value"))?;
    if key.is_empty() || value.is_empty() {
        return Err(bad(part.as_str(), "expected -o Key=Value"));
    }
    match key.to_ascii_lowercase().as_str() {
        "port" => {
            parsed.port.get_or_insert(parse_port(value, &part)?);
        }
        "user" => {
            if parsed.user.is_none() {
                parsed.user = Some(parse_user(value, &part)?);
            }
        }
        "identityfile" => parsed.identity_files.push(value.to_owned()),
        "proxyjump" => {
            if parsed.jump.is_empty() {
                parsed.jump = parse_jump_list(value, &part)?;
            }
        }
        "hostname" => {
            validate_host(value, &part)?;
            parsed.host_name.get_or_insert(value.to_owned());
        }
        "serveraliveinterval" => {
            let seconds = value
                .parse()
                .map_err(|_| bad(part.as_str(), "expected a number of seconds"))?;
            parsed.server_alive_interval.get_or_insert(seconds);
        }
        "connecttimeout" => {
            let seconds = value
                .parse()
                .map_err(|_| bad(part.as_str(), "expected a number of seconds"))?;
            parsed.connect_timeout.get_or_insert(seconds);
        }
        _ => parsed.ignored.push(part),
    }
    Ok(())
}

/// `user@host`, `host`, or `ssh://[user@]host[:port]`.
fn apply_destination(parsed: &mut SshCommand, destination: &str) -> Result<(), SshError> {
    if let Some(uri) = destination.strip_prefix("ssh://") {
        let uri = uri.trim_end_matches('/');
        let (user, host_port) = match uri.rsplit_once('@') {
            Some((user, rest)) => (Some(user), rest),
            None => (None, uri),
        };
        let (host, port) = split_host_port(host_port, destination)?;
        if let Some(port) = port {
            parsed.port.get_or_insert(port);
        }
        if let Some(user) = user {
            parsed.user = Some(parse_user(user, destination)?);
        }
        validate_host(&host, destination)?;
        parsed.host = host;
        return Ok(());
    }
    let (user, host) = match destination.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, destination),
    };
    if let Some(user) = user {
        // OpenSSH: a user in the destination wins over -l.
        parsed.user = Some(parse_user(user, destination)?);
    }
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    validate_host(host, destination)?;
    parsed.host = host.to_owned();
    Ok(())
}

/// `host`, `host:port`, `[v6]:port`.
fn split_host_port(text: &str, part: &str) -> Result<(String, Option<u16>), SshError> {
    if let Some(bracketed) = text.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err(bad(part, "unclosed [ in the host"));
        };
        let port = match after.strip_prefix(':') {
            Some(port) => Some(parse_port(port, part)?),
            None if after.is_empty() => None,
            None => return Err(bad(part, "unexpected text after ]")),
        };
        return Ok((host.to_owned(), port));
    }
    match text.rsplit_once(':') {
        // More than one colon without brackets is a bare IPv6 address.
        Some((host, port)) if !host.contains(':') => {
            Ok((host.to_owned(), Some(parse_port(port, part)?)))
        }
        _ => Ok((text.to_owned(), None)),
    }
}

fn parse_port(value: &str, part: &str) -> Result<u16, SshError> {
    match value.trim().parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => Err(bad(part, format!("`{value}` is not a port (1–65535)"))),
    }
}

fn parse_user(value: &str, part: &str) -> Result<String, SshError> {
    if value.is_empty() || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(part, "the user name is empty or contains spaces"));
    }
    Ok(value.to_owned())
}

fn validate_host(host: &str, part: &str) -> Result<(), SshError> {
    let allowed = |c: char| c.is_alphanumeric() || ".-_:%".contains(c);
    if host.is_empty() {
        return Err(bad(part, "the host is empty"));
    }
    if !host.chars().all(allowed) || host.starts_with('-') {
        return Err(bad(part, format!("`{host}` is not a host name or address")));
    }
    Ok(())
}

fn parse_jump_list(value: &str, part: &str) -> Result<Vec<String>, SshError> {
    if value.eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    value
        .split(',')
        .map(|hop| {
            JumpHost::parse(hop)
                .map_err(|_| bad(part, format!("`{hop}` is not [user@]host[:port]")))?;
            Ok(hop.trim().to_owned())
        })
        .collect()
}

/// One ProxyJump hop: `[user@]host[:port]` or `ssh://[user@]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpHost {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl JumpHost {
    pub fn parse(text: &str) -> Result<Self, SshError> {
        let text = text.trim();
        let body = text.strip_prefix("ssh://").unwrap_or(text);
        let (user, host_port) = match body.rsplit_once('@') {
            Some((user, rest)) => (Some(parse_user(user, text)?), rest),
            None => (None, body),
        };
        let (host, port) = split_host_port(host_port, text)?;
        validate_host(&host, text)?;
        Ok(Self { user, host, port })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(input: &str) -> SshCommandSummary {
        parse_ssh_command(input)
            .unwrap_or_else(|err| panic!("{input:?} must parse: {err}"))
            .summary()
    }

    fn bad_part(input: &str) -> String {
        match parse_ssh_command(input) {
            Err(SshError::BadCommand { part, .. }) => part,
            other => panic!("{input:?} must be rejected as a bad command, got {other:?}"),
        }
    }

    #[test]
    fn autodl_style_command_gives_host_port_and_user() {
        assert_eq!(
            summary("ssh -p 12345 root@region-1.autodl.com"),
            SshCommandSummary {
                host: "region-1.autodl.com".into(),
                port: 12345,
                user: Some("root".into()),
                identity_file: None,
                jump: vec![],
                ignored: vec![],
            }
        );
    }

    #[test]
    fn a_command_pasted_with_windows_line_ends_reads_the_same() {
        for pasted in [
            "ssh -p 12345 root@region-1.autodl.com\r\n",
            "ssh -p 12345 \\\r\n  root@region-1.autodl.com\r\n",
        ] {
            let s = summary(pasted);
            assert_eq!(
                (s.host.as_str(), s.port, s.user.as_deref()),
                ("region-1.autodl.com", 12345, Some("root")),
                "{pasted:?}: no CR may end up in the host"
            );
        }
    }

    #[test]
    fn options_after_the_destination_still_count() {
        let s = summary("ssh root@1.2.3.4 -p 22 -i ~/.ssh/id_ed25519");
        assert_eq!((s.host.as_str(), s.port), ("1.2.3.4", 22));
        assert_eq!(s.identity_file.as_deref(), Some("~/.ssh/id_ed25519"));
    }

    #[test]
    fn dash_o_port_user_and_proxyjump_are_honoured() {
        let s = summary("ssh -o Port=2200 -o User=ubuntu -o ProxyJump=bastion:2222 gpu-box");
        assert_eq!(s.port, 2200);
        assert_eq!(s.user.as_deref(), Some("ubuntu"));
        assert_eq!(s.jump, vec!["bastion:2222".to_owned()]);
        assert!(s.ignored.is_empty(), "nothing was ignored: {:?}", s.ignored);
    }

    #[test]
    fn dash_o_accepts_a_space_separated_value() {
        assert_eq!(summary("ssh -o 'Port 2022' h").port, 2022);
    }

    #[test]
    fn jump_list_keeps_every_hop_in_order() {
        let s = summary("ssh -J admin@jump1,jump2:2222 root@10.0.0.5");
        assert_eq!(
            s.jump,
            vec!["admin@jump1".to_owned(), "jump2:2222".to_owned()]
        );
    }

    #[test]
    fn unknown_options_and_the_remote_command_are_reported_not_dropped() {
        let s = summary(
            "ssh -CNg -L 6006:127.0.0.1:6006 -o StrictHostKeyChecking=no root@h -p 2 nvidia-smi -L",
        );
        assert_eq!(
            s.ignored,
            vec![
                "-C",
                "-N",
                "-g",
                "-L 6006:127.0.0.1:6006",
                "-o StrictHostKeyChecking=no",
                "nvidia-smi -L"
            ],
            "tunnel flags and the remote command must be listed"
        );
        assert_eq!(s.port, 2, "-p after the destination still applies");
    }

    #[test]
    fn attached_values_and_ssh_uris_parse() {
        let s = summary("ssh -p2222 -lroot example.org");
        assert_eq!(
            (s.port, s.user.as_deref()),
            (2222, Some("root")),
            "-p2222 / -lroot"
        );
        let s = summary("ssh ssh://alice@[2001:db8::1]:2200");
        assert_eq!(
            (s.host.as_str(), s.port, s.user.as_deref()),
            ("2001:db8::1", 2200, Some("alice"))
        );
    }

    #[test]
    fn the_word_ssh_may_be_left_out() {
        assert_eq!(summary("root@1.2.3.4 -p 2022").port, 2022);
    }

    #[test]
    fn default_port_is_22_and_user_stays_unset() {
        let s = summary("ssh my-alias");
        assert_eq!((s.port, s.user), (22, None));
    }

    #[test]
    fn malformed_commands_name_the_wrong_part() {
        assert_eq!(bad_part("ssh -p abc root@h"), "-p abc");
        assert_eq!(bad_part("ssh -p 70000 root@h"), "-p 70000");
        assert_eq!(bad_part("ssh root@h -p"), "-p");
        assert_eq!(bad_part("ssh -Z root@h"), "-Z");
        assert_eq!(bad_part("scp file root@h:"), "scp");
        assert_eq!(bad_part("ssh @host"), "@host");
        assert_eq!(bad_part("ssh root@bad/host"), "root@bad/host");
        assert_eq!(bad_part("ssh -J 'a b' h"), "-J a b");
        assert_eq!(bad_part("ssh -o Port= h"), "-o Port=");
        assert!(matches!(
            parse_ssh_command("ssh -p 22"),
            Err(SshError::BadCommand { .. })
        ));
        assert!(matches!(
            parse_ssh_command("ssh 'root@h"),
            Err(SshError::BadCommand { .. })
        ));
        assert!(matches!(
            parse_ssh_command("   "),
            Err(SshError::BadCommand { .. })
        ));
    }

    #[test]
    fn errors_never_repeat_the_whole_pasted_line() {
        for input in [
            "ssh 'root@h pw-must-not-leak",
            "ssh -p 22 root@h pw-must-not-leak 'unclosed",
            "ssh -Zpw-must-not-leak root@h",
            "ssh -p 22 -- ",
        ] {
            let err = parse_ssh_command(input).expect_err("rejected");
            for text in [err.to_string(), format!("{err:?}")] {
                assert!(
                    !text.contains("pw-must-not-leak") && !text.contains(input.trim()),
                    "{input:?}: the error must not echo the input: {text}"
                );
            }
        }
    }

    #[test]
    fn the_stored_command_keeps_what_was_understood_and_drops_trailing_words() {
        for (pasted, stored) in [
            (
                "ssh -p 40022 root@region-9.autodl.com MyPassw0rd!",
                "ssh -p 40022 root@region-9.autodl.com",
            ),
            (
                "ssh root@1.2.3.4 -i '~/keys/my key' -L 8888:localhost:8888 -o ServerAliveInterval=30",
                "ssh -i '~/keys/my key' -o 'ServerAliveInterval=30' root@1.2.3.4",
            ),
            (
                "ssh ssh://alice@[2001:db8::1]:2200",
                "ssh -p 2200 'alice@[2001:db8::1]'",
            ),
            ("ssh -J ops@b1,b2:2222 gpu", "ssh -J 'ops@b1,b2:2222' gpu"),
        ] {
            let parsed = parse_ssh_command(pasted).expect("parses");
            let line = parsed.to_command_line();
            assert_eq!(line, stored, "{pasted:?}");
            let again = parse_ssh_command(&line).expect("the stored line parses");
            assert_eq!(
                SshCommand {
                    ignored: Vec::new(),
                    ..parsed
                },
                again,
                "{pasted:?}: storing loses nothing that matters"
            );
        }
    }

    #[test]
    fn jump_host_parses_user_host_and_port() {
        assert_eq!(
            JumpHost::parse("ops@bastion.example:2222").expect("valid hop"),
            JumpHost {
                user: Some("ops".into()),
                host: "bastion.example".into(),
                port: Some(2222)
            }
        );
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(input in ".{0,80}") {
            let _ = parse_ssh_command(&input);
        }
    }
}

//! Credentials inside URLs, cut out before a URL is stored, logged or shown.
//!
//! What the instance reports is untrusted and may carry secrets: a pip index URL with a token
//! (`https://__token__:glpat-…@gitlab.example/…/simple`), a private conda channel
//! (`https://conda.anaconda.org/t/TOKEN/…`), a signed download link. Probe facts, run messages
//! and logs keep the URL's shape (scheme, host, path) so findings still work, with the secret
//! parts replaced by `***`. This is the one place that knows what those parts are.
//!
//! Provider answers get the same treatment ([`redact_secrets`]): a 401 that quotes the API key
//! must not put it into `last_error`, a log or the screen.
//!
//! A problem report (`report`) goes further, because it leaves this computer in the user's hands:
//! [`redact_everything`] also hides secrets outside URLs (`password=…`, `"token": "…"`, bearer
//! tokens, well-known key formats, private key blocks) and every host: IP addresses, host names
//! and the `user@host` of an SSH login.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// What replaces a secret.
pub const REDACTED: &str = "***";

/// `scheme://userinfo@` — the user and password (or a bare token) before the host.
static USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@]+@").expect("userinfo pattern")
});
/// anaconda.org's private channels: `/t/TOKEN/` right after the host.
static CHANNEL_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(://[^/\s]+/t/)[^/\s]+").expect("channel token pattern"));
/// Query parameters that carry credentials or signatures.
static SECRET_QUERY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)([?&](?:token|access_token|auth|api[_-]?key|key|password|passwd|pwd|secret|sig|signature|x-amz-signature|x-amz-credential)=)[^&#\s]+",
    )
    .expect("query pattern")
});

/// `Bearer TOKEN` (an Authorization header quoted back).
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+").expect("bearer pattern"));
/// `api_key=…`, `apikey: …`, `token=…` outside a URL's query too.
static KEY_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b((?:api[_-]?key|apikey|access[_-]?token|token)\s*[=:]\s*"?)[^\s&"',;}]+"#)
        .expect("key assignment pattern")
});

/// `text` with `secret` itself (the API key of the call, when known), every `Bearer …`, every
/// `api_key=…` and the credentials of every URL replaced by [`REDACTED`].
pub fn redact_secrets(text: &str, secret: Option<&str>) -> String {
    let mut out = match secret.map(str::trim).filter(|s| s.len() >= 4) {
        Some(secret) => text.replace(secret, REDACTED),
        None => text.to_owned(),
    };
    for (pattern, keep) in [(&*BEARER, "${1}***"), (&*KEY_ASSIGNMENT, "${1}***")] {
        if pattern.is_match(&out) {
            out = pattern.replace_all(&out, keep).into_owned();
        }
    }
    redact_urls(&out).into_owned()
}

/// `text` with the credentials of every URL in it replaced by [`REDACTED`]; borrowed back
/// unchanged when there were none.
pub fn redact_urls(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for (pattern, keep) in [
        (&*USERINFO, "${1}***@"),
        (&*CHANNEL_TOKEN, "${1}***"),
        (&*SECRET_QUERY, "${1}***"),
    ] {
        if pattern.is_match(&out) {
            out = Cow::Owned(pattern.replace_all(&out, keep).into_owned());
        }
    }
    out
}

/// What replaces a host name or address in a problem report.
pub const HOST: &str = "<host>";

/// A private key block, whole.
static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    )
    .expect("private key pattern")
});
/// `name=value`, `name: value`, `"name": "value"` where the name says it is a secret.
static NAMED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)((?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth(?:orization)?|credential|cookie|session|key)\w*"?\s*[:=]\s*"?)(?:Bearer\s+|Basic\s+)?[^\s",;&}]+"#,
    )
    .expect("named secret pattern")
});
/// `Bearer …` outside a named field, in a problem report (eight characters or more, so the
/// word alone in a sentence stays).
static REPORT_BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}").expect("bearer pattern")
});
/// Key formats recognisable on their own: OpenAI/Anthropic `sk-…`, GitHub `ghp_…`, GitLab
/// `glpat-…`, RunPod `rpa_…`, Hugging Face `hf_…`, AWS `AKIA…`, Slack `xox?-…`, JWTs.
static KNOWN_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{16,}|rpa_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{16,}|AKIA[A-Z0-9]{16}|xox[abpr]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
    )
    .expect("known key pattern")
});
/// An IPv4 address (with an optional port, kept).
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b")
        .expect("ipv4 pattern")
});
/// An IPv6 address: eight hex groups, or fewer around a `::` (`fe80::1`, `2001:db8::5`, `::1`);
/// a clock time (`10:00:00`) has neither.
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\[?(?:\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b|\b(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,5})?\b|::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})\b)\]?",
    )
    .expect("ipv6 pattern")
});
/// `user@host` of an SSH login (the host may already be hidden).
static LOGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-Za-z0-9._-]+@(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|<host>)")
        .expect("login pattern")
});
/// A dotted name whose last part is letters: a host name, unless it is a file name.
static DOTTED_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9-]{1,63})*\.([a-z]{2,24})\b")
        .expect("host name pattern")
});
/// Endings that make a dotted name a file, not a host.
const FILE_ENDINGS: &[&str] = &[
    "log",
    "json",
    "toml",
    "yaml",
    "yml",
    "rs",
    "txt",
    "md",
    "py",
    "sh",
    "ts",
    "js",
    "svelte",
    "db",
    "sqlite",
    "wal",
    "shm",
    "deb",
    "rpm",
    "exe",
    "dll",
    "so",
    "dylib",
    "msi",
    "zip",
    "gz",
    "tar",
    "tgz",
    "xz",
    "whl",
    "pt",
    "pth",
    "ckpt",
    "bin",
    "safetensors",
    "gguf",
    "onnx",
    "csv",
    "conf",
    "cfg",
    "ini",
    "pub",
    "sig",
    "pem",
    "key",
    "lock",
    "html",
    "css",
    "png",
    "jpg",
    "svg",
    "ico",
    "ipynb",
    "out",
    "err",
    "pid",
    "sock",
    "service",
    "nsi",
    "cu",
    "cpp",
    "h",
    "c",
    "hpp",
];

/// First parts that make a two-part dotted name one of Leasehold's error or finding codes
/// (`stop.could_not_confirm`, `gpu.idle_peers`), which a report keeps.
const CODE_AREAS: &[&str] = &[
    "account", "app", "backup", "billing", "catalog", "connect", "diagnose", "explain", "form",
    "install", "job", "monitor", "probe", "release", "remind", "report", "settings", "ssh", "stop",
    "store", "team", "tray", "update", "verify", "watchdog", "webhook", "gpu", "oom", "cuda",
    "driver", "disk", "network", "torch", "errors",
];

fn is_code(name: &str) -> bool {
    let mut parts = name.split('.');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(area), Some(_), None) if CODE_AREAS.contains(&area)
    )
}

/// `text` with every secret and every host hidden: for what leaves this computer in the
/// user's hands (the problem report). Stronger than [`redact_urls`], and it may hide harmless
/// dotted names too; that is the right way to fail.
pub fn redact_everything(text: &str) -> String {
    let text = PRIVATE_KEY.replace_all(text, REDACTED);
    let text = redact_urls(&text).into_owned();
    let text = NAMED_SECRET.replace_all(&text, "${1}***");
    let text = REPORT_BEARER.replace_all(&text, "${1}***");
    let text = KNOWN_KEY.replace_all(&text, REDACTED);
    let text = IPV6.replace_all(&text, HOST);
    let text = IPV4.replace_all(&text, HOST);
    let text = DOTTED_NAME.replace_all(&text, |found: &regex::Captures<'_>| {
        let ending = found[1].to_ascii_lowercase();
        if FILE_ENDINGS.contains(&ending.as_str()) || is_code(&found[0]) {
            found[0].to_owned()
        } else {
            HOST.to_owned()
        }
    });
    LOGIN.replace_all(&text, "<user>@<host>").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_password_before_the_host_are_cut() {
        assert_eq!(
            redact_urls("https://__token__:glpat-Sx9@gitlab.example/api/v4/simple"),
            "https://***@gitlab.example/api/v4/simple"
        );
        assert_eq!(
            redact_urls("index-url = http://alice:s3cret@10.0.0.5:8080/simple/ and more"),
            "index-url = http://***@10.0.0.5:8080/simple/ and more",
            "URLs inside free text are found too"
        );
    }

    #[test]
    fn channel_tokens_and_secret_query_parameters_are_cut() {
        assert_eq!(
            redact_urls("https://conda.anaconda.org/t/ab-12cd/private/linux-64"),
            "https://conda.anaconda.org/t/***/private/linux-64"
        );
        assert_eq!(
            redact_urls("https://x.example/w.bin?X-Amz-Signature=abc123&size=1&token=zz"),
            "https://x.example/w.bin?X-Amz-Signature=***&size=1&token=***"
        );
    }

    #[test]
    fn a_key_quoted_back_by_a_provider_is_cut() {
        assert_eq!(
            redact_secrets(
                "invalid key rp_SECRET123 (Authorization: Bearer rp_SECRET123)",
                Some("rp_SECRET123")
            ),
            "invalid key *** (Authorization: Bearer ***)"
        );
        assert_eq!(
            redact_secrets(r#"{"detail":"bad api_key=abc123def, token: zz9"}"#, None),
            r#"{"detail":"bad api_key=***, token: ***"}"#
        );
        assert_eq!(
            redact_secrets("Bearer eyJ.abc-_x", None),
            "Bearer ***",
            "no key known: the pattern alone"
        );
        assert_eq!(redact_secrets("pod not found", Some("k")), "pod not found");
    }

    #[test]
    fn urls_without_credentials_are_left_alone() {
        for url in [
            "https://pypi.tuna.tsinghua.edu.cn/simple",
            "https://mirrors.aliyun.com/pypi/simple/",
            "git@github.com:me/repo.git",
            "plain text with an @ sign",
        ] {
            assert!(
                matches!(redact_urls(url), Cow::Borrowed(_)),
                "{url} has nothing to cut"
            );
        }
    }

    #[test]
    fn a_problem_report_keeps_no_secret_or_host() {
        let cases = [
            ("password=hunter2 next", "password=*** next"),
            (r#"{"api_key": "rpa_ABCDEFGHIJKLMNOPQRST"}"#, r#"{"api_key": "***"}"#),
            ("Authorization: Bearer abcdefghijk123", "Authorization: ***"),
            ("sent bearer abcdefghijk123", "sent bearer ***"),
            ("token: glpat-abcdefghijklmnopqrst", "token: ***"),
            ("key sk-proj-abcdefghijklmnopqrstuv in text", "key *** in text"),
            ("dial 203.0.113.7:22 failed", "dial <host>:22 failed"),
            ("connect [2001:db8::5]:2222", "connect <host>:2222"),
            ("ssh root@gpu.example-cloud.cn -p 22", "ssh <user>@<host> -p 22"),
            ("host=region-1.autodl.com port=18372", "host=<host> port=18372"),
            ("GET https://api.runpod.io/v2/pods", "GET https://<host>/v2/pods"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----",
                "***",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_everything(input), expected, "{input}");
        }
        let kept = "2026-12-04T10:00:00.123Z INFO leasehold_core::update::fetch: opened leasehold.2026-12-04.log and settings.json; update.unreachable, stop.could_not_confirm at 12:30:01.5";
        assert_eq!(
            redact_everything(kept),
            kept,
            "file names, codes and times stay"
        );
    }
}

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
}

//! Where `latest.json` is looked for: a mirror in China first (GitHub downloads time out there),
//! then the main release page; `LEASEHOLD_UPDATE_URLS` (comma-separated) replaces the list, which
//! is how the tests point the app and the CLI at a server on loopback.

use url::Url;

use super::UpdateError;

/// Replaces [`DEFAULT_ENDPOINTS`] when set: comma-separated URLs of `latest.json`, tried in order.
pub const URLS_ENV: &str = "LEASEHOLD_UPDATE_URLS";

/// Tried in order; the next one only when the one before gave no usable answer.
pub const DEFAULT_ENDPOINTS: &[&str] = &[
    "https://gitee.com/leasehold/leasehold/releases/download/latest/latest.json",
    "https://github.com/leasehold/leasehold/releases/latest/download/latest.json",
];

/// The update servers to ask, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints(Vec<Url>);

impl Endpoints {
    /// [`URLS_ENV`] when set and not empty, else the built-in list.
    pub fn from_env() -> Result<Self, UpdateError> {
        match std::env::var(URLS_ENV) {
            Ok(text) if !text.trim().is_empty() => Self::parse_list(&text),
            _ => Ok(Self::built_in()),
        }
    }

    pub fn built_in() -> Self {
        Self(
            DEFAULT_ENDPOINTS
                .iter()
                .map(|text| Url::parse(text).expect("the built-in endpoints are valid URLs"))
                .collect(),
        )
    }

    /// Comma-separated URLs; each must be https, or http to this computer.
    pub fn parse_list(text: &str) -> Result<Self, UpdateError> {
        let urls = text
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(checked_url)
            .collect::<Result<Vec<_>, _>>()?;
        if urls.is_empty() {
            return Err(UpdateError::BadEndpoint {
                value: text.to_owned(),
            });
        }
        Ok(Self(urls))
    }

    pub fn urls(&self) -> &[Url] {
        &self.0
    }
}

/// `text` as a URL Leasehold may fetch an update description or a download from: https anywhere,
/// plain http only on this computer (the tests' server), nothing else.
pub fn checked_url(text: &str) -> Result<Url, UpdateError> {
    let bad = || UpdateError::BadEndpoint {
        value: crate::redact::redact_urls(text).into_owned(),
    };
    let url = Url::parse(text).map_err(|_| bad())?;
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(bad()),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_puts_the_mirror_first() {
        let list = Endpoints::built_in();
        assert_eq!(list.urls().len(), 2);
        assert!(list.urls()[0].as_str().contains("gitee.com"));
        assert!(list.urls()[1].as_str().contains("github.com"));
    }

    #[test]
    fn a_list_from_the_environment_keeps_its_order() {
        let list =
            Endpoints::parse_list(" http://127.0.0.1:9/a.json , https://example.org/latest.json,")
                .expect("valid");
        let urls: Vec<_> = list.urls().iter().map(Url::as_str).collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:9/a.json",
                "https://example.org/latest.json"
            ]
        );
    }

    #[test]
    fn plain_http_elsewhere_and_other_schemes_are_refused() {
        for bad in [
            "http://example.org/latest.json",
            "ftp://127.0.0.1/latest.json",
            "file:///tmp/latest.json",
            "not a url",
            " , ",
        ] {
            let err = Endpoints::parse_list(bad).expect_err(bad);
            assert_eq!(crate::Coded::code(&err), "update.bad_endpoint", "{bad}");
        }
        assert!(checked_url("http://localhost:8080/x").is_ok());
        assert!(checked_url("http://[::1]:8080/x").is_ok());
    }
}

//! Python, pip and conda as a login shell sees them (conda is only on PATH there on
//! AutoDL-style images), plus the pip index the user configured (a China mirror or not).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::sections::{Part, PartOutput};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct PythonFacts {
    pub python3_path: Option<String>,
    pub python3_version: Option<String>,
    pub python_path: Option<String>,
    pub python_version: Option<String>,
    pub pip_path: Option<String>,
    pub pip_version: Option<String>,
    /// `global.index-url` (or any `*.index-url`) from `pip config list`.
    pub pip_index_url: Option<String>,
}

impl PythonFacts {
    pub fn has_python(&self) -> bool {
        self.python3_version.is_some() || self.python_version.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub struct CondaFacts {
    pub path: Option<String>,
    pub version: Option<String>,
    pub active_env: Option<String>,
    pub active_prefix: Option<String>,
    pub root_prefix: Option<String>,
    pub envs: Vec<String>,
    pub channels: Vec<String>,
}

pub(crate) fn python_parts() -> Vec<Part> {
    vec![
        Part::new("python3", "command -v python3 && python3 --version"),
        Part::new("python", "command -v python && python --version"),
        Part::new("pip", "command -v pip && pip --version"),
        // Read pip's config files (global, then user, then environment-specific; later wins)
        // and PIP_INDEX_URL directly: `pip config list` would start pip a second time.
        Part::new(
            "pip-config",
            r#"for f in /etc/pip.conf /etc/xdg/pip/pip.conf "$HOME/.pip/pip.conf" "$HOME/.config/pip/pip.conf" ${VIRTUAL_ENV:+"$VIRTUAL_ENV/pip.conf"} ${CONDA_PREFIX:+"$CONDA_PREFIX/pip.conf"}; do [ -r "$f" ] && cat "$f" && echo; done
[ -n "${PIP_INDEX_URL:-}" ] && echo "env.index-url=$PIP_INDEX_URL"
true"#,
        ),
    ]
}

pub(crate) fn conda_parts() -> Vec<Part> {
    vec![Part::new(
        "conda",
        r#"c=$(command -v conda 2>/dev/null)
if [ -z "$c" ]; then for f in "$HOME/miniconda3/bin/conda" "$HOME/anaconda3/bin/conda" /root/miniconda3/bin/conda /opt/conda/bin/conda; do [ -x "$f" ] && { c=$f; break; }; done; fi
if [ -n "$c" ]; then echo "path=$c"; "$c" info --json; else echo "conda: not found"; (exit 127); fi"#,
    )]
}

/// `/usr/bin/python3` then `Python 3.10.12` → (path, version).
fn path_and_version(
    part: Option<&PartOutput>,
    version_prefix: &str,
) -> (Option<String>, Option<String>) {
    let Some(part) = part else {
        return (None, None);
    };
    let mut path = None;
    let mut version = None;
    for line in part.text.lines().map(str::trim) {
        if line.starts_with('/') && path.is_none() {
            path = Some(line.to_owned());
        } else if let Some(rest) = line.strip_prefix(version_prefix) {
            version = rest.split_whitespace().next().map(str::to_owned);
        }
    }
    (path, version)
}

pub(crate) fn parse_python(parts: &HashMap<String, PartOutput>) -> PythonFacts {
    let (python3_path, python3_version) = path_and_version(parts.get("python3"), "Python ");
    let (python_path, python_version) = path_and_version(parts.get("python"), "Python ");
    let (pip_path, pip_version) = path_and_version(parts.get("pip"), "pip ");
    PythonFacts {
        python3_path,
        python3_version,
        python_path,
        python_version,
        pip_path,
        pip_version,
        pip_index_url: parts.get("pip-config").and_then(|p| pip_index_url(&p.text)),
    }
}

/// The index pip will use: the last `index-url` set in the config files (`index-url = URL`
/// or `pip config list`'s `global.index-url='URL'`), with `PIP_INDEX_URL` winning.
pub fn pip_index_url(text: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().replace('_', "-");
        if key == "index-url" || key.ends_with(".index-url") {
            let value = value.trim().trim_matches(|c| c == '\'' || c == '"').trim();
            if !value.is_empty() {
                // Facts are stored and shown: a token in the URL must not be.
                found = Some(crate::redact::redact_urls(value).into_owned());
            }
        }
    }
    found
}
pub(crate) fn parse_conda(part: Option<&PartOutput>) -> Option<CondaFacts> {
    let part = part?;
    let path = part
        .text
        .lines()
        .find_map(|l| l.strip_prefix("path="))
        .map(|p| p.trim().to_owned());
    path.as_ref()?;
    let json_start = part.text.find('{');
    let info: serde_json::Value = json_start
        .and_then(|at| serde_json::from_str(&part.text[at..]).ok())
        .unwrap_or(serde_json::Value::Null);
    let string = |key: &str| info.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let list = |key: &str| -> Vec<String> {
        info.get(key)
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str())
                    .map(|v| crate::redact::redact_urls(v).into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    Some(CondaFacts {
        path,
        version: string("conda_version"),
        active_env: string("active_prefix_name"),
        active_prefix: string("active_prefix"),
        root_prefix: string("root_prefix").or_else(|| string("conda_prefix")),
        envs: list("envs"),
        channels: list("channels"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str, exit: i32) -> PartOutput {
        PartOutput {
            text: text.to_owned(),
            exit: Some(exit),
        }
    }

    #[test]
    fn python_pip_and_mirror_are_read() {
        let parts: HashMap<String, PartOutput> = [
            ("python3", part("/root/miniconda3/bin/python3\nPython 3.10.14", 0)),
            ("python", part("", 1)),
            ("pip", part("/root/miniconda3/bin/pip\npip 24.0 from /root/miniconda3/lib/python3.10/site-packages/pip (python 3.10)", 0)),
            ("pip-config", part("global.index-url='https://pypi.tuna.tsinghua.edu.cn/simple'\n", 0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let facts = parse_python(&parts);
        assert_eq!(facts.python3_version.as_deref(), Some("3.10.14"));
        assert_eq!(
            facts.python3_path.as_deref(),
            Some("/root/miniconda3/bin/python3")
        );
        assert_eq!(facts.python_version, None);
        assert_eq!(facts.pip_version.as_deref(), Some("24.0"));
        assert_eq!(
            facts.pip_index_url.as_deref(),
            Some("https://pypi.tuna.tsinghua.edu.cn/simple")
        );
        assert!(facts.has_python());
    }

    #[test]
    fn credentials_in_the_pip_index_and_conda_channels_are_never_kept() {
        let config = "[global]\nindex-url = https://__token__:glpat-must-not-leak@gitlab.example/api/v4/projects/7/packages/pypi/simple\n";
        let url = pip_index_url(config).expect("an index is configured");
        assert_eq!(
            url, "https://***@gitlab.example/api/v4/projects/7/packages/pypi/simple",
            "the host and path stay for the mirror finding; the token goes"
        );
        let text = "path=/opt/conda/bin/conda\n{\"channels\": [\"https://conda.anaconda.org/t/tk-must-not-leak/corp/linux-64\"]}";
        let facts = parse_conda(Some(&part(text, 0))).expect("conda found");
        assert_eq!(
            facts.channels,
            vec!["https://conda.anaconda.org/t/***/corp/linux-64"]
        );
    }

    #[test]
    fn conda_info_json_is_read_after_rc_noise() {
        let text = "path=/root/miniconda3/bin/conda\n{\"conda_version\": \"24.1.2\", \"active_prefix\": \"/root/miniconda3\", \"active_prefix_name\": \"base\", \"root_prefix\": \"/root/miniconda3\", \"envs\": [\"/root/miniconda3\", \"/root/miniconda3/envs/dl\"], \"channels\": [\"https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/main/linux-64\"]}";
        let facts = parse_conda(Some(&part(text, 0))).expect("conda found");
        assert_eq!(facts.version.as_deref(), Some("24.1.2"));
        assert_eq!(facts.active_env.as_deref(), Some("base"));
        assert_eq!(facts.envs.len(), 2);
        assert!(parse_conda(Some(&part("conda: not found", 127))).is_none());
    }
}

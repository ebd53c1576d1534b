//! The two languages findings are written in, and a small builder so each rule reads as its
//! text in both languages side by side.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Finding, FixStep, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS, Default)]
#[ts(export)]
pub enum Lang {
    #[serde(rename = "zh-CN")]
    ZhCn,
    #[default]
    #[serde(rename = "en")]
    En,
}

impl Lang {
    /// `zh-CN`, `zh`, `en`, `en-US` (case-insensitive); `None` for anything else.
    pub fn from_tag(tag: &str) -> Option<Self> {
        let lower = tag.trim().to_ascii_lowercase().replace('_', "-");
        if lower == "zh" || lower.starts_with("zh-") {
            Some(Self::ZhCn)
        } else if lower == "en" || lower.starts_with("en-") {
            Some(Self::En)
        } else {
            None
        }
    }

    /// From a POSIX locale such as `zh_CN.UTF-8`; English when unset or unknown.
    pub fn from_locale(locale: Option<&str>) -> Self {
        locale
            .map(|l| l.split('.').next().unwrap_or(l))
            .and_then(Self::from_tag)
            .unwrap_or_default()
    }

    pub fn pick(self, zh: impl Into<String>, en: impl Into<String>) -> String {
        match self {
            Self::ZhCn => zh.into(),
            Self::En => en.into(),
        }
    }
}

/// Builds one finding; each text is given in both languages and the context's is kept.
pub(crate) struct Draft {
    lang: Lang,
    finding: Finding,
}

pub(crate) fn draft(lang: Lang, code: &str, severity: Severity) -> Draft {
    Draft {
        lang,
        finding: Finding {
            code: code.to_owned(),
            severity,
            title: String::new(),
            detail: String::new(),
            fix: Vec::new(),
            evidence: Vec::new(),
            subject: None,
        },
    }
}

impl Draft {
    pub fn title(mut self, zh: impl Into<String>, en: impl Into<String>) -> Self {
        self.finding.title = self.lang.pick(zh, en);
        self
    }

    pub fn detail(mut self, zh: impl Into<String>, en: impl Into<String>) -> Self {
        self.finding.detail = self.lang.pick(zh, en);
        self
    }

    pub fn step(mut self, zh: impl Into<String>, en: impl Into<String>) -> Self {
        self.finding.fix.push(FixStep {
            text: self.lang.pick(zh, en),
            command: None,
        });
        self
    }

    pub fn run(
        mut self,
        zh: impl Into<String>,
        en: impl Into<String>,
        command: impl Into<String>,
    ) -> Self {
        self.finding.fix.push(FixStep {
            text: self.lang.pick(zh, en),
            command: Some(command.into()),
        });
        self
    }

    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.finding.subject = Some(subject.into());
        self
    }

    pub fn evidence(mut self, line: impl Into<String>) -> Self {
        let line = line.into();
        if !line.trim().is_empty() && !self.finding.evidence.contains(&line) {
            self.finding.evidence.push(line);
        }
        self
    }

    pub fn evidence_all<I: IntoIterator<Item = S>, S: Into<String>>(mut self, lines: I) -> Self {
        for line in lines {
            self = self.evidence(line);
        }
        self
    }

    /// Add a step only when `condition` holds (keeps rule bodies linear).
    pub fn when(self, condition: bool, add: impl FnOnce(Self) -> Self) -> Self {
        if condition {
            add(self)
        } else {
            self
        }
    }

    pub fn build(self) -> Finding {
        self.finding
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locales_pick_the_language() {
        assert_eq!(Lang::from_locale(Some("zh_CN.UTF-8")), Lang::ZhCn);
        assert_eq!(Lang::from_locale(Some("en_US.UTF-8")), Lang::En);
        assert_eq!(Lang::from_locale(Some("C.UTF-8")), Lang::En);
        assert_eq!(Lang::from_locale(None), Lang::En);
        assert_eq!(Lang::from_tag("zh-CN"), Some(Lang::ZhCn));
        assert_eq!(Lang::from_tag("fr"), None);
    }
}

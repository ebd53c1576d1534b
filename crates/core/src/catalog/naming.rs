//! Matching GPU names the way people and nvidia-smi spell them.
//!
//! The same card reaches us as "NVIDIA GeForce RTX 4090" (new drivers), "GeForce RTX 4090" (old
//! drivers), "RTX 4090" or "4090" (a user), "NVIDIA RTX 6000 Ada Gene..." (a truncated table
//! column) or "NVIDIA A100-SXM4-80GB". Names are reduced to tokens (lower case, vendor words
//! dropped, letters split from digits) and compared token-wise. Product-variant words (Ti, SUPER,
//! D, Ada, NVL, Laptop, Max-Q) must agree, so "RTX 2080" never matches a 2080 Ti.

/// Words that say nothing about which card it is.
const FILLER: &[&str] = &["nvidia", "geforce", "tesla", "gpu", "graphics", "card"];

/// Words that make a different product when present on one side only.
const VARIANT: &[&str] = &[
    "ti", "super", "d", "ada", "nvl", "laptop", "mobile", "max", "q", "sff",
];

/// A name reduced to comparable tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameKey {
    pub tokens: Vec<String>,
    /// The input ended in "..." (nvidia-smi cut the column), so it is a prefix of the real name.
    pub truncated: bool,
}

impl NameKey {
    pub fn new(name: &str) -> Self {
        let trimmed = name.trim();
        let (body, truncated) = match trimmed
            .strip_suffix("...")
            .or_else(|| trimmed.strip_suffix('…'))
        {
            Some(body) => (body, true),
            None => (trimmed, false),
        };
        let mut spaced = String::with_capacity(body.len() * 2);
        let mut previous: Option<char> = None;
        for ch in body.chars() {
            let ch = ch.to_ascii_lowercase();
            if !ch.is_ascii_alphanumeric() {
                spaced.push(' ');
                previous = None;
                continue;
            }
            if let Some(prev) = previous {
                if prev.is_ascii_digit() != ch.is_ascii_digit() {
                    spaced.push(' ');
                }
            }
            spaced.push(ch);
            previous = Some(ch);
        }
        let tokens = spaced
            .split_whitespace()
            .filter(|token| !FILLER.contains(token))
            .map(str::to_owned)
            .collect();
        Self { tokens, truncated }
    }

    fn joined(&self) -> String {
        self.tokens.join(" ")
    }
}

/// How well a candidate name matches the input; lower is better, `None` is no match.
pub fn match_rank(input: &NameKey, candidate: &NameKey) -> Option<u32> {
    if input.tokens.is_empty() {
        return None;
    }
    if input.tokens == candidate.tokens {
        return Some(0);
    }
    if input.truncated {
        // Truncation can cut a word, so compare as text; the cut part is unknown, hence rank 1.
        let prefix = input.joined();
        return candidate.joined().starts_with(&prefix).then_some(1);
    }
    if let Some(extra) = extra_tokens(&input.tokens, &candidate.tokens) {
        // The input is a shorter spelling ("RTX 4090", "A100 80GB"): fewer extra words is closer.
        if extra.iter().any(|token| VARIANT.contains(&token.as_str())) {
            return None;
        }
        return Some(10 + extra.len() as u32);
    }
    if let Some(extra) = extra_tokens(&candidate.tokens, &input.tokens) {
        // The input says more than the candidate ("RTX 4090 24GB"): prefer the most specific.
        if extra.iter().any(|token| VARIANT.contains(&token.as_str())) {
            return None;
        }
        return Some(100 + extra.len() as u32);
    }
    None
}

/// The tokens of `longer` that remain after matching every token of `shorter` in order, or
/// `None` when `shorter` is not an in-order subsequence of `longer`.
fn extra_tokens<'a>(shorter: &[String], longer: &'a [String]) -> Option<Vec<&'a String>> {
    let mut extra = Vec::new();
    let mut wanted = shorter.iter().peekable();
    for token in longer {
        if wanted.peek() == Some(&token) {
            wanted.next();
        } else {
            extra.push(token);
        }
    }
    wanted.peek().is_none().then_some(extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(input: &str, candidate: &str) -> Option<u32> {
        match_rank(&NameKey::new(input), &NameKey::new(candidate))
    }

    #[test]
    fn vendor_words_case_and_punctuation_do_not_matter() {
        assert_eq!(rank("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"), Some(0));
        assert_eq!(
            rank("nvidia a100-sxm4-80gb", "NVIDIA A100-SXM4-80GB"),
            Some(0)
        );
        assert_eq!(
            rank("RTX 4090D", "NVIDIA GeForce RTX 4090 D"),
            Some(0),
            "4090D is 4090 D"
        );
    }

    #[test]
    fn truncated_table_names_match_as_prefixes() {
        assert_eq!(
            rank(
                "NVIDIA RTX 6000 Ada Gene...",
                "NVIDIA RTX 6000 Ada Generation"
            ),
            Some(1)
        );
        assert_eq!(rank("Tesla V100-PCIE...", "Tesla V100-PCIE-32GB"), Some(1));
        assert_eq!(rank("Tesla V100-PCIE...", "Tesla V100-SXM2-16GB"), None);
    }

    #[test]
    fn short_names_match_and_prefer_the_fewest_extra_words() {
        let plain = rank("4090", "NVIDIA GeForce RTX 4090").expect("4090 matches RTX 4090");
        assert_eq!(
            rank("4090", "NVIDIA GeForce RTX 4090 D"),
            None,
            "D is another product"
        );
        let pcie = rank("A100 80GB", "NVIDIA A100 80GB PCIe").expect("matches the PCIe board");
        let sxm = rank("A100 80GB", "NVIDIA A100-SXM4-80GB").expect("matches the SXM board");
        assert!(plain < 20 && pcie < sxm, "fewer extra words rank first");
    }

    #[test]
    fn product_variants_never_match_their_base_card() {
        assert_eq!(rank("RTX 2080", "NVIDIA GeForce RTX 2080 Ti"), None);
        assert_eq!(rank("RTX 6000", "NVIDIA RTX 6000 Ada Generation"), None);
        assert_eq!(rank("NVIDIA GeForce RTX 4090 Laptop GPU", "RTX 4090"), None);
        assert_eq!(rank("H100", "NVIDIA H100 NVL"), None);
    }

    #[test]
    fn names_with_extra_memory_suffixes_still_match() {
        assert!(rank("NVIDIA GeForce RTX 4090 24GB", "RTX 4090").is_some());
    }

    #[test]
    fn empty_or_symbol_only_names_match_nothing() {
        assert_eq!(rank("", "RTX 4090"), None);
        assert_eq!(rank("...", "RTX 4090"), None);
        assert_eq!(rank("NVIDIA", "NVIDIA L4"), None);
    }
}

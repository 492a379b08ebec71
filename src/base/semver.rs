//! `github.com/blang/semver/v4` as Kyverno uses it: strict `Parse` (conditions' semver
//! fallback, validate.md §8.3) and `ParseRange` (`semver_compare`, §12.2), including its
//! quirks (range parts shorter than two characters are dropped by `splitAndTrim`).

use std::cmp::Ordering;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<Pre>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pre {
    Num(u64),
    Alpha(String),
}

fn numeric(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("Invalid character(s) found in number {s:?}"));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!("Number must not contain leading zeroes {s:?}"));
    }
    s.parse()
        .map_err(|e: std::num::ParseIntError| e.to_string())
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Version {
    /// blang `Parse`: `MAJOR.MINOR.PATCH[-pre][+build]`, no leading zeros, no `v`.
    pub fn parse(s: &str) -> Result<Version, String> {
        if s.is_empty() {
            return Err("Version string empty".to_owned());
        }
        let parts: Vec<&str> = s.splitn(3, '.').collect();
        if parts.len() != 3 {
            return Err("No Major.Minor.Patch elements found".to_owned());
        }
        let major = numeric(parts[0])?;
        let minor = numeric(parts[1])?;
        let mut rest = parts[2];
        if let Some(i) = rest.find('+') {
            for b in rest[i + 1..].split('.') {
                if !ident_ok(b) {
                    return Err(format!("Invalid character(s) found in build meta {b:?}"));
                }
            }
            rest = &rest[..i];
        }
        let mut pre = Vec::new();
        if let Some(i) = rest.find('-') {
            for p in rest[i + 1..].split('.') {
                if p.is_empty() {
                    return Err("Prerelease is empty".to_owned());
                }
                if p.bytes().all(|b| b.is_ascii_digit()) {
                    pre.push(Pre::Num(numeric(p)?));
                } else if ident_ok(p) {
                    pre.push(Pre::Alpha(p.to_owned()));
                } else {
                    return Err(format!("Invalid character(s) found in prerelease {p:?}"));
                }
            }
            rest = &rest[..i];
        }
        let patch = numeric(rest)?;
        Ok(Version {
            major,
            minor,
            patch,
            pre,
        })
    }

    pub fn compare(&self, o: &Version) -> Ordering {
        let c = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if c != Ordering::Equal {
            return c;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&o.pre) {
            let c = match (a, b) {
                (Pre::Num(x), Pre::Num(y)) => x.cmp(y),
                (Pre::Num(_), Pre::Alpha(_)) => Ordering::Less,
                (Pre::Alpha(_), Pre::Num(_)) => Ordering::Greater,
                (Pre::Alpha(x), Pre::Alpha(y)) => x.cmp(y),
            };
            if c != Ordering::Equal {
                return c;
            }
        }
        self.pre.len().cmp(&o.pre.len())
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A parsed range: OR of ANDs of comparisons.
#[derive(Clone, Debug)]
pub struct Range(Vec<Vec<(Op, Version)>>);

impl Range {
    pub fn parse(s: &str) -> Result<Range, String> {
        let parts = split_and_trim(s);
        let mut ors: Vec<Vec<String>> = Vec::new();
        let mut last = 0;
        for (i, p) in parts.iter().enumerate() {
            if p == "||" {
                if i == 0 {
                    return Err("First element in range is '||'".to_owned());
                }
                ors.push(parts[last..i].to_vec());
                last = i + 1;
            }
        }
        if last == parts.len() {
            return Err("Last element in range is '||'".to_owned());
        }
        ors.push(parts[last..].to_vec());
        let mut out = Vec::new();
        for and in ors {
            let mut expanded = Vec::new();
            for ap in and {
                expand_wildcard(&ap, &mut expanded)?;
            }
            let mut comps = Vec::new();
            for ap in expanded {
                let (op_s, v_s) = split_comparator(&ap)?;
                let op = match op_s {
                    "" | "=" | "==" => Op::Eq,
                    ">" => Op::Gt,
                    ">=" => Op::Ge,
                    "<" => Op::Lt,
                    "<=" => Op::Le,
                    "!" | "!=" => Op::Ne,
                    _ => {
                        return Err(format!(
                            "Could not parse Range {ap:?}: Could not parse comparator {op_s:?} in {ap:?}"
                        ));
                    }
                };
                let v = Version::parse(v_s).map_err(|e| {
                    format!("Could not parse Range {ap:?}: Could not parse version {v_s:?} in {ap:?}: {e}")
                })?;
                comps.push((op, v));
            }
            out.push(comps);
        }
        Ok(Range(out))
    }

    pub fn matches(&self, v: &Version) -> bool {
        self.0.iter().any(|and| {
            and.iter().all(|(op, w)| {
                let c = v.compare(w);
                match op {
                    Op::Eq => c == Ordering::Equal,
                    Op::Ne => c != Ordering::Equal,
                    Op::Gt => c == Ordering::Greater,
                    Op::Ge => c != Ordering::Less,
                    Op::Lt => c == Ordering::Less,
                    Op::Le => c != Ordering::Greater,
                }
            })
        })
    }
}

fn split_and_trim(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0usize;
    let mut last_char = 0u8;
    for i in 0..b.len() {
        if b[i] == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            if last + 1 < i {
                out.push(s[last..i].to_owned());
            }
            last = i + 1;
        } else if b[i] != b' ' {
            last_char = b[i];
        }
    }
    if last + 1 < b.len() {
        out.push(s[last..].to_owned());
    }
    out.into_iter().map(|p| p.replace(' ', "")).collect()
}

fn split_comparator(s: &str) -> Result<(&str, &str), String> {
    let i = s
        .find(|c: char| c.is_ascii_digit())
        .ok_or_else(|| format!("Could not get version from string: {s:?}"))?;
    Ok((s[..i].trim(), &s[i..]))
}

fn bump(v: &str, idx: usize) -> String {
    let mut parts: Vec<String> = v.split('.').map(str::to_owned).collect();
    if let Some(p) = parts.get_mut(idx)
        && let Ok(n) = p.parse::<i64>()
    {
        *p = (n + 1).to_string();
    }
    parts.join(".")
}

fn expand_wildcard(ap: &str, out: &mut Vec<String>) -> Result<(), String> {
    let (op, v) = split_comparator(ap)?;
    if !ap.contains(".x") {
        out.push(ap.to_owned());
        return Ok(());
    }
    let nparts = v.split('.').count();
    let wildcard = if v.split('.').next_back() == Some("x") {
        nparts
    } else {
        0
    };
    let flat = {
        let f = v.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
        if f.split('.').count() == 2 {
            format!("{f}.0")
        } else {
            f
        }
    };
    let (result_op, increment) = match op {
        ">" => (">=", true),
        ">=" => (">=", false),
        "<" => ("<", false),
        "<=" => ("<", true),
        "" | "=" | "==" => {
            out.push(format!(">={flat}"));
            ("<", true)
        }
        "!=" | "!" => {
            out.push(format!("<{flat}"));
            (">=", true)
        }
        _ => ("", false),
    };
    let version = if increment {
        match wildcard {
            3 => bump(&flat, 1),
            2 => bump(&flat, 0),
            _ => String::new(),
        }
    } else {
        flat
    };
    out.push(format!("{result_op}{version}"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(v: &str, r: &str) -> bool {
        Range::parse(r)
            .unwrap()
            .matches(&Version::parse(v).unwrap_or_default())
    }

    #[test]
    fn ranges() {
        assert!(m("1.4.9", "<1.5.0"));
        assert!(m("1.1.1", ">=1.0.0 <2.0.0"));
        assert!(!m("2.0.0", ">=1.0.0 <2.0.0"));
        assert!(m("3.1.0", "<2.0.0 || >=3.0.0"));
        assert!(!m("4.2.1", "!4.x.x"));
        // blang expands `!4.2.x` to `<4.2.0 >=4.3.0` joined by AND: it never matches.
        assert!(!m("4.3.0", "!4.2.x"));
        assert!(!m("1.0.0", "!4.2.x"));
        assert!(m("1.2.5", "1.2.x"));
        assert!(m("0.0.0", "<1.0.0"));
        assert!(Range::parse("abc").is_err());
        assert!(Range::parse("|| 1.0.0").is_err());
    }

    #[test]
    fn strict_parse_and_order() {
        assert!(Version::parse("v1.0.0").is_err());
        assert!(Version::parse("1.0").is_err());
        assert!(Version::parse("01.0.0").is_err());
        let a = Version::parse("1.0.0-alpha").unwrap();
        let b = Version::parse("1.0.0-alpha.1").unwrap();
        let c = Version::parse("1.0.0+build").unwrap();
        assert_eq!(a.compare(&b), Ordering::Less);
        assert_eq!(b.compare(&c), Ordering::Less);
        assert_eq!(
            Version::parse("1.5.5")
                .unwrap()
                .compare(&Version::parse("1.5.0").unwrap()),
            Ordering::Greater
        );
    }
}

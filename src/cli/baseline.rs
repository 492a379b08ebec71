//! Baselines (`--write-baseline`, `--baseline`, `--baseline-strict`): the findings a
//! repository accepts today, recorded by fingerprint so that a later run reports only new
//! ones (docs/SUPPRESSIONS.md).
//!
//! A finding's fingerprint is what identifies it apart from its line: policy, rule, resource
//! (apiVersion, kind, namespace, name), file and field path. SARIF's `partialFingerprints`
//! are the same value ([`fingerprint`]), so code scanning and baselines agree on which
//! findings are the same. The file is JSON, versioned, sorted, one finding per entry with
//! the readable fields beside its fingerprint; entries repeat when one fingerprint is found
//! more than once.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::report::Status;
use serde::{Deserialize, Serialize};

use super::check::Finding;

/// The format's version: the `kpolBaseline` field.
const VERSION: u32 = 1;

/// A finding's file as fingerprints name it: `/` separated, without a leading `./`, relative
/// to the working directory when under it (so a baseline written from the repository's root
/// matches a checkout anywhere).
pub fn file_key(name: &str) -> String {
    let name = name.replace('\\', "/");
    let mut rel = name.as_str();
    while let Some(r) = rel.strip_prefix("./") {
        rel = r;
    }
    if Path::new(rel).is_absolute()
        && let Some(cwd) = cwd()
        && let Ok(inside) = Path::new(rel).strip_prefix(cwd)
    {
        return inside.to_string_lossy().replace('\\', "/");
    }
    rel.to_owned()
}

fn cwd() -> Option<&'static Path> {
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    CWD.get_or_init(|| std::env::current_dir().ok()).as_deref()
}

/// The fingerprint of a finding (16 hex digits): stable when lines move, different for
/// another field of the same resource. One value everywhere a finding is named: baselines,
/// SARIF's `partialFingerprints`, `--format json`'s `fingerprint` and `kpol explain --finding`.
pub fn fingerprint(f: &Finding) -> String {
    let file = file_key(f.source.as_deref().map_or("", |s| s.name()));
    let path = f.response.kyverno_path().unwrap_or_default();
    hash(&[
        f.policy.as_str(),
        f.rule.as_str(),
        f.api_version.as_str(),
        f.kind.as_str(),
        f.namespace.as_str(),
        f.name.as_str(),
        &file,
        &path,
    ])
}

/// FNV-1a over `parts`, NUL-separated, as 16 hex digits.
pub fn hash(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        // The NUL between parts (xor with 0 is no change).
        if i > 0 {
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for b in part.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Whether a finding is one a baseline records.
pub fn recorded(f: &Finding) -> bool {
    matches!(f.status, Status::Fail | Status::Warn | Status::Error)
}

/// One recorded finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Entry {
    pub file: String,
    pub resource: String,
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub policy: String,
    pub rule: String,
    #[serde(default)]
    pub path: String,
    pub fingerprint: String,
}

impl Entry {
    pub fn of(f: &Finding) -> Self {
        Self {
            file: file_key(f.source.as_deref().map_or("", |s| s.name())),
            resource: f.resource.clone(),
            api_version: f.api_version.clone(),
            policy: f.policy.clone(),
            rule: f.rule.clone(),
            path: f.response.kyverno_path().unwrap_or_default(),
            fingerprint: fingerprint(f),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Document {
    #[serde(rename = "kpolBaseline")]
    version: u32,
    findings: Vec<Entry>,
}

/// Writes `entries`, sorted, to `path`.
pub fn write(path: &Path, mut entries: Vec<Entry>) -> std::io::Result<usize> {
    entries.sort();
    let n = entries.len();
    let doc = Document {
        version: VERSION,
        findings: entries,
    };
    let mut text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)?;
    Ok(n)
}

/// A baseline read from its file: per file key, how many times each fingerprint is recorded.
pub struct Baseline {
    by_file: HashMap<String, HashMap<String, usize>>,
    entries: Vec<Entry>,
}

impl Baseline {
    pub fn read(path: &Path) -> Result<Self, Diagnostic> {
        let name = path.display().to_string();
        let refuse = |why: String| {
            Diagnostic::error(
                Code::InvalidBaseline,
                format!("baseline {name}: {why}"),
                Some(Location::file(&name)),
            )
        };
        let text = std::fs::read_to_string(path).map_err(|e| refuse(e.to_string()))?;
        let doc: Document = serde_json::from_str(&text).map_err(|e| {
            let mut d = refuse(format!("not a kpol baseline: {e}"));
            if let Some(l) = &mut d.location {
                l.start = Some(kpol::source::LineCol {
                    line: u32::try_from(e.line()).unwrap_or(u32::MAX),
                    column: u32::try_from(e.column()).unwrap_or(u32::MAX),
                });
            }
            d
        })?;
        if doc.version != VERSION {
            return Err(refuse(format!(
                "kpolBaseline {} is not a version this kpol reads ({VERSION})",
                doc.version
            )));
        }
        let mut by_file: HashMap<String, HashMap<String, usize>> = HashMap::new();
        for e in &doc.findings {
            *by_file
                .entry(e.file.clone())
                .or_default()
                .entry(e.fingerprint.clone())
                .or_default() += 1;
        }
        Ok(Self {
            by_file,
            entries: doc.findings,
        })
    }

    /// Removes from `findings` (one file's) those the baseline records, each recorded entry
    /// taking one finding; returns how many were removed, and the fingerprints they used.
    pub fn filter(&self, findings: &mut Vec<Finding>) -> (usize, Vec<(String, String)>) {
        let Some(file) = findings.iter().find(|f| recorded(f)) else {
            return (0, Vec::new());
        };
        let key = file_key(file.source.as_deref().map_or("", |s| s.name()));
        let Some(recorded_here) = self.by_file.get(&key) else {
            return (0, Vec::new());
        };
        let mut left = recorded_here.clone();
        let mut used = Vec::new();
        findings.retain(|f| {
            if !recorded(f) {
                return true;
            }
            let fp = fingerprint(f);
            match left.get_mut(&fp) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    used.push((key.clone(), fp));
                    false
                }
                _ => true,
            }
        });
        (used.len(), used)
    }

    /// The recorded entries no finding used (`--baseline-strict`), of the files `checked`
    /// when given (a `--shard` checks some files only).
    pub fn stale(
        &self,
        used: &[(String, String)],
        checked: Option<&std::collections::HashSet<String>>,
    ) -> Vec<&Entry> {
        let mut left: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (file, fp) in used {
            *left.entry((file, fp)).or_default() += 1;
        }
        let mut out = Vec::new();
        for e in &self.entries {
            if checked.is_some_and(|c| !c.contains(&e.file)) {
                continue;
            }
            match left.get_mut(&(e.file.as_str(), e.fingerprint.as_str())) {
                Some(n) if *n > 0 => *n -= 1,
                _ => out.push(e),
            }
        }
        out
    }
}

/// The warning for a recorded finding that is gone.
pub fn stale_diagnostic(baseline: &Path, e: &Entry) -> Diagnostic {
    let path = if e.path.is_empty() {
        String::new()
    } else {
        format!(" at {}", e.path)
    };
    Diagnostic::warning(
        Code::StaleBaseline,
        format!(
            "{}: {} on {}{path} is no longer found; remove it from the baseline (--write-baseline)",
            e.file,
            if e.rule.is_empty() {
                e.policy.clone()
            } else {
                format!("{}/{}", e.policy, e.rule)
            },
            e.resource,
        ),
        Some(Location::file(baseline.display().to_string())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv1a_over_the_parts_joined_by_nul() {
        // FNV-1a of the empty string, and of "a\0b" written out.
        assert_eq!(hash(&[""]), "cbf29ce484222325");
        let joined = {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in b"a\0b" {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            format!("{h:016x}")
        };
        assert_eq!(hash(&["a", "b"]), joined);
        assert_ne!(hash(&["a", "b"]), hash(&["ab", ""]));
    }

    #[test]
    fn file_keys_drop_the_leading_dot_and_the_working_directory() {
        assert_eq!(file_key("./deploy/web.yaml"), "deploy/web.yaml");
        assert_eq!(file_key("././a.yaml"), "a.yaml");
        assert_eq!(file_key("deploy\\web.yaml"), "deploy/web.yaml");
        let cwd = std::env::current_dir().unwrap();
        let inside = cwd.join("deploy").join("web.yaml");
        assert_eq!(file_key(&inside.display().to_string()), "deploy/web.yaml");
        assert_eq!(file_key("/elsewhere/web.yaml"), "/elsewhere/web.yaml");
    }
}

//! The objects before the change, for `kpol check --old` and `--diff-base`: a resource with a
//! previous revision is checked as an UPDATE against it (crate::engine skips the violations
//! the previous revision had too), one without is checked as before.
//!
//! Revisions are paired by API group, kind, namespace and name (the version may change: the
//! API server sees one object through every version of its group).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::manifest::read_manifests;
use kpol::resource::Resource;
use kpol::source::{Source, SourceFile};

use super::discover::{Exclude, Input, discover};

/// Previous revisions by identity.
#[derive(Default)]
pub struct OldObjects {
    by_id: HashMap<(String, String, String, String), Arc<Resource>>,
}

fn key(r: &Resource) -> (String, String, String, String) {
    let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    (
        group.to_owned(),
        r.kind.clone(),
        r.namespace.clone(),
        r.name.clone(),
    )
}

impl OldObjects {
    fn add_text(&mut self, name: String, text: String, diags: &mut Vec<Diagnostic>) {
        let source: Source = Arc::new(SourceFile::new(name, text));
        let manifests = read_manifests(&source, super::discover::input_limits());
        diags.extend(manifests.diagnostics);
        for r in manifests.resources {
            // A resource without a name has no revision to pair with.
            if !r.name.is_empty() {
                self.by_id.insert(key(&r), Arc::new(r));
            }
        }
    }

    /// The previous revisions in `paths` (`--old`: files or directories, as inputs are found).
    pub fn read(paths: &[PathBuf], max_bytes: u64) -> (Self, Vec<Diagnostic>) {
        let mut out = Self::default();
        if paths.is_empty() {
            return (out, Vec::new());
        }
        let none = Exclude::none();
        let (inputs, mut diags) = discover(paths, &none);
        for input in &inputs {
            match super::policies::read(input, max_bytes) {
                Ok(text) => out.add_text(input.display(), text, &mut diags),
                Err(d) => diags.push(d),
            }
        }
        (out, diags)
    }

    pub fn get(&self, r: &Resource) -> Option<Arc<Resource>> {
        // perf: without `--old` the map is empty, and every checked resource asks: no key is
        // built for it then.
        if self.by_id.is_empty() {
            return None;
        }
        self.by_id.get(&key(r)).cloned()
    }
}

/// `--diff-base REV`: the git repository and the commit inputs are compared with.
pub struct DiffBase {
    top: PathBuf,
    commit: String,
    /// The files the commit has, relative to `top`.
    files: std::collections::HashSet<String>,
}

/// What one input was at the diff base.
pub enum AtBase {
    /// Not a file of the repository (standard input, outside it), or the same text as at the
    /// base: checked as before (CREATE).
    Unchanged,
    /// Not in the commit: new since, checked as CREATE.
    Added,
    /// Changed since: its resources are checked as UPDATEs against these.
    Changed(OldObjects),
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

impl DiffBase {
    /// Finds the repository around `path` (the first path checked: a directory, or a file's
    /// directory) and resolves `rev` in it.
    pub fn open(rev: &str, path: Option<&Path>) -> Result<Self, Diagnostic> {
        let fail = |m: String| Diagnostic::error(Code::Io, format!("--diff-base {rev}: {m}"), None);
        let here = match path {
            Some(p) if p.is_dir() => p.to_path_buf(),
            Some(p) => match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            },
            None => PathBuf::from("."),
        };
        let top = git(&here, &["rev-parse", "--show-toplevel"])
            .map_err(|e| fail(format!("not in a git repository ({e})")))?;
        let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
        let spec = format!("{rev}^{{commit}}");
        let commit = git(
            &top,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
        )
        .map_err(|_| fail("unknown revision".to_owned()))?;
        let commit = String::from_utf8_lossy(&commit).trim().to_owned();
        let list = git(&top, &["ls-tree", "-r", "-z", "--name-only", &commit]).map_err(fail)?;
        let files = list
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        let top = top.canonicalize().unwrap_or(top);
        Ok(Self { top, commit, files })
    }

    /// What `input` (whose text now is `text`) was at the base.
    pub fn at_base(&self, input: &Input, text: &str) -> Result<AtBase, Diagnostic> {
        let Input::File(path) = input else {
            return Ok(AtBase::Unchanged);
        };
        let rel = path
            .canonicalize()
            .ok()
            .and_then(|p| p.strip_prefix(&self.top).ok().map(Path::to_path_buf))
            .and_then(|p| p.to_str().map(|s| s.replace('\\', "/")));
        let Some(rel) = rel else {
            return Ok(AtBase::Unchanged);
        };
        if !self.files.contains(&rel) {
            return Ok(AtBase::Added);
        }
        let blob = git(
            &self.top,
            &["cat-file", "blob", &format!("{}:{rel}", self.commit)],
        )
        .map_err(|e| {
            Diagnostic::error(
                Code::Io,
                format!("--diff-base: cannot read {rel} at {}: {e}", self.commit),
                Some(Location::file(input.display())),
            )
        })?;
        let old = String::from_utf8_lossy(&blob).into_owned();
        if old == text {
            return Ok(AtBase::Unchanged);
        }
        let mut objects = OldObjects::default();
        let mut diags = Vec::new();
        let name = format!("{}:{rel}", &self.commit[..self.commit.len().min(12)]);
        objects.add_text(name, old, &mut diags);
        // The previous revision's own problems are not this run's: a revision that does not
        // parse pairs with nothing.
        Ok(AtBase::Changed(objects))
    }
}

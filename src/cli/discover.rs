//! Input discovery: positional paths → a sorted, de-duplicated list of files to read.
//!
//! Directories are walked recursively in file-name order; hidden entries (`.name`) are skipped;
//! only `.yaml`, `.yml` and `.json` files are taken from directories (a file named explicitly is
//! always taken, unless it is not a regular file: a FIFO or a device is refused, never opened).
//! Symbolic links are followed while they stay inside the directory given: one that leaves it
//! is not followed (a note, shown at `-v`), and a link back to an ancestor is reported once,
//! never walked forever. `--exclude` globs apply to every path found, as it was found; the
//! `exclude` globs of `.kpol.yaml` apply to every path found relative to the config file's
//! directory ([`Exclude`]), however the path was typed (`manifests`, `./manifests`, an
//! absolute path, `.` from a subdirectory).

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::yaml::{Limits, RunBudget};

/// One input to read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

impl Input {
    pub fn display(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_owned(),
            // perf: a UTF-8 path is copied as it is, not formatted (once per file checked).
            Input::File(p) => p
                .to_str()
                .map_or_else(|| p.display().to_string(), str::to_owned),
        }
    }
}

/// What all files of the run (one per process) may make kpol build together.
static RUN: RunBudget = RunBudget::standard();

/// The YAML limits for reading an input or policy file: each file's own, and the run's
/// shared budget.
pub fn input_limits() -> Limits {
    Limits::default().with_run(&RUN)
}

/// What a run leaves out: `--exclude` globs, matched against each path as it was found, or
/// the `exclude` globs of `.kpol.yaml`, matched against the path relative to the config
/// file's directory.
#[derive(Debug, Default)]
pub struct Exclude {
    /// Matched against the path as found (`--exclude`).
    typed: GlobSet,
    /// Matched against the path relative to `root` (canonical), or against the absolute
    /// path for an absolute glob (`.kpol.yaml`).
    rooted: Option<Rooted>,
}

#[derive(Debug)]
struct Rooted {
    root: PathBuf,
    relative: GlobSet,
    absolute: GlobSet,
}

impl Exclude {
    /// Nothing excluded.
    pub fn none() -> Self {
        Self::default()
    }

    /// `--exclude` globs: matched against each path as found.
    pub fn typed(globs: &[String]) -> Result<Self, Diagnostic> {
        Ok(Self {
            typed: exclude_set(globs)?,
            rooted: None,
        })
    }

    /// `.kpol.yaml` globs, relative to `base` (the config file's directory; empty: the
    /// working directory). A base that cannot be resolved matches paths as found, joined to
    /// it, as before.
    pub fn rooted(globs: &[String], base: &Path) -> Result<Self, Diagnostic> {
        let dir = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        let Ok(root) = std::fs::canonicalize(dir) else {
            let joined: Vec<String> = globs
                .iter()
                .map(|g| {
                    if base.as_os_str().is_empty() || Path::new(g).is_absolute() {
                        g.clone()
                    } else {
                        base.join(g).display().to_string()
                    }
                })
                .collect();
            return Self::typed(&joined);
        };
        let (abs, rel): (Vec<String>, Vec<String>) = globs
            .iter()
            .cloned()
            .partition(|g| Path::new(g).is_absolute());
        Ok(Self {
            typed: GlobSet::empty(),
            rooted: Some(Rooted {
                root,
                relative: exclude_set(&rel)?,
                absolute: exclude_set(&abs)?,
            }),
        })
    }

    /// Whether `path`, a file named on its own (an editor's document, `kpol lsp`: absolute,
    /// and perhaps not yet saved to disk), is excluded.
    pub fn excludes(&self, path: &Path) -> bool {
        self.is_match(path, || {
            real_file(path).or_else(|| Some(path.to_path_buf()))
        })
    }

    /// Whether `path` (as found) is excluded; `real` is the same path made absolute through
    /// the resolved root it was found under (no link below that root resolved).
    fn is_match(&self, path: &Path, real: impl FnOnce() -> Option<PathBuf>) -> bool {
        if self.typed.is_match(path) {
            return true;
        }
        let Some(r) = &self.rooted else {
            return false;
        };
        let Some(real) = real() else {
            return false;
        };
        if r.absolute.is_match(&real) {
            return true;
        }
        real.strip_prefix(&r.root)
            .is_ok_and(|rel| !rel.as_os_str().is_empty() && r.relative.is_match(rel))
    }
}

/// `path` (a file named on the command line) made absolute: its directory resolved, its own
/// name kept (a link there is not followed).
fn real_file(path: &Path) -> Option<PathBuf> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(path.file_name()?))
}

/// Builds a glob matcher; a bad glob is an error diagnostic.
fn exclude_set(globs: &[String]) -> Result<GlobSet, Diagnostic> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob = Glob::new(g).map_err(|e| {
            Diagnostic::error(Code::Io, format!("invalid --exclude glob '{g}': {e}"), None)
        })?;
        b.add(glob);
        // `dir/**` style globs should also exclude the directory itself, and a bare name
        // (`vendor`) should exclude that directory wherever it is.
        if let Some(glob) = (!g.contains('/'))
            .then(|| Glob::new(&format!("**/{g}")).ok())
            .flatten()
        {
            b.add(glob);
        }
    }
    b.build()
        .map_err(|e| Diagnostic::error(Code::Io, format!("invalid --exclude globs: {e}"), None))
}

fn is_manifest_name(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| n.starts_with('.') && n != "." && n != "..")
}

/// Expands the given paths. Problems (missing paths, unreadable directories, link loops) come
/// back as diagnostics beside the files that could be found.
pub fn discover(paths: &[PathBuf], exclude: &Exclude) -> (Vec<Input>, Vec<Diagnostic>) {
    let mut inputs = Vec::new();
    let mut diags = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                diags.push(Diagnostic::error(
                    Code::Io,
                    format!("cannot read {}: {}", path.display(), io_reason(&e)),
                    Some(Location::file(path.display().to_string())),
                ));
                continue;
            }
        };
        if !meta.is_dir() {
            if exclude.is_match(path, || real_file(path)) {
                continue;
            }
            // Opening a FIFO with no writer would block the run; a device is no manifest.
            if meta.is_file() {
                inputs.push(Input::File(path.clone()));
            } else {
                diags.push(Diagnostic::error(
                    Code::Io,
                    format!(
                        "cannot read {}: not a regular file ({}); kpol reads files, \
                         directories and `-` (standard input)",
                        path.display(),
                        file_kind(&meta)
                    ),
                    Some(Location::file(path.display().to_string())),
                ));
            }
            continue;
        }
        // Links are followed only while they stay inside the root as given (resolved).
        let root = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let mut left_root = Vec::new();
        let walker = walkdir::WalkDir::new(path)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                if e.depth() == 0 {
                    return true;
                }
                let real = || Some(root.join(e.path().strip_prefix(path).ok()?));
                if is_hidden(e.file_name()) || exclude.is_match(e.path(), real) {
                    return false;
                }
                if e.path_is_symlink() && !inside(&root, e.path()) {
                    left_root.push(e.path().to_path_buf());
                    return false;
                }
                true
            });
        for entry in walker {
            match entry {
                Ok(e) => {
                    let p = e.path();
                    if e.file_type().is_file() && is_manifest_name(p) {
                        inputs.push(Input::File(p.to_path_buf()));
                    }
                }
                Err(e) => {
                    let where_ = e
                        .path()
                        .map_or_else(|| path.display().to_string(), |p| p.display().to_string());
                    let reason = if e.loop_ancestor().is_some() {
                        "symbolic link loop (not followed)".to_owned()
                    } else if let Some(io) = e.io_error() {
                        io_reason(io)
                    } else {
                        e.to_string()
                    };
                    diags.push(Diagnostic::error(
                        Code::Io,
                        format!("cannot read {where_}: {reason}"),
                        Some(Location::file(where_.clone())),
                    ));
                }
            }
        }
        for link in left_root {
            diags.push(Diagnostic::info(
                Code::Io,
                format!(
                    "{}: symbolic link not followed: it leaves {} (name it to check it)",
                    link.display(),
                    path.display()
                ),
                Some(Location::file(link.display().to_string())),
            ));
        }
    }
    // Sorted and de-duplicated, so that output never depends on argument order quirks.
    let mut seen = std::collections::HashSet::new();
    inputs.retain(|i| seen.insert(i.clone()));
    (inputs, diags)
}

/// Whether the link at `link` resolves to a path inside `root` (resolved already). A link
/// that does not resolve (dangling) is kept, and reported by the walk as it was before.
fn inside(root: &Path, link: &Path) -> bool {
    std::fs::canonicalize(link).map_or(true, |real| real.starts_with(root))
}

fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = meta;
    "not a file or directory"
}

/// A short reason without Rust's `(os error N)` suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn walks_sorted_skips_hidden_and_other_extensions() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("b")).unwrap();
        std::fs::create_dir_all(d.join(".git")).unwrap();
        for f in [
            "b/z.yaml",
            "a.yml",
            "c.json",
            "notes.txt",
            ".git/x.yaml",
            ".hidden.yaml",
        ] {
            std::fs::write(d.join(f), "a: 1\n").unwrap();
        }
        let (inputs, diags) = discover(&[d.to_path_buf()], &Exclude::none());
        assert!(diags.is_empty());
        let names: Vec<String> = inputs
            .iter()
            .map(|i| match i {
                Input::File(p) => p.strip_prefix(d).unwrap().display().to_string(),
                Input::Stdin => "-".into(),
            })
            .collect();
        assert_eq!(names, ["a.yml", "b/z.yaml", "c.json"]);
    }

    #[test]
    fn exclude_globs_and_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("vendor")).unwrap();
        std::fs::write(d.join("vendor/x.yaml"), "a: 1\n").unwrap();
        std::fs::write(d.join("y.yaml"), "a: 1\n").unwrap();
        let ex = Exclude::typed(&["vendor".into()]).unwrap();
        let (inputs, diags) = discover(&[d.to_path_buf(), d.join("missing.yaml")], &ex);
        assert_eq!(inputs, vec![Input::File(d.join("y.yaml"))]);
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("missing.yaml"));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_do_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("a")).unwrap();
        std::fs::write(d.join("a/x.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink(d, d.join("a/loop")).unwrap();
        let (inputs, diags) = discover(&[d.to_path_buf()], &Exclude::none());
        assert_eq!(inputs.len(), 1);
        assert!(diags.iter().any(|d| d.message.contains("loop")));
    }

    /// A link leaving the root is not followed (an info note), one inside it is; the file
    /// behind an outside link is not taken.
    #[cfg(unix)]
    #[test]
    fn links_leaving_the_root_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("real/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(outside.join("b.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out-dir")).unwrap();
        std::os::unix::fs::symlink(outside.join("b.yaml"), root.join("out-file.yaml")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("in-dir")).unwrap();
        let (inputs, diags) = discover(std::slice::from_ref(&root), &Exclude::none());
        assert_eq!(
            inputs,
            [
                Input::File(root.join("in-dir/a.yaml")),
                Input::File(root.join("real/a.yaml"))
            ]
        );
        assert_eq!(diags.len(), 2, "{diags:?}");
        assert!(
            diags
                .iter()
                .all(|d| d.severity == kpol::diagnostic::Severity::Info)
        );
        assert!(diags[0].message.contains("out-dir"), "{}", diags[0].message);
        assert!(
            diags[1].message.contains("out-file.yaml"),
            "{}",
            diags[1].message
        );
        // Named explicitly, the outside file is taken.
        let (inputs, _) = discover(&[root.join("out-file.yaml")], &Exclude::none());
        assert_eq!(inputs.len(), 1);
    }
}

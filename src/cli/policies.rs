//! The policy set of a run: the files named with `-p`, or kpol's embedded defaults.

use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::exception::PolicyException;
use kpol::load_policies_bound;
use kpol::policy::Policy;
use kpol::source::{SourceFile, Span};
use kpol::yaml::parse_documents;

use super::discover::{Exclude, Input, discover, io_reason};

/// kpol's default policies, compiled into the binary (`policies/`).
const DEFAULTS: &[(&str, &str)] = &[
    (
        "policies/require-resource-limits.yaml",
        include_str!("../../policies/require-resource-limits.yaml"),
    ),
    (
        "policies/disallow-privileged-containers.yaml",
        include_str!("../../policies/disallow-privileged-containers.yaml"),
    ),
    (
        "policies/disallow-latest-tag.yaml",
        include_str!("../../policies/disallow-latest-tag.yaml"),
    ),
    (
        "policies/disallow-host-namespaces.yaml",
        include_str!("../../policies/disallow-host-namespaces.yaml"),
    ),
    (
        "policies/require-probes.yaml",
        include_str!("../../policies/require-probes.yaml"),
    ),
    (
        "policies/pod-security-baseline.yaml",
        include_str!("../../policies/pod-security-baseline.yaml"),
    ),
    (
        "policies/pod-security-restricted.yaml",
        include_str!("../../policies/pod-security-restricted.yaml"),
    ),
    (
        "policies/add-default-labels.yaml",
        include_str!("../../policies/add-default-labels.yaml"),
    ),
];

/// Policies loaded for a run, and what went wrong loading them.
#[derive(Default)]
pub struct PolicySet {
    pub policies: Vec<Policy>,
    /// PolicyExceptions found among the policy files.
    pub exceptions: Vec<PolicyException>,
    pub diagnostics: Vec<Diagnostic>,
    /// The `kinds` entries of the PolicyExceptions: (exception name, kind, where).
    pub exception_kinds: Vec<(String, String, Location)>,
    /// The other objects of the policy files (ConfigMaps…): the params of VAP/MAP bindings
    /// and `validate.cel` rules in `kpol check`.
    pub params: Vec<kpol::yaml::Node>,
}

/// The `kinds` entries of a PolicyException document (`known_kinds` checks them).
fn exception_kinds(
    source: &SourceFile,
    node: &kpol::yaml::Node,
) -> Vec<(String, String, Location)> {
    let name = node
        .get_path(&["metadata", "name"])
        .and_then(kpol::yaml::Node::as_str)
        .unwrap_or("")
        .to_owned();
    kpol::policy::schema::kind_entries(node)
        .into_iter()
        .map(|(_, kind, span)| (name.clone(), kind, Location::at(source, span)))
        .collect()
}

/// The policy set of a run: the policies from `paths` (the embedded defaults when `paths` is
/// empty) with the PolicyExceptions found among them, plus the `--exception` files.
pub fn load(paths: &[PathBuf], exception_paths: &[PathBuf], max_bytes: u64) -> PolicySet {
    let mut set = load_policy_files(paths);
    let (loaded, kinds) = load_exceptions(exception_paths, max_bytes);
    set.diagnostics.extend(loaded.diagnostics);
    set.exceptions.extend(loaded.exceptions);
    set.exception_kinds.extend(kinds);
    set
}

/// The policies from `paths`, or the embedded defaults when `paths` is empty.
fn load_policy_files(paths: &[PathBuf]) -> PolicySet {
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut diagnostics = Vec::new();
    if paths.is_empty() {
        texts.extend(
            DEFAULTS
                .iter()
                .map(|(n, t)| ((*n).to_owned(), (*t).to_owned())),
        );
    } else {
        let none = Exclude::none();
        let (inputs, diags) = discover(paths, &none);
        diagnostics.extend(diags);
        for input in inputs {
            match read(&input, DEFAULT_MAX_FILE_MIB * 1024 * 1024) {
                Ok(text) => texts.push((input.display(), text)),
                Err(d) => diagnostics.push(d),
            }
        }
    }
    let mut set = PolicySet {
        policies: Vec::new(),
        exceptions: Vec::new(),
        diagnostics,
        exception_kinds: Vec::new(),
        params: Vec::new(),
    };
    let mut exceptions = kpol::exception::Loaded::default();
    // Each file is parsed once (perf: start-up, docs/PERFORMANCE.md), and the files are
    // parsed and loaded on the run's threads; what they give is added in file order.
    let parsed: Vec<(Arc<SourceFile>, Parsed)> = texts
        .into_par_iter()
        .map(|(name, text)| {
            let source = Arc::new(SourceFile::new(name, text));
            let docs = parse_documents(source.text(), super::discover::input_limits());
            (source, docs)
        })
        .collect();
    // A VAP or MAP binding binds its policy whichever policy file holds it: each file's
    // bindings, for the loading of the others (a file that does not parse has none).
    let bindings: Vec<Vec<kpol::yaml::Node>> = parsed
        .iter()
        .map(|(_, docs)| {
            docs.as_ref()
                .map(|docs| kpol::policy::admission_bindings(docs))
                .unwrap_or_default()
        })
        .collect();
    let loaded: Vec<(Arc<SourceFile>, Loaded)> = parsed
        .into_par_iter()
        .enumerate()
        .map(|(i, (source, docs))| {
            let others: Vec<kpol::yaml::Node> = bindings
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, b)| b.iter().cloned())
                .collect();
            let loaded = load_file(&source, docs, &others);
            (source, loaded)
        })
        .collect();
    for (source, loaded) in loaded {
        add_loaded(&source, loaded, &mut set, &mut exceptions);
    }
    set.diagnostics.extend(exceptions.diagnostics);
    set.exceptions = exceptions.exceptions;
    set
}

/// The policies and PolicyExceptions of one policy file's text, added to `set` (the
/// exceptions to `exceptions`, whose diagnostics the caller adds last). `kpol lsp` loads an
/// open policy buffer with it, so that the editor shows what `kpol check` would say.
pub fn load_text(
    source: Arc<SourceFile>,
    limits: kpol::yaml::Limits,
    set: &mut PolicySet,
    exceptions: &mut kpol::exception::Loaded,
) {
    load_text_bound(source, limits, set, exceptions, &[]);
}

/// [`load_text`], with the VAP/MAP bindings of the run's other policy files.
fn load_text_bound(
    source: Arc<SourceFile>,
    limits: kpol::yaml::Limits,
    set: &mut PolicySet,
    exceptions: &mut kpol::exception::Loaded,
    other_bindings: &[kpol::yaml::Node],
) {
    let docs = parse_documents(source.text(), limits);
    load_parsed(source, docs, set, exceptions, other_bindings);
}

/// A policy file's documents as parsed, or why it does not parse.
type Parsed = Result<Vec<kpol::yaml::Document>, kpol::yaml::YamlError>;

/// [`load_text_bound`] with the file's text parsed already.
fn load_parsed(
    source: Arc<SourceFile>,
    docs: Parsed,
    set: &mut PolicySet,
    exceptions: &mut kpol::exception::Loaded,
    other_bindings: &[kpol::yaml::Node],
) {
    let loaded = load_file(&source, docs, other_bindings);
    add_loaded(&source, loaded, set, exceptions);
}

/// A policy file's policies, or the diagnostic of a file that does not parse.
type Loaded = Result<kpol::policy::LoadedPolicies, Diagnostic>;

/// The policies of a policy file's parsed documents (no shared state: the files of a run
/// load in parallel).
fn load_file(
    source: &Arc<SourceFile>,
    docs: Parsed,
    other_bindings: &[kpol::yaml::Node],
) -> Loaded {
    match docs {
        Ok(docs) => Ok(load_policies_bound(source, docs, other_bindings)),
        Err(e) => Err(Diagnostic::error(
            Code::Yaml,
            format!("invalid YAML: {}", e.message),
            Some(Location::at(source, Span::new(e.offset, e.offset))),
        )),
    }
}

/// Adds what [`load_file`] gave for `source` to `set` (the exceptions to `exceptions`).
fn add_loaded(
    source: &Arc<SourceFile>,
    loaded: Loaded,
    set: &mut PolicySet,
    exceptions: &mut kpol::exception::Loaded,
) {
    let loaded = match loaded {
        Ok(l) => l,
        Err(d) => {
            set.diagnostics.push(d);
            return;
        }
    };
    set.diagnostics.extend(loaded.diagnostics);
    set.params.extend(loaded.others);
    for e in &loaded.exceptions {
        set.exception_kinds.extend(exception_kinds(source, e));
    }
    exceptions.extend(kpol::exception::load_documents(
        source,
        &loaded.exceptions,
        false,
    ));
    for u in &loaded.unsupported {
        set.diagnostics.push(Diagnostic::warning(
            Code::UnsupportedPolicy,
            format!(
                "{} {} is not evaluated: kpol does not support this policy kind yet",
                u.kind, u.name
            ),
            Some(Location::file(source.name())),
        ));
    }
    set.policies.extend(loaded.policies);
}

/// Loads `--exception` files: every document must be a PolicyException (exceptions.md §2).
/// Gives their `kinds` entries too.
type ExceptionKinds = Vec<(String, String, Location)>;
fn load_exceptions(paths: &[PathBuf], max_bytes: u64) -> (kpol::exception::Loaded, ExceptionKinds) {
    let mut out = kpol::exception::Loaded::default();
    let mut kinds = Vec::new();
    let none = Exclude::none();
    let (inputs, diags) = discover(paths, &none);
    out.diagnostics.extend(diags);
    for input in inputs {
        let text = match read(&input, max_bytes) {
            Ok(t) => t,
            Err(d) => {
                out.diagnostics.push(d);
                continue;
            }
        };
        let source = SourceFile::new(input.display(), text);
        match parse_documents(source.text(), super::discover::input_limits()) {
            Ok(docs) => {
                for d in &docs {
                    kinds.extend(exception_kinds(&source, &d.root));
                }
                out.extend(kpol::exception::load_documents(
                    &source,
                    docs.iter().map(|d| &d.root),
                    true,
                ));
            }
            Err(e) => out.diagnostics.push(Diagnostic::error(
                Code::Yaml,
                format!("invalid YAML: {}", e.message),
                Some(Location::at(&source, Span::new(e.offset, e.offset))),
            )),
        }
    }
    (out, kinds)
}

/// Largest input kpol reads by default: real manifests (CRD bundles included) stay far below,
/// and a runaway file costs an error instead of the machine's memory.
pub const DEFAULT_MAX_FILE_MIB: u64 = 64;

/// Reads an input as UTF-8 text, or says why not. Inputs larger than `max_bytes` are refused.
/// Opens `path` for reading without blocking, and only if it is a regular file: a file that
/// became a FIFO or device after discovery saw it is refused instead of waiting for a writer
/// (`O_NONBLOCK` does nothing to reads of a regular file).
fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if f.metadata()?.is_file() {
        Ok(f)
    } else {
        Err(std::io::Error::other("not a regular file"))
    }
}

pub fn read(input: &Input, max_bytes: u64) -> Result<String, Diagnostic> {
    use std::io::Read;
    let too_large = || {
        Diagnostic::error(
            Code::Limit,
            format!(
                "{} is larger than {} MiB (kpol's limit; raise it with --max-file-size)",
                input.display(),
                max_bytes / (1024 * 1024)
            ),
            Some(Location::file(input.display())),
        )
    };
    let mut buf = Vec::new();
    let read = match input {
        Input::Stdin => std::io::stdin().take(max_bytes + 1).read_to_end(&mut buf),
        Input::File(p) => match open_regular(p) {
            Err(e) => Err(e),
            Ok(f) => {
                // The size the file says it has: refused when too large, else the buffer is
                // made that size up front (perf: one read instead of a read per doubling).
                let len = f.metadata().map_or(0, |m| m.len());
                if len > max_bytes {
                    return Err(too_large());
                }
                buf.reserve_exact(usize::try_from(len).map_or(0, |n| n.saturating_add(1)));
                f.take(max_bytes + 1).read_to_end(&mut buf)
            }
        },
    };
    if buf.len() as u64 > max_bytes {
        return Err(too_large());
    }
    let bytes = read.map(|_| buf).map_err(|e| {
        Diagnostic::error(
            Code::Io,
            format!("cannot read {}: {}", input.display(), io_reason(&e)),
            Some(Location::file(input.display())),
        )
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..offset]).unwrap_or("");
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Diagnostic::error(
            Code::Encoding,
            format!("not UTF-8 text (invalid byte at offset {offset}); is this a binary file?"),
            Some(Location {
                file: input.display(),
                span: Span::EMPTY,
                start: Some(kpol::source::LineCol {
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    column: u32::try_from(column).unwrap_or(u32::MAX),
                }),
                end: None,
            }),
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A path that discovery saw as a file and that is a FIFO by the time it is read (the
    /// swap is simulated by reading a FIFO directly): refused at once, never a blocked read.
    #[test]
    fn a_file_swapped_for_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("a.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo is needed");
        let err = read(&Input::File(fifo), 1024).unwrap_err();
        assert!(
            err.message.contains("not a regular file"),
            "{}",
            err.message
        );
        let file = dir.path().join("b.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        assert_eq!(read(&Input::File(file), 1024).unwrap(), "a: 1\n");
    }
}

//! `.kpol.yaml`: a repository's settings, found in the working directory or the nearest
//! directory above it, once per run (src/cli/session.rs); `kpol check` reads all of it,
//! `kpol mutate` and `kpol generate` its `policies`, `exceptions`, `exclude` and `values`.
//! Flags override it; an unknown key is an error pointing at its line and column
//! (docs/CONFIG.md).
//!
//! Paths in the file are relative to the file's directory; so are `exclude` globs, matched
//! against every path found relative to that directory however it was typed. `output` must stay inside it: the
//! config belongs to the tree being checked, which may not choose where kpol writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::ValueEnum;
use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::source::{SourceFile, Span};
use kpol::yaml::{Limits, Map, Node, Value, parse_documents};

use super::args::{CheckArgs, CheckFormat};

/// The name searched for.
pub const FILE_NAME: &str = ".kpol.yaml";

const KEYS: &[&str] = &[
    "version",
    "paths",
    "policies",
    "exceptions",
    "exclude",
    "values",
    "format",
    "output",
    "auditWarn",
    "warnExitCode",
    "warnNoPass",
    "apiserverDefaults",
    "baseline",
];

/// What a config file says; `None`/empty where it says nothing.
#[derive(Debug, Default)]
pub struct Config {
    pub paths: Vec<PathBuf>,
    pub policies: Vec<PathBuf>,
    pub exceptions: Vec<PathBuf>,
    /// Globs relative to [`Config::base`].
    pub exclude: Vec<String>,
    /// The config file's directory (empty: the working directory).
    pub base: PathBuf,
    pub values: Option<PathBuf>,
    pub format: Option<CheckFormat>,
    pub output: Option<PathBuf>,
    /// Why `output` may not be used: it leaves the config file's directory. Raised only when
    /// no `-o` overrides it.
    pub output_refused: Option<Diagnostic>,
    pub audit_warn: Option<bool>,
    pub warn_exit_code: Option<u8>,
    pub warn_no_pass: Option<bool>,
    pub apiserver_defaults: Option<bool>,
    /// A baseline file (docs/SUPPRESSIONS.md).
    pub baseline: Option<PathBuf>,
}

/// The settings of one `kpol check` run: flags over the config file over defaults.
#[derive(Debug)]
pub struct Settings {
    pub paths: Vec<PathBuf>,
    pub policies: Vec<PathBuf>,
    pub exceptions: Vec<PathBuf>,
    /// `--json-payload` files (cel.md §3.5).
    pub json_payloads: Vec<PathBuf>,
    /// `--http-payload` and `--envoy-payload` files (authorization requests).
    pub http_payloads: Vec<PathBuf>,
    pub envoy_payloads: Vec<PathBuf>,
    pub exclude: Vec<String>,
    /// `Some(config file's directory)` when `exclude` came from the config: its globs are
    /// relative to it.
    pub exclude_base: Option<PathBuf>,
    /// `-f/--values-file`, else `values` of the config.
    pub values: Option<PathBuf>,
    /// `-s/--set` variables.
    pub set: Vec<String>,
    /// `-u/--userinfo`.
    pub userinfo: Option<PathBuf>,
    /// `--cluster-resources`.
    pub cluster_resources: Vec<PathBuf>,
    /// `--context-file`.
    pub context_file: Option<PathBuf>,
    /// `--old` and `--diff-base`: previous revisions (cli/old.rs).
    pub old: Vec<PathBuf>,
    pub diff_base: Option<String>,
    pub format: CheckFormat,
    pub output: Option<PathBuf>,
    /// `--follow-symlinks`: `-o FILE` may be a symbolic link.
    pub follow_symlinks: bool,
    pub audit_warn: bool,
    /// `--background`: policies chosen as a background scan chooses them.
    pub background: bool,
    /// `--apiserver-defaults`.
    pub apiserver_defaults: bool,
    pub warn_exit_code: Option<u8>,
    pub warn_no_pass: bool,
    /// `--allow-empty`: nothing to check is an info note, not an error.
    pub allow_empty: bool,
    pub verbose: bool,
    /// `--max-findings` (`None`: all).
    pub max_findings: Option<usize>,
    /// `--width` of the human output (`None`: the terminal's, else 100).
    pub width: Option<usize>,
    /// `--max-file-size`, in bytes.
    pub max_bytes: u64,
    /// Warnings about the config file, reported with the run.
    pub diagnostics: Vec<Diagnostic>,
    /// `--no-inline-ignores`: suppressions written in the inputs are not honoured.
    pub inline_ignores: bool,
    /// `--baseline`, else `baseline` of the config.
    pub baseline: Option<PathBuf>,
    pub baseline_strict: bool,
    pub write_baseline: Option<PathBuf>,
}

/// The config of a run: `--config FILE`, else `.kpol.yaml` found upwards, none with
/// `--no-config` (an empty [`Config`] when there is none).
pub fn locate(explicit: Option<&Path>, no_config: bool) -> Result<Config, Diagnostic> {
    let file = match (explicit, no_config) {
        (_, true) => None,
        (Some(p), false) => Some(p.to_path_buf()),
        (None, false) => find(Path::new(".")),
    };
    match &file {
        Some(p) => load(p),
        None => Ok(Config::default()),
    }
}

/// Merges the flags of `kpol check` with its config.
pub fn settings(args: CheckArgs, config: Config) -> Result<Settings, Diagnostic> {
    let diagnostics = Vec::new();
    let or = |flag: Vec<PathBuf>, conf: Vec<PathBuf>| if flag.is_empty() { conf } else { flag };
    let mut paths = or(args.paths, config.paths);
    // Payloads alone check no manifests (not the working directory).
    let no_payloads = args.json_payloads.is_empty()
        && args.http_payloads.is_empty()
        && args.envoy_payloads.is_empty();
    if paths.is_empty() && no_payloads {
        paths.push(PathBuf::from("."));
    }
    Ok(Settings {
        paths,
        json_payloads: args.json_payloads,
        http_payloads: args.http_payloads,
        envoy_payloads: args.envoy_payloads,
        policies: or(args.policies, config.policies),
        exceptions: or(args.exceptions, config.exceptions),
        exclude_base: (args.exclude.is_empty() && !config.exclude.is_empty())
            .then(|| config.base.clone()),
        exclude: if args.exclude.is_empty() {
            config.exclude
        } else {
            args.exclude
        },
        values: args.request.values_file.or(config.values),
        set: args.request.set,
        userinfo: args.request.userinfo,
        cluster_resources: args.request.cluster_resources,
        context_file: args.context_file,
        old: args.old,
        diff_base: args.diff_base,
        format: args.format.or(config.format).unwrap_or(CheckFormat::Human),
        output: match (args.output, config.output_refused) {
            (Some(flag), _) => Some(flag),
            (None, Some(refused)) => return Err(refused),
            (None, None) => config.output,
        },
        follow_symlinks: args.follow_symlinks,
        audit_warn: args.audit_warn || config.audit_warn.unwrap_or(false),
        background: args.background,
        apiserver_defaults: args.apiserver_defaults || config.apiserver_defaults.unwrap_or(false),
        warn_exit_code: args.warn_exit_code.or(config.warn_exit_code),
        warn_no_pass: args.warn_no_pass || config.warn_no_pass.unwrap_or(false),
        allow_empty: args.allow_empty,
        verbose: args.verbose,
        max_findings: usize::try_from(args.max_findings).ok().filter(|n| *n > 0),
        width: args.width.map(usize::from),
        max_bytes: args.max_file_size.saturating_mul(1024 * 1024),
        diagnostics,
        inline_ignores: !args.no_inline_ignores,
        // Writing a baseline compares with none.
        baseline: match &args.write_baseline {
            Some(_) => None,
            None => args.baseline.or(config.baseline),
        },
        baseline_strict: args.baseline_strict,
        write_baseline: args.write_baseline,
    })
}

/// The nearest `.kpol.yaml` in `start` or a directory above it, as a path relative to `start`
/// when `start` is relative.
pub fn find(start: &Path) -> Option<PathBuf> {
    let mut dir = start.to_path_buf();
    let mut real = std::fs::canonicalize(start).ok()?;
    loop {
        let candidate = dir.join(FILE_NAME);
        if candidate.is_file() {
            return Some(clean(&candidate));
        }
        if !real.pop() {
            return None;
        }
        dir = dir.join("..");
    }
}

/// `./x` → `x`, so that reported paths read as the user wrote them.
fn clean(p: &Path) -> PathBuf {
    p.strip_prefix(".")
        .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
}

/// Reads and checks one config file.
pub fn load(path: &Path) -> Result<Config, Diagnostic> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diagnostic::error(
            Code::Io,
            format!("cannot read {name}: {e}"),
            Some(Location::file(&name)),
        )
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    parse(&Arc::new(SourceFile::new(name, text)), base)
}

/// Parses config text; relative paths are joined to `base`.
pub fn parse(source: &SourceFile, base: &Path) -> Result<Config, Diagnostic> {
    let docs = parse_documents(source.text(), Limits::default()).map_err(|e| {
        let span = Span::new(e.offset, e.offset);
        error(source, span, format!("invalid YAML: {}", e.message))
    })?;
    let mut config = Config {
        base: base.to_path_buf(),
        ..Config::default()
    };
    let Some(root) = docs.into_iter().map(|d| d.root).find(|r| !r.is_null()) else {
        return Ok(config);
    };
    let Value::Map(map) = &root.value else {
        return Err(error(
            source,
            root.span,
            "expected a map of settings".into(),
        ));
    };
    for entry in map.entries() {
        if !KEYS.contains(&entry.key.as_str()) {
            return Err(error(
                source,
                entry.key_span,
                format!("unknown key '{}' (known: {})", entry.key, KEYS.join(", ")),
            ));
        }
    }
    if let Some(v) = map.get("version")
        && v.value != Value::Int(1)
    {
        return Err(error(source, v.span, "version must be 1".into()));
    }
    let path = |s: String| -> PathBuf { join(base, &s) };
    config.paths = strings(source, map, "paths")?
        .into_iter()
        .map(path)
        .collect();
    config.policies = strings(source, map, "policies")?
        .into_iter()
        .map(path)
        .collect();
    config.exceptions = strings(source, map, "exceptions")?
        .into_iter()
        .map(path)
        .collect();
    config.exclude = strings(source, map, "exclude")?;
    config.values = string(source, map, "values")?.map(path);
    config.baseline = string(source, map, "baseline")?.map(path);
    if let Some(out) = string(source, map, "output")? {
        let span = map.get("output").map_or(root.span, |n| n.span);
        config.output_refused = confine(base, &out).err().map(|why| {
            error(
                source,
                span,
                format!("output '{out}' {why}; refused (an explicit -o may write anywhere)"),
            )
        });
        config.output = Some(path(out));
    }
    if let Some(f) = string(source, map, "format")? {
        let span = map.get("format").map_or(root.span, |n| n.span);
        config.format = Some(
            CheckFormat::from_str(&f, false)
                .map_err(|_| error(source, span, format!("unknown format '{f}'")))?,
        );
    }
    config.audit_warn = boolean(source, map, "auditWarn")?;
    config.warn_no_pass = boolean(source, map, "warnNoPass")?;
    config.apiserver_defaults = boolean(source, map, "apiserverDefaults")?;
    if let Some(n) = map.get("warnExitCode") {
        let code = match n.value {
            Value::Int(i) => u8::try_from(i).ok(),
            _ => None,
        };
        config.warn_exit_code = Some(code.ok_or_else(|| {
            error(
                source,
                n.span,
                "warnExitCode must be an integer from 0 to 255".into(),
            )
        })?);
    }
    Ok(config)
}

/// A checked tree's config may only write inside its own directory: `output` must be
/// relative, without `..`, and no symbolic link on the way may lead outside.
fn confine(base: &Path, out: &str) -> Result<(), String> {
    use std::path::Component;
    let rel = Path::new(out);
    if rel.has_root() || rel.is_absolute() {
        return Err("is absolute, outside the config file's directory".into());
    }
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err("leaves the config file's directory".into());
    }
    let dir = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let Ok(real_dir) = std::fs::canonicalize(dir) else {
        return Ok(());
    };
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let inside = std::fs::canonicalize(&at).is_ok_and(|r| r.starts_with(&real_dir));
                if !inside {
                    return Err(format!(
                        "leads outside the config file's directory through the symbolic link {}",
                        at.display()
                    ));
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

fn join(base: &Path, p: &str) -> PathBuf {
    if base.as_os_str().is_empty() || Path::new(p).is_absolute() {
        PathBuf::from(p)
    } else {
        base.join(p)
    }
}

fn error(source: &SourceFile, span: Span, message: String) -> Diagnostic {
    Diagnostic::error(
        Code::Io,
        format!("{}: {message}", FILE_NAME),
        Some(Location::at(source, span)),
    )
}

fn string(source: &SourceFile, map: &Map, key: &str) -> Result<Option<String>, Diagnostic> {
    match map.get(key) {
        None => Ok(None),
        Some(n) => n
            .as_str()
            .map(|s| Some(s.to_owned()))
            .ok_or_else(|| error(source, n.span, format!("{key} must be a string"))),
    }
}

fn boolean(source: &SourceFile, map: &Map, key: &str) -> Result<Option<bool>, Diagnostic> {
    match map.get(key) {
        None => Ok(None),
        Some(n) => n
            .as_bool()
            .map(Some)
            .ok_or_else(|| error(source, n.span, format!("{key} must be true or false"))),
    }
}

/// A string or a list of strings.
fn strings(source: &SourceFile, map: &Map, key: &str) -> Result<Vec<String>, Diagnostic> {
    let Some(n) = map.get(key) else {
        return Ok(Vec::new());
    };
    if let Some(s) = n.as_str() {
        return Ok(vec![s.to_owned()]);
    }
    let items = n
        .as_seq()
        .ok_or_else(|| error(source, n.span, format!("{key} must be a list of strings")))?;
    items
        .iter()
        .map(|i: &Node| {
            i.as_str()
                .map(str::to_owned)
                .ok_or_else(|| error(source, i.span, format!("{key} must be a list of strings")))
        })
        .collect()
}

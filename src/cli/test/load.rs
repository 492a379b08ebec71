//! Loading what one test names (cli-compat.md §4): policies, resources, exceptions, values,
//! userinfo — all paths relative to the test file's directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::policies::{self, PolicySet};
use kpol::request::UserInfo;
use kpol::request::values::Values;
use kpol::resource::Resource;
use kpol::source::{Source, SourceFile};
use kpol::testfile::{self, LoadError, TestSpec};
use kpol::yaml::{Document, Limits, Node, parse_documents};

/// Everything a test evaluates.
pub struct Inputs {
    pub policies: PolicySet,
    pub resources: Vec<Resource>,
    /// The PolicyExceptions the engine applies; those with `conditions` are not among them
    /// and taint the rows they name instead.
    pub policy_exceptions: Vec<kpol::exception::PolicyException>,
    pub values: std::sync::Arc<Values>,
    pub user_info: Option<UserInfo>,
    /// The data of the test's `context:` file, served to CEL library calls.
    pub cel_context: Option<Arc<kpol::cel::context::CelContext>>,
    /// The test's `jsonPayloads`, each named as the test writes it (cel.md §3.5).
    pub payloads: Vec<Resource>,
    pub warnings: Vec<String>,
}

/// Loads the inputs of one test. A failure aborts this test only.
pub fn load(dir: &Path, spec: &TestSpec) -> Result<Inputs, LoadError> {
    let mut warnings = Vec::new();
    let values = match (&spec.values, &spec.variables) {
        (Some(node), _) => {
            // Inline values are part of the test file; positions are not kept for them.
            let src = SourceFile::new("values", "");
            Values::from_spec(&src, node)?
        }
        (None, Some(file)) => {
            let (src, docs) = read_yaml(&dir.join(file))?;
            let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
            Values::from_file(&src, &root, &mut warnings)?
        }
        (None, None) => Values::default(),
    };
    let user_info = match &spec.userinfo {
        Some(file) => {
            let (src, docs) = read_yaml(&dir.join(file))?;
            let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
            Some(testfile::user_info(&src, &root, &mut warnings)?)
        }
        None => None,
    };
    let cel_context = match &spec.context {
        Some(file) => Some(Arc::new(read_context(&dir.join(file))?)),
        None => None,
    };
    let mut policies = PolicySet::default();
    for p in &spec.policies {
        for file in policy_files(&dir.join(p))? {
            let (src, docs) = read_yaml(&file)?;
            let set = policies::load_file(&src, docs);
            if let Some((position, message)) = &set.refused {
                return Err(LoadError::in_file(
                    position.clone(),
                    format!("failed to load policies ({message})"),
                ));
            }
            policies.extend(set);
        }
    }
    let resources = load_resources(dir, &spec.resources, &mut warnings)?;
    let mut policy_exceptions = Vec::new();
    for e in &spec.exceptions {
        let (src, docs) = read_yaml(&dir.join(e))?;
        let loaded = kpol::exception::load_documents(&src, docs.iter().map(|d| &d.root), true);
        if let Some(d) = loaded
            .diagnostics
            .iter()
            .find(|d| d.severity == kpol::diagnostic::Severity::Error)
        {
            return Err(LoadError::in_file(
                d.position(),
                format!("failed to load exceptions ({})", d.message),
            ));
        }
        policy_exceptions.extend(loaded.exceptions);
    }
    let payloads = spec
        .json_payloads
        .iter()
        .map(|name| load_payload(dir, name))
        .collect::<Result<_, _>>()?;
    Ok(Inputs {
        payloads,
        policies,
        resources,
        policy_exceptions,
        values: std::sync::Arc::new(values),
        user_info,
        cel_context,
        warnings,
    })
}

/// One `jsonPayloads` entry, as the CLI loads it: the whole file is one payload, an object
/// (a YAML file of several documents is a list there, so refused here too).
fn load_payload(dir: &Path, name: &str) -> Result<Resource, LoadError> {
    use kpol::payload::{Format, documents, unrecognized};
    let path = dir.join(name);
    let shown = path.display().to_string();
    let fail = |why: String| {
        LoadError::in_file(
            &shown,
            format!("failed to load JSON payload {name} ({why})"),
        )
    };
    let format = Format::of(&path).ok_or_else(|| fail(unrecognized(&shown)))?;
    let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
    let src: Source = Arc::new(SourceFile::new(shown.clone(), text));
    let mut docs = documents(&src, format, name).map_err(|e| fail(e.located(&src)))?;
    match docs.len() {
        0 => Err(LoadError::in_file(
            &shown,
            format!("JSON payload {name} is empty or nil"),
        )),
        1 => Ok(docs.remove(0)),
        _ => Err(LoadError::in_file(
            &shown,
            format!("JSON payload {name} must be a top-level object (map)"),
        )),
    }
}

/// Reads a `context:` file: its first document is the Context (cel.md §4.6).
fn read_context(path: &Path) -> Result<kpol::cel::context::CelContext, LoadError> {
    let (src, docs) = read_yaml(path)?;
    let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
    kpol::cel::context::CelContext::from_document(&root)
        .map_err(|e| LoadError::in_file(src.name(), format!("invalid context: {e}")))
}

/// Reads a values file (`--values-file`), with its warnings.
pub fn read_values_file(path: &Path) -> Result<(Values, Vec<String>), LoadError> {
    let (src, docs) = read_yaml(path)?;
    let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
    let mut warnings = Vec::new();
    let v = Values::from_file(&src, &root, &mut warnings)?;
    Ok((v, warnings))
}

/// Reads a userinfo file (`--userinfo`), with its warnings.
pub fn read_user_info(path: &Path) -> Result<(UserInfo, Vec<String>), LoadError> {
    let (src, docs) = read_yaml(path)?;
    let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
    let mut warnings = Vec::new();
    let u = testfile::user_info(&src, &root, &mut warnings)?;
    Ok((u, warnings))
}

/// Reads and parses one YAML file; the source is named by the path as joined.
pub fn read_yaml(path: &Path) -> Result<(Source, Vec<Document>), LoadError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::in_file(&name, format!("cannot read: {e}")))?;
    let src = Arc::new(SourceFile::new(name, text));
    match parse_documents(src.text(), Limits::default()) {
        Ok(docs) => Ok((src, docs)),
        Err(e) => {
            let lc = src.line_col(e.offset);
            Err(LoadError {
                message: format!("invalid YAML: {}", e.message),
                position: format!("{}:{}:{}", src.name(), lc.line, lc.column),
            })
        }
    }
}

/// A policy path: a file, or a directory walked recursively in file-name order (hidden
/// entries skipped, only `*.yaml`/`*.yml`), match.md §1.1.
fn policy_files(path: &Path) -> Result<Vec<PathBuf>, LoadError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walk {
        let entry =
            entry.map_err(|e| LoadError::in_file(path.display().to_string(), e.to_string()))?;
        if entry.file_type().is_file() && is_yaml(entry.path()) {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

fn is_yaml(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

/// Resources (§4): a directory as the *first* path replaces the list by the YAML files
/// directly inside it; duplicates keep the first. Deliberate difference: Kyverno skips an
/// unreadable resource file with a warning (and then silently checks nothing for it); kpol
/// stops the test with an error naming the file.
fn load_resources(
    dir: &Path,
    paths: &[String],
    warnings: &mut Vec<String>,
) -> Result<Vec<Resource>, LoadError> {
    let mut files: Vec<PathBuf> = paths.iter().map(|p| dir.join(p)).collect();
    if let Some(first) = files.first().filter(|f| f.is_dir()) {
        let mut inside: Vec<PathBuf> = std::fs::read_dir(first)
            .map_err(|e| LoadError::in_file(first.display().to_string(), e.to_string()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && is_yaml(p))
            .collect();
        inside.sort();
        files = inside;
    }
    let mut out: Vec<Resource> = Vec::new();
    for file in files {
        let (src, docs) = read_yaml(&file)?;
        for d in docs {
            let Ok(r) = Resource::from_document(d.root, Some(src.clone()), d.index) else {
                warnings.push(format!(
                    "{}: document {} is not a resource (no apiVersion/kind); skipped",
                    src.name(),
                    d.index + 1
                ));
                continue;
            };
            let dup = out.iter().any(|o| {
                o.group_version().0 == r.group_version().0
                    && o.kind == r.kind
                    && o.namespace == r.namespace
                    && o.name == r.name
            });
            if dup {
                warnings.push(format!(
                    "found duplicated resource {} {} {}",
                    r.kind, r.name, r.namespace
                ));
                continue;
            }
            out.push(r);
        }
    }
    Ok(out)
}

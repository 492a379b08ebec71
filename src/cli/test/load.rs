//! Loading what one test names (cli-compat.md §4): policies, resources, exceptions, values,
//! userinfo — all paths relative to the test file's directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::policies::{self, PolicySet};
use kpol::cluster::mocks::{GlobalSource, Globals};
use kpol::cluster::{Cluster, Offline};
use kpol::engine::test_run::TestInputs;
use kpol::request::UserInfo;
use kpol::request::values::Values;
use kpol::resource::Resource;
use kpol::source::{Source, SourceFile};
use kpol::testfile::{self, LoadError, TestSpec};
use kpol::yaml::{Document, Limits, Node, parse_documents};

/// Everything a test evaluates: its policies and exceptions (the engine's), and what the
/// engine evaluates them on (`kpol::engine::test_run`).
pub struct Inputs {
    pub policies: PolicySet,
    /// The PolicyExceptions the engine applies; those with `conditions` are not among them
    /// and taint the rows they name instead.
    pub policy_exceptions: Vec<kpol::exception::PolicyException>,
    /// The resources, values, request data, cluster and mocks. Its `clone_sources` and
    /// `authz` are read after the inputs (super::generated, super::authz).
    pub test: TestInputs,
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
            let (src, docs) = read_yaml(&joined(dir, file))?;
            let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
            Values::from_file(&src, &root, &mut warnings)?
        }
        (None, None) => Values::default(),
    };
    let user_info = match &spec.userinfo {
        Some(file) => {
            let (src, docs) = read_yaml(&joined(dir, file))?;
            let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
            Some(testfile::user_info(&src, &root, &mut warnings)?)
        }
        None => None,
    };
    let mut cel_context = match &spec.context {
        Some(file) => Some(read_context(&joined(dir, file))?),
        None => None,
    };
    let mut policies = PolicySet::default();
    let mut files = Vec::new();
    for p in &spec.policies {
        for file in policy_files(&joined(dir, p))? {
            files.push(read_yaml(&file)?);
        }
    }
    // The CLI loads every policy file before binding VAPs and MAPs: a binding may live in
    // another file than its policy.
    let bindings: Vec<Vec<Node>> = files
        .iter()
        .map(|(_, docs)| kpol::policy::admission_bindings(docs))
        .collect();
    for (i, (src, docs)) in files.into_iter().enumerate() {
        let others: Vec<Node> = bindings
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, b)| b.iter().cloned())
            .collect();
        let set = policies::load_file(&src, docs, &others);
        if let Some((position, message)) = &set.refused {
            return Err(LoadError::in_file(
                position.clone(),
                format!("failed to load policies ({message})"),
            ));
        }
        policies.extend(set);
    }
    let resources = load_resources(dir, &spec.resources, &mut warnings)?;
    let mut globals = Globals::default();
    for (entry, files) in &spec.global_entries {
        let mut entry = entry.clone();
        for f in files {
            let (_, docs) = read_yaml(&joined(dir, f))?;
            if let Some(list) = entry.resources.as_mut() {
                list.extend(docs.into_iter().map(|d| d.root));
            }
        }
        globals.insert(entry.name.clone(), resolve_global(&entry));
    }
    let targets = load_resources(dir, &spec.target_resources, &mut warnings)?;
    let cluster_mode = !spec.cluster_resources.is_empty();
    // The objects of the CLI's fake client (`runTest`): always the resources, targets and
    // parameter resources; the virtual cluster of `clusterResources` mode adds its own.
    let objects = Arc::new(build_cluster(
        dir,
        spec,
        &resources,
        &targets,
        cluster_mode,
        &mut warnings,
    )?);
    let cluster = cluster_mode.then(|| objects.clone());
    if let Some(c) = &cluster {
        // Cluster mode: CEL calls read the virtual cluster; the context file and the mocks
        // are not used for them (cel.md §11.2 item 2).
        cel_context = Some(kpol::cel::context::CelContext::with_cluster(c.clone()));
    } else if !spec.api_calls.is_empty() || !globals.is_empty() {
        let mut cx = cel_context.unwrap_or_default();
        cx.set_mocks(spec.api_calls.clone(), globals.clone());
        cel_context = Some(cx);
    }
    let cel_context = cel_context.map(Arc::new);
    let target_cel_context = match (&cluster, targets.is_empty()) {
        (_, true) => None,
        (Some(_), false) => cel_context.clone(),
        (None, false) => {
            let mut cx = match &spec.context {
                Some(file) => read_context(&joined(dir, file))?,
                None => Default::default(),
            };
            if !spec.api_calls.is_empty() || !globals.is_empty() {
                cx.set_mocks(spec.api_calls.clone(), globals.clone());
            }
            for t in &targets {
                cx.add_resource(&t.root).map_err(|e| {
                    LoadError::in_file(
                        t.source.as_ref().map_or("", |s| s.name()),
                        format!("failed to load target resources: {e}"),
                    )
                })?;
            }
            Some(Arc::new(cx))
        }
    };
    let offline = Arc::new(Offline {
        cluster,
        api_calls: spec.api_calls.clone(),
        globals,
        objects: Some(objects),
    });
    let mut policy_exceptions = Vec::new();
    for e in &spec.exceptions {
        let (src, docs) = read_yaml(&joined(dir, e))?;
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
    let mut params = Vec::new();
    for file in &spec.param_resources {
        let (_, docs) = read_yaml(&joined(dir, file))?;
        params.extend(
            docs.into_iter()
                .map(|d| d.root)
                .filter(|n| n.get("kind").is_some()),
        );
    }
    let payloads = spec
        .json_payloads
        .iter()
        .map(|name| load_payload(dir, name))
        .collect::<Result<_, _>>()?;
    Ok(Inputs {
        policies,
        policy_exceptions,
        test: TestInputs {
            payloads,
            targets,
            target_cel_context,
            resources,
            values: std::sync::Arc::new(values),
            user_info,
            cel_context,
            offline,
            params: Arc::new(params),
            clone_sources: Vec::new(),
            authz: Vec::new(),
        },
        warnings,
    })
}

/// A `globalContextEntries` item's value (`store/gctx_resolve.go`): the data (or the list of
/// resources) read as JSON, then `fieldPath`, then the map of projections.
fn resolve_global(entry: &GlobalSource) -> Result<Node, String> {
    use kpol::jmespath::{Expr, value};
    let search = |path: &str, data: &Node| -> Result<Node, String> {
        let expr = Expr::cached(path).map_err(|e| e.to_string())?;
        expr.search(data)
            .map(|v| v.into_owned())
            .map_err(|e| e.to_string())
    };
    let name = &entry.name;
    let mut root = match (&entry.resources, &entry.data) {
        (Some(list), _) => value::json_round_trip(&value::seq(list.clone())),
        (None, Some(d)) => value::json_round_trip(d),
        (None, None) => return Ok(value::null()),
    };
    if !entry.field_path.is_empty() {
        root = search(&entry.field_path, &root)
            .map_err(|e| format!("globalContextEntries {name:?} fieldPath: {e}"))?;
    }
    if entry.projections.is_empty() {
        return Ok(root);
    }
    let mut out = Vec::new();
    for (p, path) in &entry.projections {
        let v = search(path, &root).map_err(|e| {
            format!("globalContextEntries {name:?} projection {p:?} path {path:?}: {e}")
        })?;
        out.push((p.clone(), v));
    }
    Ok(value::map(out))
}

/// The objects of the CLI's fake client (`runTest`): the resources, target resources and
/// parameter resources, then in `clusterResources` mode (the virtual cluster) each
/// `ClusterResource` file's `spec.resources` and the CRDs its `spec.crds` name (paths
/// relative to the test file's directory).
fn build_cluster(
    dir: &Path,
    spec: &TestSpec,
    resources: &[Resource],
    targets: &[Resource],
    cluster_mode: bool,
    warnings: &mut Vec<String>,
) -> Result<Cluster, LoadError> {
    let mut cluster = Cluster::default();
    let add = |c: &mut Cluster, node: &Node, at: &str| {
        c.add(node).map_err(|e| {
            LoadError::in_file(at, format!("failed to load Kubernetes resources: {e}"))
        })
    };
    let at = |r: &Resource| {
        r.source
            .as_ref()
            .map_or_else(String::new, |s| s.name().to_owned())
    };
    for r in resources.iter().chain(targets) {
        add(&mut cluster, &r.root, &at(r))?;
    }
    for r in load_resources(dir, &spec.param_resources, warnings)? {
        add(&mut cluster, &r.root, &at(&r))?;
    }
    for file in spec.cluster_resources.iter().filter(|_| cluster_mode) {
        let (src, docs) = read_yaml(&joined(dir, file))?;
        let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
        add_cluster_resource(&mut cluster, dir, &src, &root)?;
    }
    Ok(cluster)
}

/// A `ClusterResource` document: its `spec.crds` files (relative to `dir`), then its
/// `spec.resources`.
fn add_cluster_resource(
    cluster: &mut Cluster,
    dir: &Path,
    src: &Source,
    root: &Node,
) -> Result<(), LoadError> {
    let fail = |at: &str, e: String| {
        LoadError::in_file(at, format!("failed to load Kubernetes resources: {e}"))
    };
    let list = |k: &str| {
        root.get_path(&["spec", k])
            .and_then(Node::as_seq)
            .unwrap_or(&[])
    };
    for crd in list("crds") {
        let Some(p) = crd.as_str() else { continue };
        let (crd_src, crd_docs) = read_yaml(&joined(dir, p))?;
        for d in crd_docs {
            cluster.add(&d.root).map_err(|e| fail(crd_src.name(), e))?;
        }
    }
    for r in list("resources") {
        cluster.add(r).map_err(|e| fail(src.name(), e))?;
    }
    Ok(())
}

/// The virtual cluster of `--cluster-resources` (`kpol check`): every document of the
/// files — `cli.kyverno.io` ClusterResource documents (their CRD paths relative to the
/// file's directory), CRDs and any other object.
pub fn read_cluster_files(files: &[PathBuf]) -> Result<Cluster, LoadError> {
    let mut cluster = Cluster::default();
    for file in files {
        let (src, docs) = read_yaml(file)?;
        let dir = file.parent().unwrap_or(Path::new("."));
        for d in docs {
            if d.root.is_null() {
                continue;
            }
            let kind = d.root.get("kind").and_then(Node::as_str).unwrap_or("");
            let api = d
                .root
                .get("apiVersion")
                .and_then(Node::as_str)
                .unwrap_or("");
            if kind == "ClusterResource" && api.starts_with("cli.kyverno.io/") {
                add_cluster_resource(&mut cluster, dir, &src, &d.root)?;
            } else {
                cluster.add(&d.root).map_err(|e| {
                    LoadError::in_file(
                        src.name(),
                        format!(
                            "document {}: failed to load Kubernetes resources: {e}",
                            d.index + 1
                        ),
                    )
                })?;
            }
        }
    }
    Ok(cluster)
}

/// One `jsonPayloads` entry, as the CLI loads it: the whole file is one payload, an object
/// (a YAML file of several documents is a list there, so refused here too).
fn load_payload(dir: &Path, name: &str) -> Result<Resource, LoadError> {
    use kpol::payload::{Format, documents, unrecognized};
    let path = joined(dir, name);
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

/// Reads a `context:` file: its first document is the Context (cel.md §4.6), read strictly.
pub fn read_context(path: &Path) -> Result<kpol::cel::context::CelContext, LoadError> {
    let (src, docs) = read_yaml(path)?;
    // The CLI decodes the file's first document, even an empty one (then the context is empty).
    let root = docs
        .into_iter()
        .next()
        .filter(|d| d.index == 0)
        .map_or_else(Node::null, |d| d.root);
    kpol::cel::context::CelContext::from_file(&src, &root)
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

/// `name` (a path the test file gives) under the test's directory `dir`, cleaned as Go's
/// `filepath.Join` cleans it: the CLI opens that path and names it in its messages, so
/// `dir/../x.yaml` is read and shown as `x.yaml`. A path that is not UTF-8 stays as joined.
pub(super) fn joined(dir: &Path, name: impl AsRef<Path>) -> PathBuf {
    let path = dir.join(name);
    match path.to_str() {
        Some(s) => PathBuf::from(testfile::clean_path(s)),
        None => path,
    }
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
    let mut files: Vec<PathBuf> = paths.iter().map(|p| joined(dir, p)).collect();
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

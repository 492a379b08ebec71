//! Offline data for Kyverno's context libraries (cel.md §4.6): the test file's `context:` file
//! (`cli.kyverno.io/v1alpha1` `Context`, `spec.resources` and `spec.images`) served to
//! `resource.Get`/`resource.List` and `image.GetMetadata` the way the CLI's fake provider
//! serves them (`kyverno/kyverno:pkg/cel/libs/fake_context.go`, loaded by
//! `cmd/cli/kubectl-kyverno/processor/utils.go` `NewContextProvider`).
//!
//! The data is installed for the current thread with [`with_context`] around one test's
//! evaluation (a test's resources are evaluated on one thread). Without it these calls stay
//! `unsupported offline` errors, never a silent pass.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::extractors::Arguments;
use cel::{Context, ExecutionError, Value};

use super::convert::{map_of, to_cel};
use super::libs::unsupported_offline;
use crate::cluster::mocks::{ApiCalls, Globals};
use crate::cluster::{Cluster, Gvr, group_resource, parse_group_version};
use crate::source::SourceFile;
use crate::testfile::{ImageData, LoadError};
use crate::yaml::Node;

/// The data CEL library calls are served from: the test's `context:` file (`spec.resources`
/// form a [`Cluster`], `spec.images` the image data), or in `clusterResources` mode the
/// test's virtual cluster; and the `apiCallResponses` / `globalContextEntries` mocks for
/// `http.Get/Post` and `globalContext.Get` (cel.md §11.2 item 6).
#[derive(Debug, Default)]
pub struct CelContext {
    /// The objects, and the GVRs the cluster serves.
    cluster: Arc<Cluster>,
    /// The objects as CEL values, by GVR, namespace and name (names sorted: the CLI
    /// iterates a Go map here), converted once rather than on every call.
    values: HashMap<Gvr, BTreeMap<String, BTreeMap<String, Value>>>,
    /// Image data by the reference written in the file (looked up verbatim).
    images: HashMap<String, Value>,
    http: ApiCalls,
    globals: Globals,
    /// `resource.List` with namespace `""` lists every namespace (a real provider over the
    /// virtual cluster), instead of the objects without a namespace (the fake provider); and
    /// `resource.ToGVR` maps kinds (the fake provider implements no mapping).
    all_namespaces: bool,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<CelContext>>> = const { RefCell::new(None) };
    static POLICY_NAMESPACE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The namespace of the namespaced CEL policy being evaluated on this thread, while the guard
/// lives. Kyverno gives a namespaced policy the namespaced form of the resource library
/// (`kyverno/sdk:extensions/cel/libs/resource/lib.go` `namespacedEnv`): `resource.Get(apiVersion,
/// resource, name)` and `resource.List(apiVersion, resource[, labels])` read the policy's own
/// namespace, and the forms that take a namespace do not exist there.
pub(crate) struct PolicyNamespace(Option<String>);

impl PolicyNamespace {
    /// Sets `namespace` (`None`: a cluster-wide policy) until the guard drops.
    pub(crate) fn enter(namespace: Option<&str>) -> Self {
        let namespace = namespace.map(str::to_owned);
        Self(POLICY_NAMESPACE.with(|c| c.replace(namespace)))
    }
}

impl Drop for PolicyNamespace {
    fn drop(&mut self) {
        let previous = self.0.take();
        POLICY_NAMESPACE.with(|c| c.replace(previous));
    }
}

fn policy_namespace() -> Option<String> {
    POLICY_NAMESPACE.with(|c| c.borrow().clone())
}

/// Runs `f` with `ctx` as this thread's context data, restoring the previous one afterwards.
/// (Restored on unwinding too, so a caught panic cannot leak one test's data into the next.)
pub fn with_context<R>(ctx: Option<Arc<CelContext>>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<CelContext>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| c.replace(previous));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(ctx)));
    f()
}

fn current() -> Option<Arc<CelContext>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The resource name (plural) of a kind: in cluster mode as the virtual cluster's CRDs name
/// it (the CLI's REST mapper learns them), else the discovery-style guess.
pub(crate) fn resource_name(group: &str, kind: &str) -> String {
    current()
        .filter(|c| c.all_namespaces)
        .and_then(|c| {
            c.cluster
                .custom_kinds()
                .iter()
                .find(|k| k.group == group && k.kind == kind)
                .map(|k| k.plural.clone())
        })
        .unwrap_or_else(|| crate::base::gvk::plural(kind))
}

impl CelContext {
    /// Reads a context file's first document (`root`), strictly as the CLI reads it
    /// ([`crate::testfile::parse_context`]). Upstream maps each resource's kind to its
    /// resource name with the cluster's REST mapper; offline kpol uses the discovery-style
    /// plural.
    pub fn from_file(source: &SourceFile, root: &Node) -> Result<Self, LoadError> {
        let spec = crate::testfile::parse_context(source, root)?;
        let mut ctx = Self::default();
        for r in &spec.resources {
            ctx.add_resource(r)
                .map_err(|e| LoadError::at(source, r, format!("context resource: {e}")))?;
        }
        for i in &spec.images {
            ctx.add_image(i);
        }
        Ok(ctx)
    }

    /// Context data over the virtual cluster of `clusterResources` mode, read as the CLI's
    /// real context provider reads a cluster (`resource.List` in namespace `""` lists all).
    pub fn with_cluster(cluster: Arc<Cluster>) -> Self {
        let mut values: HashMap<Gvr, BTreeMap<String, BTreeMap<String, Value>>> = HashMap::new();
        for (gvr, ns, name, node) in cluster.objects() {
            values
                .entry(gvr.clone())
                .or_default()
                .entry(ns.to_owned())
                .or_default()
                .insert(name.to_owned(), to_cel(node));
        }
        Self {
            cluster,
            values,
            all_namespaces: true,
            ..Self::default()
        }
    }

    /// Adds the mocks `http.Get/Post` and `globalContext.Get` read.
    pub fn set_mocks(&mut self, http: ApiCalls, globals: Globals) {
        self.http = http;
        self.globals = globals;
    }

    /// Adds one object (keeping its integers: the CLI converts only the tested resources).
    pub fn add_resource(&mut self, node: &Node) -> Result<(), String> {
        if node
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or("")
            .is_empty()
        {
            return Err("context resource without a kind".to_owned());
        }
        let gvr = Arc::get_mut(&mut self.cluster)
            .ok_or_else(|| "the cluster is shared and cannot be changed".to_owned())?
            .add(node)?;
        let s = |path: &[&str]| node.get_path(path).and_then(Node::as_str).unwrap_or("");
        self.values
            .entry(gvr)
            .or_default()
            .entry(s(&["metadata", "namespace"]).to_owned())
            .or_default()
            .insert(s(&["metadata", "name"]).to_owned(), to_cel(node));
        Ok(())
    }

    /// Adds one `ImageData` entry, as the CLI stores it: by its `image` (an entry without one
    /// under `""`), marshalled to JSON (`image`, `resolvedImage`, `registry` and `repository`
    /// always present, the others only when set) and read back, so every number is a double.
    /// A later entry for the same image replaces an earlier one.
    pub(crate) fn add_image(&mut self, data: &ImageData) {
        let mut fields: Vec<(&str, Value)> = Vec::new();
        for (key, v) in &data.strings {
            let always = matches!(*key, "image" | "resolvedImage" | "registry" | "repository");
            if always || !v.is_empty() {
                fields.push((key, Value::from(v.as_str())));
            }
        }
        for (key, v) in &data.values {
            fields.push((key, doubles(to_cel(v))));
        }
        self.images
            .insert(data.string("image").to_owned(), map_of(fields));
    }

    fn get(
        &self,
        api_version: &str,
        resource: &str,
        ns: &str,
        name: &str,
    ) -> Result<Value, String> {
        let (g, v) = parse_group_version(api_version)?;
        let found = self
            .values
            .get(&(g, v, resource.to_owned()))
            .and_then(|by_ns| by_ns.get(ns))
            .and_then(|by_name| by_name.get(name));
        // Not found is `null`, not an error (`kyverno/sdk:extensions/cel/libs/resource/impl.go`).
        Ok(found.cloned().unwrap_or(Value::Null))
    }

    fn list(&self, api_version: &str, resource: &str, ns: &str) -> Result<Value, String> {
        let (g, v) = parse_group_version(api_version)?;
        let gvr: Gvr = (g, v, resource.to_owned());
        if !self.cluster.serves(&gvr) {
            return Err(format!("{} resource not found", group_resource(&gvr)));
        }
        let by_ns = self.values.get(&gvr);
        let items: Vec<Value> = match by_ns {
            None => Vec::new(),
            // A real provider lists every namespace for `""`; the fake one, those without.
            Some(m) if ns.is_empty() && self.all_namespaces => {
                m.values().flat_map(BTreeMap::values).cloned().collect()
            }
            Some(m) => m
                .get(ns)
                .map(|by_name| by_name.values().cloned().collect())
                .unwrap_or_default(),
        };
        Ok(map_of([("items", Value::List(Arc::new(items)))]))
    }

    fn image(&self, image: &str) -> Result<Value, String> {
        self.images
            .get(image)
            .cloned()
            .ok_or_else(|| format!("image data for {image} not found in the context"))
    }
}

/// Integers as doubles (what a JSON round trip through `map[string]any` gives).
fn doubles(v: Value) -> Value {
    match v {
        Value::Int(i) => Value::Float(i as f64),
        Value::List(l) => Value::List(Arc::new(l.iter().cloned().map(doubles).collect())),
        Value::Map(m) => {
            let entries: HashMap<_, _> = m
                .map
                .iter()
                .map(|(k, v)| (k.clone(), doubles(v.clone())))
                .collect();
            Value::Map(cel::objects::Map {
                map: Arc::new(entries),
            })
        }
        other => other,
    }
}

fn str_arg<'a>(f: &str, args: &'a [Value], i: usize) -> Result<&'a str, ExecutionError> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.as_str()),
        Some(other) => Err(ExecutionError::function_error(
            f,
            format!(
                "argument {} must be a string, got {}",
                i + 1,
                other.type_of()
            ),
        )),
        None => Err(ExecutionError::invalid_argument_count(i + 1, args.len())),
    }
}

type Handler = fn(&CelContext, &str, &[Value]) -> Result<Value, ExecutionError>;

/// The value `resource.ToGVR` returns: opaque in CEL (Kyverno declares it as the opaque type
/// `schema.GroupVersionResource`), only passed on to `resource.Get` / `resource.List`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GvrValue(pub Gvr);

impl cel::objects::Opaque for GvrValue {
    fn runtime_type_name(&self) -> &str {
        "schema.GroupVersionResource"
    }
}

/// `resource.ToGVR(apiVersion, kind)`: the kind's resource as the REST mapper of the
/// `clusterResources` mode knows it (built-in kinds and the CRDs read,
/// [`Cluster::rest_mapping`]). Outside that mode the Kyverno CLI's fake provider implements
/// no mapping (`pkg/cel/libs/fake_context.go`: every call is the error `not implemented`):
/// kpol answers with an error too.
fn to_gvr(cx: &CelContext, f: &str, a: &[Value]) -> Result<Value, ExecutionError> {
    if a.len() != 2 {
        return Err(ExecutionError::invalid_argument_count(2, a.len()));
    }
    let (api_version, kind) = (str_arg(f, a, 0)?, str_arg(f, a, 1)?);
    if !cx.all_namespaces {
        return Err(ExecutionError::function_error(
            f,
            "internal error: not implemented (without clusterResources the Kyverno CLI maps no \
             kind to its resource)",
        ));
    }
    cx.cluster
        .rest_mapping(api_version, kind)
        .map(|gvr| Value::Opaque(Arc::new(GvrValue(gvr))))
        .map_err(|e| {
            ExecutionError::function_error(f, format!("failed to map kind to resource: {e}"))
        })
}

/// The arguments with a leading `resource.ToGVR` value spelled out as its apiVersion and
/// resource (the GVR overloads of Get and List stand for the string forms).
fn spell_gvr(a: &[Value]) -> Vec<Value> {
    let gvr = match a.first() {
        Some(Value::Opaque(o)) => o.downcast_ref::<GvrValue>(),
        _ => None,
    };
    match gvr {
        Some(GvrValue((g, v, r))) => {
            let api_version = if g.is_empty() {
                v.clone()
            } else {
                format!("{g}/{v}")
            };
            let mut out = vec![Value::from(api_version), Value::from(r.as_str())];
            out.extend(a.iter().skip(1).cloned());
            out
        }
        None => a.to_vec(),
    }
}

/// `resource.Get(apiVersion, resource, namespace, name)`; in a namespaced policy
/// `resource.Get(apiVersion, resource, name)` in the policy's namespace. The other form of
/// each is not declared where the policy is (a compile error upstream).
fn resource_get(cx: &CelContext, f: &str, given: &[Value]) -> Result<Value, ExecutionError> {
    let a = &spell_gvr(given)[..];
    let (v, r, ns, n) = match (policy_namespace(), a.len()) {
        (None, 4) => (
            str_arg(f, a, 0)?,
            str_arg(f, a, 1)?,
            str_arg(f, a, 2)?.to_owned(),
            str_arg(f, a, 3)?,
        ),
        (Some(own), 3) => (str_arg(f, a, 0)?, str_arg(f, a, 1)?, own, str_arg(f, a, 2)?),
        (own, _) => return Err(no_overload(f, given.len(), own.is_some())),
    };
    cx.get(v, r, &ns, n)
        .map_err(|e| ExecutionError::function_error(f, format!("failed to get resource: {e}")))
}

/// `resource.List(apiVersion, resource, namespace[, labels])`; in a namespaced policy
/// `resource.List(apiVersion, resource[, labels])` in the policy's namespace. The label
/// selector is ignored, as the fake provider ignores it.
fn resource_list(cx: &CelContext, f: &str, given: &[Value]) -> Result<Value, ExecutionError> {
    let a = &spell_gvr(given)[..];
    let (v, r, ns) = match (policy_namespace(), a.len()) {
        (None, 3 | 4) => (
            str_arg(f, a, 0)?,
            str_arg(f, a, 1)?,
            str_arg(f, a, 2)?.to_owned(),
        ),
        (Some(own), 2 | 3) => (str_arg(f, a, 0)?, str_arg(f, a, 1)?, own),
        (own, _) => return Err(no_overload(f, given.len(), own.is_some())),
    };
    cx.list(v, r, &ns)
        .map_err(|e| ExecutionError::function_error(f, format!("failed to list resource: {e}")))
}

/// A call with an argument count the policy's form of the library does not declare.
fn no_overload(f: &str, args: usize, namespaced: bool) -> ExecutionError {
    let scope = if namespaced {
        "a namespaced policy (its own namespace is implied)"
    } else {
        "a cluster-wide policy (the namespace is an argument)"
    };
    ExecutionError::function_error(
        f,
        format!("found no matching overload for '{f}' with {args} arguments in {scope}"),
    )
}

fn image_metadata(cx: &CelContext, f: &str, a: &[Value]) -> Result<Value, ExecutionError> {
    if a.len() != 1 {
        return Err(ExecutionError::invalid_argument_count(1, a.len()));
    }
    cx.image(str_arg(f, a, 0)?)
        .map_err(|e| ExecutionError::function_error(f, format!("failed to get image data: {e}")))
}

/// `http.Get(url[, headers])` / `http.Post(url, body[, headers])` answered by an
/// `apiCallResponses` mock as `{body, statusCode}` (the CLI wraps the body; its numbers are
/// JSON's doubles). An URL no mock answers would go to the network: unsupported offline.
fn http_call(cx: &CelContext, f: &str, a: &[Value]) -> Result<Value, ExecutionError> {
    let post = f.ends_with("ost");
    let (lo, hi) = if post { (2, 3) } else { (1, 2) };
    if !(lo..=hi).contains(&a.len()) {
        return Err(ExecutionError::invalid_argument_count(lo, a.len()));
    }
    let url = str_arg(f, a, 0)?;
    let method = if post { "POST" } else { "GET" };
    let Some(mock) = cx.http.lookup(method, url) else {
        return Err(unsupported_offline(f));
    };
    Ok(map_of([
        ("body", doubles(to_cel(&mock.body))),
        ("statusCode", Value::Int(i64::from(mock.status))),
    ]))
}

/// `globalContext.Get(name, projection)` from the `globalContextEntries` mocks: an unknown
/// name is `null`; a projection that the entry lacks is an error.
fn global_get(cx: &CelContext, f: &str, a: &[Value]) -> Result<Value, ExecutionError> {
    if a.len() != 2 {
        return Err(ExecutionError::invalid_argument_count(2, a.len()));
    }
    let (name, projection) = (str_arg(f, a, 0)?, str_arg(f, a, 1)?);
    match cx.globals.get(name, projection) {
        None => Ok(Value::Null),
        Some(Ok(v)) => Ok(doubles(to_cel(&v))),
        Some(Err(e)) => Err(ExecutionError::function_error(f, e)),
    }
}

/// The library calls served from context data, by name.
pub(crate) const SERVED: &[(&str, Handler)] = &[
    ("http.Get", http_call),
    ("http.get", http_call),
    ("http.Post", http_call),
    ("http.post", http_call),
    ("globalContext.Get", global_get),
    ("globalContext.get", global_get),
    ("resource.Get", resource_get),
    ("resource.get", resource_get),
    ("resource.List", resource_list),
    ("resource.list", resource_list),
    ("resource.ToGVR", to_gvr),
    ("resource.toGVR", to_gvr),
    ("image.GetMetadata", image_metadata),
    ("image.getMetadata", image_metadata),
];

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    for (name, handler) in SERVED {
        let (name, handler): (&'static str, Handler) = (name, *handler);
        let _ = ctx.add_function(
            name,
            move |Arguments(args): Arguments| -> Result<Value, ExecutionError> {
                match current() {
                    Some(cx) => handler(&cx, name, &args),
                    None => Err(unsupported_offline(name)),
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn ctx() -> Arc<CelContext> {
        let text = "spec:\n  resources:\n  - {apiVersion: apps/v1, kind: Deployment, \
                    metadata: {name: d, namespace: ns}, spec: {replicas: 2}}\n  images:\n  \
                    - {image: 'a:1', config: {size: 3}}\n";
        let root = parse_documents(text, Limits::default())
            .unwrap()
            .remove(0)
            .root;
        let src = SourceFile::new("ctx.yaml", text);
        Arc::new(CelContext::from_file(&src, &root).unwrap())
    }

    fn run(cx: Option<Arc<CelContext>>, expr: &str) -> Result<Value, String> {
        with_context(cx, || crate::cel::eval_expr(expr))
    }

    #[test]
    fn resources_keep_ints_images_get_doubles() {
        let c = Some(ctx());
        let get = "resource.Get('apps/v1', 'deployments', 'ns', 'd').spec.replicas";
        assert_eq!(run(c.clone(), get), Ok(Value::Int(2)));
        let img = "image.getMetadata('a:1')";
        assert_eq!(
            run(c.clone(), &format!("{img}.config.size")),
            Ok(Value::Float(3.0))
        );
        assert_eq!(run(c, &format!("{img}.registry")), Ok(Value::from("")));
    }

    #[test]
    fn misses_like_the_fake_provider() {
        let c = Some(ctx());
        let absent = "resource.get('apps/v1', 'deployments', 'ns', 'x') == null";
        assert_eq!(run(c.clone(), absent), Ok(Value::Bool(true)));
        let empty = "resource.List('apps/v1', 'deployments', 'other').items.size()";
        assert_eq!(run(c.clone(), empty), Ok(Value::Int(0)));
        let e = run(c.clone(), "resource.List('batch/v1', 'jobs', 'ns')").unwrap_err();
        assert!(e.contains("jobs.batch resource not found"), "{e}");
        let e = run(c, "image.GetMetadata('b:1')").unwrap_err();
        assert!(e.contains("image data for b:1 not found"), "{e}");
    }

    #[test]
    fn without_context_data_calls_are_unsupported_offline() {
        let e = run(None, "resource.List('v1', 'pods', 'ns')").unwrap_err();
        assert!(e.contains("unsupported offline"), "{e}");
        // The data is scoped: it is gone after `with_context` returns.
        let _ = run(Some(ctx()), "1");
        assert!(current().is_none());
    }

    // A namespaced policy's forms (`namespacedEnv` of Kyverno's resource library): Get with
    // three arguments and List with two read the policy's namespace; the forms that name a
    // namespace are not there, nor the namespaced forms in a cluster-wide policy.
    #[test]
    fn namespaced_policies_take_the_forms_without_namespace() {
        let c = Some(ctx());
        let in_ns = |expr: &str| {
            let _ns = PolicyNamespace::enter(Some("ns"));
            run(c.clone(), expr)
        };
        assert_eq!(
            in_ns("resource.Get('apps/v1', 'deployments', 'd').spec.replicas"),
            Ok(Value::Int(2))
        );
        assert_eq!(
            in_ns("resource.list('apps/v1', 'deployments').items.size()"),
            Ok(Value::Int(1))
        );
        assert_eq!(
            in_ns("resource.List('apps/v1', 'deployments', {'app': 'x'}).items.size()"),
            Ok(Value::Int(1))
        );
        let e = in_ns("resource.Get('apps/v1', 'deployments', 'ns', 'd')").unwrap_err();
        assert!(
            e.contains("no matching overload") && e.contains("namespaced policy"),
            "{e}"
        );
        // The guard is scoped: a cluster-wide evaluation refuses the namespaced form.
        let e = run(c, "resource.Get('apps/v1', 'deployments', 'd')").unwrap_err();
        assert!(
            e.contains("no matching overload") && e.contains("cluster-wide policy"),
            "{e}"
        );
    }

    fn cluster_ctx() -> Arc<CelContext> {
        let mut c = Cluster::default();
        for t in [
            "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: \
             {name: geese.example.com}, spec: {group: example.com, scope: Namespaced, names: \
             {kind: Goose, plural: geese}, versions: [{name: v1}]}}",
            "{apiVersion: example.com/v1, kind: Goose, metadata: {name: g, namespace: pond}}",
            "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: pond}, \
             spec: {replicas: 3}}",
        ] {
            let root = parse_documents(t, Limits::default())
                .unwrap()
                .remove(0)
                .root;
            c.add(&root).unwrap();
        }
        Arc::new(CelContext::with_cluster(Arc::new(c)))
    }

    // `resource.ToGVR` in clusterResources mode, with the GVR overloads of Get and List
    // (Kyverno v1.19.0's CLI gives these values for the same cluster).
    #[test]
    fn to_gvr_feeds_get_and_list() {
        let c = Some(cluster_ctx());
        let get =
            "resource.Get(resource.ToGVR('apps/v1', 'Deployment'), 'pond', 'd').spec.replicas";
        assert_eq!(run(c.clone(), get), Ok(Value::Int(3)));
        // ToGVR maps to the CRD's plural `geese`, but the objects are stored under the
        // guessed `gooses` (testdata/cluster/crd-store, checked with the v1.19.0 CLI).
        let list = "resource.list(resource.toGVR('example.com/v1', 'Goose'), 'pond').items.size()";
        assert_eq!(run(c.clone(), list), Ok(Value::Int(0)));
        let list = "resource.List('example.com/v1', 'gooses', 'pond').items.size()";
        assert_eq!(run(c.clone(), list), Ok(Value::Int(1)));
        let labels = "resource.List(resource.ToGVR('apps/v1', 'Deployment'), 'pond', {'a': 'b'})";
        assert_eq!(
            run(c.clone(), &format!("{labels}.items.size()")),
            Ok(Value::Int(1))
        );
        // A namespaced policy's forms: the GVR and the name (or nothing) only.
        let _ns = PolicyNamespace::enter(Some("pond"));
        let get = "resource.Get(resource.ToGVR('apps/v1', 'Deployment'), 'd').metadata.name";
        assert_eq!(run(c.clone(), get), Ok(Value::from("d")));
        let e = run(
            c,
            "resource.Get(resource.ToGVR('apps/v1', 'Deployment'), 'pond', 'd')",
        )
        .unwrap_err();
        assert!(
            e.contains("no matching overload") && e.contains("with 3 arguments"),
            "{e}"
        );
    }

    #[test]
    fn to_gvr_errors() {
        let c = Some(cluster_ctx());
        let e = run(c.clone(), "resource.ToGVR('example.com/v1', 'Duck')").unwrap_err();
        assert!(
            e.contains(
                "failed to map kind to resource: no matches for kind \"Duck\" in version \"example.com/v1\""
            ),
            "{e}"
        );
        let e = run(c.clone(), "resource.ToGVR('a/b/c', 'Pod')").unwrap_err();
        assert!(e.contains("unexpected GroupVersion string: a/b/c"), "{e}");
        let e = run(c, "resource.ToGVR('v1')").unwrap_err();
        assert!(!e.is_empty());
        // A context file (the CLI's fake provider) maps nothing; no data is unsupported.
        let e = run(Some(ctx()), "resource.ToGVR('apps/v1', 'Deployment')").unwrap_err();
        assert!(e.contains("not implemented"), "{e}");
        let e = run(None, "resource.ToGVR('apps/v1', 'Deployment')").unwrap_err();
        assert!(e.contains("unsupported offline"), "{e}");
    }
}

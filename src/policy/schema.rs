//! The field schema of the policy kinds kpol loads, and the check of a policy document
//! against it: an unknown field, a scalar of the wrong type or a missing required field is an
//! error at its line:column (one the kind's loader already reported at that place is not
//! repeated), as the Kyverno CLI refuses such a file (it loads policies through
//! kubectl-validate with Kyverno's CRDs, `cmd/cli/kubectl-kyverno/policy/load.go`) and
//! `kubectl apply` with strict field validation refuses such a policy.
//!
//! The facts are data: `schema/kyverno-v1.19.txt`, written by `scripts/crd-schema` from
//! kyverno/kyverno v1.19.0 `config/crds` and kubectl-validate's 1.32 built-ins (the admission
//! kinds and `ObjectMeta`). Its format is described in that script. Areas a CRD leaves open
//! (`x-kubernetes-preserve-unknown-fields`: patterns, foreach bodies, CEL variables…) are not
//! checked. A `null` is never an error (Kubernetes prunes nulls of non-nullable fields).

use std::sync::OnceLock;

use crate::diagnostic::{Code, Diagnostic, Location};
use crate::source::{SourceFile, Span};
use crate::yaml::{Node, Value};

const DATA: &str = include_str!("schema/kyverno-v1.19.txt");

#[derive(Debug, PartialEq)]
enum Shape {
    /// An object with only these fields (name, required, node).
    Closed(Vec<(String, bool, usize)>),
    /// An object whose listed fields are checked and others allowed.
    Open(Vec<(String, bool, usize)>),
    Map(usize),
    Array(usize),
    Str,
    Int,
    Num,
    Bool,
    IntOrStr,
    Any,
}

/// The parsed data file.
#[derive(Debug)]
pub(crate) struct Schemas {
    nodes: Vec<Shape>,
    /// (group, version, kind, root node).
    roots: Vec<(String, String, String, usize)>,
    /// Kinds that exist without a CRD of the user's (built-in and Kyverno's), sorted.
    builtin: Vec<String>,
}

impl Schemas {
    fn parse(text: &str) -> Result<Self, String> {
        let mut nodes = Vec::new();
        let mut roots = Vec::new();
        let mut builtin = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let bad = || format!("schema data line {}: {line}", n + 1);
            let mut words = line.split_whitespace();
            let Some(first) = words.next() else { continue };
            if first.starts_with('#') {
                continue;
            }
            let num = |w: Option<&str>| w.and_then(|w| w.parse::<usize>().ok()).ok_or_else(bad);
            if first == "builtin" {
                builtin.push(words.next().ok_or_else(bad)?.to_owned());
                continue;
            }
            if first == "kind" {
                let mut next = || words.next().map(str::to_owned).ok_or_else(bad);
                let group = next()?;
                let group = if group == "-" { String::new() } else { group };
                let (version, kind) = (next()?, next()?);
                roots.push((group, version, kind, num(words.next())?));
                continue;
            }
            if num(Some(first))? != nodes.len() {
                return Err(bad());
            }
            let tag = words.next().ok_or_else(bad)?;
            let shape = match tag {
                "o" | "O" => {
                    let mut fields = Vec::new();
                    for w in words.by_ref() {
                        let (name, id) = w.split_once('=').ok_or_else(bad)?;
                        let (name, required) = match name.strip_suffix('!') {
                            Some(n) => (n, true),
                            None => (name, false),
                        };
                        fields.push((name.to_owned(), required, num(Some(id))?));
                    }
                    if tag == "o" {
                        Shape::Closed(fields)
                    } else {
                        Shape::Open(fields)
                    }
                }
                "m" => Shape::Map(num(words.next())?),
                "a" => Shape::Array(num(words.next())?),
                "s" => Shape::Str,
                "i" => Shape::Int,
                "n" => Shape::Num,
                "b" => Shape::Bool,
                "x" => Shape::IntOrStr,
                "*" => Shape::Any,
                _ => return Err(bad()),
            };
            nodes.push(shape);
        }
        let count = nodes.len();
        let refs_ok = nodes.iter().all(|s| match s {
            Shape::Closed(f) | Shape::Open(f) => f.iter().all(|(_, _, id)| *id < count),
            Shape::Map(id) | Shape::Array(id) => *id < count,
            _ => true,
        }) && roots.iter().all(|r| r.3 < count);
        if !refs_ok {
            return Err("schema data: a node refers past the table".to_owned());
        }
        builtin.sort();
        Ok(Self {
            nodes,
            roots,
            builtin,
        })
    }

    fn root(&self, group: &str, version: &str, kind: &str) -> Option<usize> {
        self.roots
            .iter()
            .find(|(g, v, k, _)| g == group && v == version && k == kind)
            .map(|r| r.3)
    }

    /// Whether the data has a schema for some version of (group, kind).
    #[cfg(test)]
    pub(crate) fn covers(&self, group: &str, kind: &str) -> bool {
        self.roots
            .iter()
            .any(|(g, _, k, _)| g == group && k == kind)
    }

    fn walk(&self, id: usize, node: &Node, path: &mut String, out: &mut Vec<(String, Span)>) {
        if node.is_null() {
            return;
        }
        let Some(shape) = self.nodes.get(id) else {
            return;
        };
        let want = match (shape, &node.value) {
            (Shape::Closed(fields) | Shape::Open(fields), Value::Map(m)) => {
                let closed = matches!(shape, Shape::Closed(_));
                for (name, required, _) in fields {
                    if *required && !m.contains_key(name) {
                        let at = if path.is_empty() {
                            String::new()
                        } else {
                            format!("{path}.")
                        };
                        out.push((format!("{at}{name}: Required value"), node.span));
                    }
                }
                for e in m.entries() {
                    match fields.iter().find(|(name, _, _)| *name == e.key) {
                        Some((_, _, child)) => {
                            let len = path.len();
                            push_key(path, &e.key);
                            self.walk(*child, &e.value, path, out);
                            path.truncate(len);
                        }
                        None if closed => {
                            let at = if path.is_empty() { "." } else { path.as_str() };
                            out.push((format!("{at}: unknown field \"{}\"", e.key), e.key_span));
                        }
                        None => {}
                    }
                }
                return;
            }
            (Shape::Map(child), Value::Map(m)) => {
                for e in m.entries() {
                    let len = path.len();
                    push_key(path, &e.key);
                    self.walk(*child, &e.value, path, out);
                    path.truncate(len);
                }
                return;
            }
            (Shape::Array(child), Value::Seq(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.walk(*child, item, path, out);
                    path.truncate(len);
                }
                return;
            }
            (Shape::Any, _)
            | (Shape::Str, Value::Str(_))
            | (Shape::Bool, Value::Bool(_))
            | (Shape::Int, Value::Int(_))
            | (Shape::Num, Value::Int(_) | Value::Float(_))
            | (Shape::IntOrStr, Value::Int(_) | Value::Str(_)) => return,
            (Shape::Closed(_) | Shape::Open(_) | Shape::Map(_), _) => "object",
            (Shape::Array(_), _) => "array",
            (Shape::Str, _) => "string",
            (Shape::Bool, _) => "boolean",
            (Shape::Int, _) => "integer",
            (Shape::Num, _) => "number",
            (Shape::IntOrStr, _) => "integer or string",
        };
        out.push((
            format!(
                "{path}: Invalid value: \"{}\": {path} in body must be of type {want}",
                node.value.type_name()
            ),
            node.span,
        ));
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// The embedded data, parsed once; `None` only if the committed file were malformed (a unit
/// test guards it), in which case nothing is checked.
pub(crate) fn schemas() -> Option<&'static Schemas> {
    static CELL: OnceLock<Option<Schemas>> = OnceLock::new();
    CELL.get_or_init(|| Schemas::parse(DATA).ok()).as_ref()
}

/// Checks one policy document of `apiVersion`/`kind` against its kind's schema. Kinds without
/// one (a Deployment among policies, a kind kpol does not load) are not checked.
pub fn check(source: &SourceFile, node: &Node) -> Vec<Diagnostic> {
    let api_version = node.get("apiVersion").and_then(Node::as_str).unwrap_or("");
    let kind = node.get("kind").and_then(Node::as_str).unwrap_or("");
    let Some(schemas) = schemas() else {
        return Vec::new();
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let Some(root) = schemas.root(group, version, kind) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    schemas.walk(root, node, &mut String::new(), &mut found);
    let name = node
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("");
    found
        .into_iter()
        .map(|(message, span)| {
            Diagnostic::error(
                Code::Schema,
                format!("{kind} {name}: {message}"),
                Some(Location::at(source, span)),
            )
        })
        .collect()
}

/// Whether `kind` exists in a cluster without the user's CRDs: a Kubernetes 1.32 built-in
/// kind, a subresource kind of the Kyverno CLI's discovery data, or one of Kyverno's kinds.
/// `true` when the data is unavailable (nothing is claimed unknown then).
pub fn is_builtin_kind(kind: &str) -> bool {
    schemas().is_none_or(|s| s.builtin.binary_search_by(|k| k.as_str().cmp(kind)).is_ok())
}

/// The built-in kind a misspelt `kind` most likely means: equal ignoring case, one edit away,
/// or two for a name of six letters or more.
pub fn likely_kind(kind: &str) -> Option<&'static str> {
    let s = schemas()?;
    s.builtin
        .iter()
        .find(|k| k.eq_ignore_ascii_case(kind))
        .or_else(|| s.builtin.iter().find(|k| within(k, kind, 1)))
        .or_else(|| {
            // Longer names: two edits (a swapped pair of letters is two).
            (kind.len() >= 6)
                .then(|| s.builtin.iter().find(|k| within(k, kind, 2)))
                .flatten()
        })
        .map(String::as_str)
}

/// Whether `a` and `b` are at most `n` edits apart. perf: names whose lengths differ by more
/// are not compared (the length difference is a lower bound of the distance).
fn within(a: &str, b: &str, n: usize) -> bool {
    a.chars().count().abs_diff(b.chars().count()) <= n && edit_distance(a, b) <= n
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The entries of the `kinds` lists in a ClusterPolicy/Policy's `match`/`exclude` blocks (or
/// a PolicyException's `match`), as (rule name, bare kind, span of the entry). Wildcards are
/// left out.
pub fn kind_entries(raw: &Node) -> Vec<(String, String, Span)> {
    let mut out = Vec::new();
    let mut blocks: Vec<(String, &Node)> = Vec::new();
    if let Some(rules) = raw.get_path(&["spec", "rules"]).and_then(Node::as_seq) {
        for r in rules {
            let name = r
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_owned();
            for key in ["match", "exclude"] {
                if let Some(b) = r.get(key) {
                    blocks.push((name.clone(), b));
                }
            }
        }
    } else if let Some(b) = raw.get_path(&["spec", "match"]) {
        blocks.push((String::new(), b));
    }
    for (rule, block) in blocks {
        let mut filters: Vec<&Node> = vec![block];
        for key in ["any", "all"] {
            filters.extend(block.get(key).and_then(Node::as_seq).unwrap_or(&[]));
        }
        for f in filters {
            let kinds = f.get_path(&["resources", "kinds"]).and_then(Node::as_seq);
            for k in kinds.unwrap_or(&[]) {
                let Some(text) = k.as_str() else { continue };
                let bare = crate::base::gvk::bare_kind(text);
                // The kind part as matching reads it: `*/scale` is any kind's scale
                // subresource (bare_kind, autogen's reading, makes it `scale`).
                let kind_part = crate::base::gvk::parse_kind_selector(text).map(|p| p.2);
                if bare.is_empty()
                    || bare.contains(['*', '?'])
                    || kind_part.is_some_and(|k| k.contains(['*', '?']))
                {
                    continue;
                }
                out.push((rule.clone(), bare, k.span));
            }
        }
    }
    out
}

/// Adds the schema errors of a document to `out`, leaving out those the document's loader
/// (whose diagnostics are `out[since..]`) already reported: at the same place (the ClusterPolicy
/// loader checks many field types itself), or as the same problem inside a larger one (a CEL
/// kind's loader quotes the constraint reader's message for the field, with paths from below
/// `spec`).
pub fn merge(out: &mut Vec<Diagnostic>, since: usize, errors: Vec<Diagnostic>) {
    let loader: Vec<_> = out
        .get(since..)
        .unwrap_or(&[])
        .iter()
        .filter_map(|d| {
            d.location
                .as_ref()
                .map(|l| (l.file.clone(), l.span, &d.message))
        })
        .map(|(f, s, m)| (f, s, m.clone()))
        .collect();
    out.extend(errors.into_iter().filter(|d| {
        let Some(l) = d.location.as_ref() else {
            return true;
        };
        // `<Kind> <name>: spec.a.b: <problem>` → `a.b: <problem>`.
        let problem = d
            .message
            .split_once(": ")
            .map_or(d.message.as_str(), |(_, p)| p);
        let problem = problem.strip_prefix("spec.").unwrap_or(problem);
        let problem = problem.replace(" spec.", " ");
        !loader
            .iter()
            .any(|(f, span, m)| *f == l.file && (*span == l.span || m.contains(&problem)))
    }));
}

#[cfg(test)]
mod tests;

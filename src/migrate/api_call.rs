//! A context `apiCall` entry that reads the Kubernetes API (a `GET` of `urlPath`) as the CEL
//! resource library's `resource.Get`/`resource.List` (the calls a ValidatingPolicy makes;
//! Kyverno 1.19 `pkg/cel/libs/context.go`): the response bound as a variable of its own, the
//! entry's `jmesPath` translated over it.
//!
//! Faithful where both read the same object: a single object (`/…/NAME`) is the same JSON
//! either way. A list differs: the API's typed list JSON carries no `kind`/`apiVersion` in
//! its items, the dynamic client's does, so a list is converted only where the `jmesPath`
//! starts at `items` and names neither field. Refused: other methods, `service`, `data`,
//! `default` (CEL has no fallback on an error), query strings, subresources, a `{{ }}`
//! inside a path segment or in the resource's plural.

use crate::yaml::Node;

use super::Blocked;
use super::cel_text::{has, quote, select};
use super::jmes::Translator;

/// The converted entry: the variables to declare (the response, then the entry's value),
/// and whether the value is always a list.
pub(crate) struct ApiCall {
    pub(crate) variables: Vec<(String, String)>,
    pub(crate) list: bool,
}

pub(crate) fn convert(
    entry: &Node,
    call: &Node,
    name: &str,
    jmes: &Translator,
) -> Result<ApiCall, Blocked> {
    let refuse = |span, why: &str| {
        Err(Blocked::new(
            span,
            format!("the context entry `{name}`: {why}"),
        ))
    };
    for key in ["service", "data", "default"] {
        if let Some(n) = call.get(key).filter(|n| !n.is_null()) {
            return refuse(
                n.span,
                &format!("an `apiCall` with `{key}` is not translated (only a GET of `urlPath`)"),
            );
        }
    }
    if let Some(m) = call.get("method").and_then(Node::as_str)
        && m != "GET"
    {
        return refuse(
            call.span,
            &format!("an `apiCall` with method {m} is not translated"),
        );
    }
    let Some(path_node) = call.get("urlPath") else {
        return refuse(
            call.span,
            "an `apiCall` without `urlPath` is not translated",
        );
    };
    let path = path_node.as_str().unwrap_or_default();
    let span = path_node.span;
    if path.contains('?') {
        return refuse(span, "an `apiCall` path with a query is not translated");
    }
    let segments: Vec<&str> = path.split('/').collect();
    let (api_version, rest) = match segments.as_slice() {
        ["", "api", v, rest @ ..] => ((*v).to_owned(), rest),
        ["", "apis", g, v, rest @ ..] => (format!("{g}/{v}"), rest),
        _ => {
            return refuse(
                span,
                &format!(
                    "the `apiCall` path `{path}` is not an API resource path (`/api/v1/…`, `/apis/GROUP/VERSION/…`)"
                ),
            );
        }
    };
    if api_version.contains("{{") {
        return refuse(
            span,
            "a `{{ }}` in the API group or version is not translated",
        );
    }
    // One segment: a literal, or one `{{ }}` spliced as text (a null one is `null`).
    let segment = |s: &str| -> Result<String, Blocked> {
        let t = s.trim();
        if !s.contains("{{") {
            if s.is_empty() {
                return Err(Blocked::new(
                    span,
                    format!("the context entry `{name}`: an empty segment in `{path}`"),
                ));
            }
            return Ok(quote(s));
        }
        if !(t.starts_with("{{") && t.ends_with("}}") && t.matches("{{").count() == 1 && t == s) {
            return Err(Blocked::new(
                span,
                format!(
                    "the context entry `{name}`: a path segment mixing text and `{{{{ }}}}` is not translated"
                ),
            ));
        }
        jmes.template_text(s, span, true)
    };
    let plural = |s: &str| -> Result<String, Blocked> {
        if s.contains("{{") || s.is_empty() {
            return Err(Blocked::new(
                span,
                format!("the context entry `{name}`: the resource of `{path}` must be written out"),
            ));
        }
        Ok(quote(s))
    };
    let v = quote(&api_version);
    // (namespace, resource, name): a name is a Get, none a List.
    let (ns, res, obj) = match rest {
        [r] => (quote(""), plural(r)?, None),
        [r, n] => (quote(""), plural(r)?, Some(segment(n)?)),
        ["namespaces", ns, r] => (segment(ns)?, plural(r)?, None),
        ["namespaces", ns, r, n] => (segment(ns)?, plural(r)?, Some(segment(n)?)),
        _ => {
            return refuse(
                span,
                &format!(
                    "the `apiCall` path `{path}` (a subresource or a trailing `/`) is not translated"
                ),
            );
        }
    };
    // An empty namespace or name spliced in makes another path (`…/namespaces//…`,
    // `…/pods/`) that the library's call cannot spell: an error, in CEL too.
    let nonempty = |x: &str, what: &str, then: String| {
        if x.starts_with('\'') {
            then
        } else {
            format!(
                "{x} == '' ? dyn({}) : {then}",
                super::cel_text::runtime_error(&format!("the apiCall path has an empty {what}"))
            )
        }
    };
    // The request's own Namespace: the `namespaceObject` Kyverno gives a CEL policy (the
    // same object, read for the request; null only for a cluster-scoped one, whose empty
    // namespace is an error above).
    let own_namespace = api_version == "v1"
        && matches!(rest, ["namespaces", n] if n.trim().strip_prefix("{{").and_then(|t| t.strip_suffix("}}")).is_some_and(|t| t.trim() == "request.namespace"));
    let call_expr = match &obj {
        Some(n) if own_namespace => nonempty(n, "name", "namespaceObject".to_owned()),
        Some(n) => nonempty(
            &ns,
            "namespace",
            nonempty(n, "name", format!("resource.Get({v}, {res}, {ns}, {n})")),
        ),
        None => nonempty(&ns, "namespace", format!("resource.List({v}, {res}, {ns})")),
    };
    let response = format!("{name}Response");
    if jmes.variables.iter().any(|x| x == &response) {
        return refuse(entry.span, &format!("the name `{response}` is taken"));
    }
    let jp = call
        .get("jmesPath")
        .and_then(Node::as_str)
        .filter(|s| !s.trim().is_empty());
    if obj.is_none() {
        let Some(jp) = jp else {
            return refuse(
                call.span,
                "an `apiCall` list without `jmesPath` is not translated (the API's list JSON and the resource library's differ in their items' `kind`/`apiVersion`)",
            );
        };
        let ast = ::jmespath::parse(jp.trim()).map_err(|e| {
            Blocked::new(
                call.span,
                format!("the JMESPath `{jp}` does not parse: {e}"),
            )
        })?;
        let d = format!("{ast:?}");
        if !starts_at_items(&ast) || d.contains("\"kind\"") || d.contains("\"apiVersion\"") {
            return refuse(
                call.span,
                "an `apiCall` list is translated only where its `jmesPath` starts at `items` and reads no `kind`/`apiVersion` (the API's list JSON and the resource library's differ there)",
            );
        }
    }
    let mut scoped = jmes.clone();
    scoped.variables.push(response.clone());
    let root = select("variables", &response);
    let (value, list) = match jp {
        None => (root.clone(), false),
        Some(jp) => {
            let tr = scoped.expr_over(&response, jp, call.span)?;
            // A list's `items` is always there (the dynamic client writes it).
            let always =
                tr.list && obj.is_none() && tr.guards.iter().all(|g| *g == has(&root, "items"));
            (tr.folded(), always)
        }
    };
    Ok(ApiCall {
        variables: vec![(response, call_expr), (name.to_owned(), value)],
        list,
    })
}

/// Whether the expression's leftmost field is `items` (a chain of fields, projections,
/// flattenings from it).
fn starts_at_items(ast: &::jmespath::ast::Ast) -> bool {
    use ::jmespath::ast::Ast;
    match ast {
        Ast::Field { name, .. } => name == "items",
        Ast::Subexpr { lhs, .. } | Ast::Projection { lhs, .. } => starts_at_items(lhs),
        Ast::Flatten { node, .. } => starts_at_items(node),
        _ => false,
    }
}

//! A generate rule with `data` as one GeneratingPolicy `generate` expression:
//! `generator.Apply(NAMESPACE, [OBJECT])`, OBJECT the rule's `data` with `apiVersion`, `kind`
//! and `metadata.name` set as Kyverno sets them on the downstream resource. `{{ }}` values are
//! translated as elsewhere; `synchronize` and `orphanDownstreamOnPolicyDelete` become the
//! policy's `evaluation` settings. `clone`, `cloneList` and generate `foreach` are refused.

use serde_json::{Value as J, json};

use crate::yaml::{Node, Value};

use super::Blocked;
use super::cel_text::quote;
use super::jmes::{Translator, literal};

/// The converted generate rule: its expression and the policy's `evaluation` settings.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Generate {
    pub(crate) expr: String,
    pub(crate) evaluation: J,
}

/// Keys of a `generate` block that the conversion reads.
const KNOWN: [&str; 8] = [
    "generateExisting",
    "apiVersion",
    "kind",
    "name",
    "namespace",
    "data",
    "synchronize",
    "orphanDownstreamOnPolicyDelete",
];

/// `block` (the rule's `generate` block) as a `generator.Apply` expression; `namespaced` for a
/// Policy, whose downstream resources go to its own namespace (the one-argument form);
/// `existing`: the policy's `generateExisting` (the rule's own, when set, wins).
pub(crate) fn generate(
    block: &Node,
    jmes: &Translator,
    namespaced: bool,
    existing: bool,
) -> Result<Generate, Blocked> {
    let Value::Map(m) = &block.value else {
        return Err(Blocked::new(
            block.span,
            "`generate` must be a map".to_owned(),
        ));
    };
    for e in m.entries() {
        if !KNOWN.contains(&e.key.as_str()) {
            let why = match e.key.as_str() {
                "clone" | "cloneList" => format!(
                    "`generate.{}` (copying a resource from the cluster) is not converted yet",
                    e.key
                ),
                "foreach" => "`generate.foreach` is not converted yet".to_owned(),
                other => format!("`generate.{other}` is not converted"),
            };
            return Err(Blocked::new(e.key_span, why));
        }
    }
    let Some(data) = block.get("data") else {
        return Err(Blocked::new(
            block.span,
            "a generate rule without `data` is not converted".to_owned(),
        ));
    };
    let Value::Map(data_map) = &data.value else {
        return Err(Blocked::new(
            data.span,
            "`generate.data` must be a map".to_owned(),
        ));
    };
    let field = |key: &str| -> Result<Option<String>, Blocked> {
        match block.get(key) {
            None => Ok(None),
            Some(n) if n.as_str().is_some() => Ok(Some(text(n, jmes)?)),
            Some(n) => Err(Blocked::new(
                n.span,
                format!("`generate.{key}` must be a string"),
            )),
        }
    };
    let (Some(api_version), Some(kind), Some(name)) =
        (field("apiVersion")?, field("kind")?, field("name")?)
    else {
        return Err(Blocked::new(
            block.span,
            "a generate rule needs `apiVersion`, `kind` and `name`".to_owned(),
        ));
    };
    let namespace = field("namespace")?;
    // The downstream object: the data, with Kyverno's apiVersion, kind and name over it.
    let mut fields = vec![
        format!("'apiVersion': {api_version}"),
        format!("'kind': {kind}"),
    ];
    let mut meta = vec![format!("'name': {name}")];
    for e in data_map.entries() {
        check_key(&e.key, e.key_span)?;
        match e.key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                let Value::Map(md) = &e.value.value else {
                    return Err(Blocked::new(
                        e.value.span,
                        "`data.metadata` must be a map".to_owned(),
                    ));
                };
                for me in md.entries() {
                    check_key(&me.key, me.key_span)?;
                    if me.key != "name" && me.key != "namespace" {
                        meta.push(format!("{}: {}", quote(&me.key), value(&me.value, jmes)?));
                    }
                }
            }
            _ => fields.push(format!("{}: {}", quote(&e.key), value(&e.value, jmes)?)),
        }
    }
    fields.insert(2, format!("'metadata': {{{}}}", meta.join(", ")));
    let object = format!("{{{}}}", fields.join(", "));
    let expr = if namespaced {
        if let Some(n) = block.get("namespace")
            && n.as_str().is_some_and(|s| s.contains("{{"))
        {
            return Err(Blocked::new(
                n.span,
                "a Policy's generate rule with a `namespace` from variables is not converted (a NamespacedGeneratingPolicy generates into its own namespace)".to_owned(),
            ));
        }
        format!("generator.Apply([{object}])")
    } else {
        let ns = namespace.unwrap_or_else(|| "''".to_owned());
        format!("generator.Apply({ns}, [{object}])")
    };
    let flag = |key: &str| -> Result<bool, Blocked> {
        match block.get(key) {
            None => Ok(key == "generateExisting" && existing),
            Some(n) => n
                .as_bool()
                .ok_or_else(|| Blocked::new(n.span, format!("`generate.{key}` must be a boolean"))),
        }
    };
    let evaluation = json!({
        "synchronize": {"enabled": flag("synchronize")?},
        "orphanDownstreamOnPolicyDelete": {"enabled": flag("orphanDownstreamOnPolicyDelete")?},
        "generateExisting": {"enabled": flag("generateExisting")?},
    });
    Ok(Generate { expr, evaluation })
}

fn check_key(key: &str, span: crate::source::Span) -> Result<(), Blocked> {
    if key.contains("{{") || key.contains("$(") {
        return Err(Blocked::new(
            span,
            format!("the key `{key}` holds a variable; keys of generate data are not translated"),
        ));
    }
    Ok(())
}

/// A string of the generate block (`name`, `namespace`, …) as a CEL string expression.
fn text(n: &Node, jmes: &Translator) -> Result<String, Blocked> {
    match n.as_str() {
        Some(s) if s.contains("{{") => template(s, n, jmes),
        Some(s) => Ok(quote(s)),
        None => Ok(literal(&n.to_json())),
    }
}

/// A value of the data: maps and lists as CEL literals, `{{ }}` strings translated.
fn value(n: &Node, jmes: &Translator) -> Result<String, Blocked> {
    match &n.value {
        Value::Map(m) => {
            let mut out = Vec::new();
            for e in m.entries() {
                check_key(&e.key, e.key_span)?;
                out.push(format!("{}: {}", quote(&e.key), value(&e.value, jmes)?));
            }
            Ok(format!("{{{}}}", out.join(", ")))
        }
        Value::Seq(items) => {
            let out: Result<Vec<String>, Blocked> = items.iter().map(|i| value(i, jmes)).collect();
            Ok(format!("[{}]", out?.join(", ")))
        }
        Value::Str(s) if s.contains("{{") => template(s, n, jmes),
        Value::Str(s) if s.contains("$(") => Err(Blocked::new(
            n.span,
            "a `$(...)` reference has no CEL translation here".to_owned(),
        )),
        _ => Ok(literal(&n.to_json())),
    }
}

/// Kyverno's substitution: one `{{ }}` alone is its value (`null` where the path is missing);
/// in text, a null piece is the text `null` ([`Translator::template_kyverno_text`]).
fn template(s: &str, n: &Node, jmes: &Translator) -> Result<String, Blocked> {
    jmes.template_kyverno_text(s, n.span)
}

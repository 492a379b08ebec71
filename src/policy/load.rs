//! Policy documents → [`LoadedPolicies`] (match.md §1): recognising policy kinds, expanding
//! `List`s, applying CRD defaults, running Kyverno's policy validation (§1.4) and autogen (§8).

use std::collections::BTreeMap;

use super::RuleCompiler;
use super::build::{build_rule, read_spec};
use super::model::{Policy, PolicyBody, PolicyKind, Rule, RuleSet};
use super::validate::{self, Invalid};
use crate::diagnostic::{Code, Diagnostic, Location};
use crate::matching::Schema;
use crate::source::Source;
use crate::yaml::fields::{FieldError, as_map, opt_map, opt_seq, opt_str, opt_str_map, or_push};
use crate::yaml::{Document, Node, Value};

/// Everything found in a set of policy documents.
#[derive(Debug, Default)]
pub struct LoadedPolicies {
    /// Valid ClusterPolicy/Policy documents, in document order, autogen rules included.
    pub policies: Vec<Policy>,
    /// Policies that failed Kyverno's policy validation: not evaluated.
    pub invalid: Vec<InvalidPolicy>,
    /// Policy kinds kpol does not evaluate (CEL policy kinds, admission policies, cleanup).
    pub unsupported: Vec<UnsupportedPolicy>,
    /// `PolicyException` documents (used by the exceptions layer).
    pub exceptions: Vec<Node>,
    pub diagnostics: Vec<Diagnostic>,
    /// The documents that are neither policies, bindings nor exceptions (ConfigMaps and other
    /// objects among the policies): `kpol check`'s candidate params of VAP/MAP bindings and
    /// `validate.cel` rules.
    pub others: Vec<Node>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InvalidPolicy {
    pub name: String,
    pub namespace: Option<String>,
    pub kind: String,
    pub reason: String,
    pub location: Option<Location>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnsupportedPolicy {
    pub name: String,
    pub namespace: Option<String>,
    pub kind: String,
    pub api_version: String,
    pub location: Option<Location>,
}

/// Kinds of Kyverno's CEL policies and Kubernetes admission policies that the Kyverno CLI
/// loads from policy files but kpol does not evaluate.
const UNSUPPORTED_KINDS: &[&str] = &[
    "ValidatingPolicy",
    "NamespacedValidatingPolicy",
    "MutatingPolicy",
    "NamespacedMutatingPolicy",
    "ImageValidatingPolicy",
    "NamespacedImageValidatingPolicy",
    "GeneratingPolicy",
    "NamespacedGeneratingPolicy",
    "DeletingPolicy",
    "NamespacedDeletingPolicy",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "CleanupPolicy",
    "ClusterCleanupPolicy",
];

/// What the layer above `policy` hands to the loader (`crate::kinds::KINDS`): the loaders of
/// the kinds whose bodies it owns, and the evaluator side of building ClusterPolicy / Policy
/// rules.
#[derive(Clone, Copy)]
pub struct Kinds {
    pub(crate) loaders: &'static [KindLoader],
    pub rules: RuleCompiler,
}

/// A loader for one policy kind whose body a module above `policy` owns (the table is
/// `crate::kinds::LOADERS`).
pub(crate) struct KindLoader {
    /// The API group (`""` for the core group).
    pub group: &'static str,
    /// The version; `None`: any version of the group.
    pub version: Option<&'static str>,
    pub kind: &'static str,
    /// Document → policy, with its diagnostics; the policy file's VAP bindings are passed
    /// along. A document the loader declines (a mode it does not evaluate) is given back, and
    /// is reported as an unsupported policy when its kind is one.
    pub load: LoadFn,
}

/// A kind's loader: (file, document, the file's VAP bindings, diagnostics) → the policy, or
/// the document given back.
pub(crate) type LoadFn = fn(&Source, Node, &[Node], &mut Vec<Diagnostic>) -> Result<Policy, Node>;

/// Loads the policy documents of one file: ClusterPolicy / Policy (their rules built with
/// `kinds.rules`) and PolicyException here, the kinds of `kinds.loaders` through them.
pub(crate) fn load_policies_with(
    source: &Source,
    docs: Vec<Document>,
    kinds: &Kinds,
) -> LoadedPolicies {
    load_policies_bound(source, docs, kinds, &[])
}

/// [`load_policies_with`], the VAP and MAP bindings of other files (`other_bindings`, from
/// [`admission_bindings`]) attached too, after the file's own.
pub fn load_policies_bound(
    source: &Source,
    docs: Vec<Document>,
    kinds: &Kinds,
    other_bindings: &[Node],
) -> LoadedPolicies {
    let mut out = LoadedPolicies::default();
    let (mut bindings, nodes): (Vec<Node>, Vec<Node>) =
        documents(docs).into_iter().partition(is_binding);
    bindings.extend(other_bindings.iter().cloned());
    for node in nodes {
        load_document(source, node, &bindings, kinds, &mut out);
    }
    out
}

/// The VAP and MAP bindings among `docs`, for the loading of other files (a binding may live
/// apart from its policy). They keep no position: it would point into another file.
pub fn admission_bindings(docs: &[Document]) -> Vec<Node> {
    documents(docs.to_vec())
        .into_iter()
        .filter(is_binding)
        .map(|n| Node::from_json(&n.to_json()))
        .collect()
}

/// The documents of a file, `List`s expanded, integral floats made integers.
fn documents(docs: Vec<Document>) -> Vec<Node> {
    let mut nodes = Vec::new();
    for doc in docs {
        for mut node in expand_lists(doc.root) {
            integral_floats_to_ints(&mut node);
            nodes.push(node);
        }
    }
    nodes
}

/// A VAP or MAP binding, which its policy's loader attaches.
fn is_binding(n: &Node) -> bool {
    let api_version = n.get("apiVersion").and_then(Node::as_str);
    match n.get("kind").and_then(Node::as_str) {
        Some("ValidatingAdmissionPolicyBinding") => {
            api_version == Some("admissionregistration.k8s.io/v1")
        }
        Some("MutatingAdmissionPolicyBinding") => matches!(
            api_version,
            Some("admissionregistration.k8s.io/v1alpha1" | "admissionregistration.k8s.io/v1beta1")
        ),
        _ => false,
    }
}

/// Kyverno reads policies YAML → JSON → Go values, so a literal `8.0` arrives as the JSON
/// number `8` and is decoded as an int64 (validate.md §2.1). Pattern comparisons depend on it.
fn integral_floats_to_ints(node: &mut Node) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if let Value::Float(f) = n.value {
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                n.value = Value::Int(f as i64);
            }
            continue;
        }
        match &mut n.value {
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(m) => stack.extend(m.entries_mut().iter_mut().map(|e| &mut e.value)),
            _ => {}
        }
    }
}

/// `v1/List` documents are replaced by their items (load.go).
fn expand_lists(root: Node) -> Vec<Node> {
    let is_list = root.get("apiVersion").and_then(Node::as_str) == Some("v1")
        && root.get("kind").and_then(Node::as_str) == Some("List");
    if !is_list {
        return vec![root];
    }
    match root.get("items").and_then(Node::as_seq) {
        Some(items) => items.iter().cloned().flat_map(expand_lists).collect(),
        None => Vec::new(),
    }
}

fn load_document(
    source: &Source,
    node: Node,
    bindings: &[Node],
    kinds: &Kinds,
    out: &mut LoadedPolicies,
) {
    let api_version = node.get("apiVersion").and_then(Node::as_str).unwrap_or("");
    let kind = node.get("kind").and_then(Node::as_str).unwrap_or("");
    if api_version.is_empty() || kind.is_empty() {
        out.diagnostics.push(Diagnostic::warning(
            Code::NotAResource,
            "document without apiVersion/kind skipped",
            Some(Location::at(source, node.span)),
        ));
        return;
    }
    let schema_errors = super::schema::check(source, &node);
    let since = out.diagnostics.len();
    load_kind(source, node, bindings, kinds, out);
    super::schema::merge(&mut out.diagnostics, since, schema_errors);
}

/// Loads one document of a known apiVersion/kind.
fn load_kind(
    source: &Source,
    node: Node,
    bindings: &[Node],
    kinds: &Kinds,
    out: &mut LoadedPolicies,
) {
    let api_version = node.get("apiVersion").and_then(Node::as_str).unwrap_or("");
    let kind = node.get("kind").and_then(Node::as_str).unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let loader = kinds
        .loaders
        .iter()
        .find(|l| l.kind == kind && l.group == group && l.version.is_none_or(|v| v == version));
    let node = match loader {
        Some(l) => match (l.load)(source, node, bindings, &mut out.diagnostics) {
            Ok(p) => {
                out.policies.push(p);
                return;
            }
            Err(node) => node,
        },
        None => node,
    };
    let api_version = node.get("apiVersion").and_then(Node::as_str).unwrap_or("");
    let kind = node.get("kind").and_then(Node::as_str).unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kyverno_v1 = matches!(api_version, "kyverno.io/v1" | "kyverno.io/v2beta1");
    match kind {
        "ClusterPolicy" | "Policy" if kyverno_v1 => load_policy(source, node, &kinds.rules, out),
        "PolicyException" if group.ends_with("kyverno.io") => out.exceptions.push(node),
        _ if UNSUPPORTED_KINDS.contains(&kind)
            || (matches!(kind, "ClusterPolicy" | "Policy") && group == "kyverno.io") =>
        {
            let name = meta_str(&node, "name");
            let namespace = node
                .get_path(&["metadata", "namespace"])
                .and_then(Node::as_str)
                .map(str::to_owned);
            let location = Some(Location::at(source, node.span));
            out.diagnostics.push(Diagnostic::warning(
                Code::UnsupportedPolicy,
                format!("{kind} {name} ({api_version}) is not evaluated by kpol"),
                location.clone(),
            ));
            out.unsupported.push(UnsupportedPolicy {
                name,
                namespace,
                kind: kind.to_owned(),
                api_version: api_version.to_owned(),
                location,
            });
        }
        // Other documents (a Deployment among policies...) are ignored. The Kyverno CLI fails
        // the whole load with "policy type not supported" for known built-in kinds; kpol keeps
        // going on purpose so mixed files stay usable (and keeps them as candidate params).
        _ => out.others.push(node),
    }
}

fn meta_str(node: &Node, key: &str) -> String {
    node.get_path(&["metadata", key])
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned()
}

fn load_policy(source: &Source, node: Node, compiler: &RuleCompiler, out: &mut LoadedPolicies) {
    let kind = if node.get("kind").and_then(Node::as_str) == Some("Policy") {
        PolicyKind::Policy
    } else {
        PolicyKind::ClusterPolicy
    };
    let kind_str = match kind {
        PolicyKind::Policy => "Policy",
        _ => "ClusterPolicy",
    };
    let name = meta_str(&node, "name");
    let written_ns = node
        .get_path(&["metadata", "namespace"])
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    // A namespaced Policy without a namespace gets `default` (match.md §1.2).
    let namespace = match kind {
        PolicyKind::Policy => Some(written_ns.clone().unwrap_or_else(|| "default".to_owned())),
        _ => written_ns.clone(),
    };
    match build_policy(source, &node, kind, &name, compiler) {
        Ok(policy) => {
            cel_syntax_diagnostics(source, &policy, out);
            out.diagnostics
                .extend(super::expressions::check(source, &policy));
            out.policies.push(policy);
        }
        Err(errs) => {
            let mut diagnostics = invalid_diagnostics(source, &format!("{kind_str} {name}"), &errs);
            diagnostics.extend(super::expressions::check_raw(
                source,
                &name,
                node.get_path(&["spec", "rules"])
                    .and_then(Node::as_seq)
                    .unwrap_or(&[]),
            ));
            // Sorted by position (stable: at one place, in the order found).
            diagnostics.sort_by_key(|d| d.location.as_ref().map(|l| (l.span.start, l.span.end)));
            out.diagnostics.extend(diagnostics);
            // The policy's reason is its first problem in Kyverno's order.
            let first = errs
                .into_iter()
                .next()
                .unwrap_or_else(|| Invalid::new("invalid policy", node.span));
            out.invalid.push(InvalidPolicy {
                name,
                namespace,
                kind: kind_str.to_owned(),
                reason: first.reason,
                location: Some(Location::at(source, first.span)),
            });
        }
    }
}

/// One diagnostic for each distinct problem.
fn invalid_diagnostics(source: &Source, what: &str, errs: &[Invalid]) -> Vec<Diagnostic> {
    let mut seen: Vec<&Invalid> = Vec::new();
    let mut out = Vec::new();
    for e in errs {
        if seen.contains(&e) {
            continue;
        }
        seen.push(e);
        out.push(Diagnostic::error(
            Code::InvalidPolicy,
            format!("{what}: {}", e.reason),
            Some(Location::at(source, e.span)),
        ));
    }
    out
}

/// Syntax errors in `validate.cel` expressions, at their line:column (rules as written only).
fn cel_syntax_diagnostics(source: &Source, policy: &Policy, out: &mut LoadedPolicies) {
    let Some(set) = policy.rule_set() else {
        return;
    };
    for rule in &set.autogen.spec_rules {
        let super::model::RuleBody::Validate(v) = &rule.body else {
            continue;
        };
        let super::model::ValidateCheck::Cel(cel) = &v.check else {
            continue;
        };
        for (node, e) in &cel.syntax_errors {
            let what = format!("{} rule {}", policy.name, rule.name);
            let text = node.as_str().unwrap_or("");
            out.diagnostics.push(crate::cel::syntax_diagnostic(
                source, node.span, &what, text, e,
            ));
        }
    }
}

fn field(e: FieldError) -> Invalid {
    Invalid {
        reason: e.message,
        span: e.span,
    }
}

/// Builds a policy, or gives every problem found in it (never none), the one Kyverno's first
/// failing check gives first. A problem that leaves nothing to check below it (`spec` not a
/// map) stops there; the others are independent and all reported.
fn build_policy(
    source: &Source,
    node: &Node,
    kind: PolicyKind,
    name: &str,
    compiler: &RuleCompiler,
) -> Result<Policy, Vec<Invalid>> {
    let one = |e| vec![field(e)];
    let root = as_map(node, "").map_err(one)?;
    let api_version = opt_str(root, "apiVersion", "")
        .map_err(one)?
        .unwrap_or("")
        .to_owned();
    let schema = if api_version == "kyverno.io/v2beta1" {
        Schema::V2beta1
    } else {
        Schema::V1
    };
    let mut ferrs = Vec::new();
    let meta = or_push(opt_map(root, "metadata", ""), &mut ferrs, None);
    let written_ns = meta
        .and_then(|m| m.get("namespace"))
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty());
    let annotations: BTreeMap<String, String> = match meta {
        Some(m) => or_push(opt_str_map(m, "annotations", "metadata"), &mut ferrs, None)
            .unwrap_or_default()
            .into_iter()
            .collect(),
        None => BTreeMap::new(),
    };
    let Some(spec_node) = root.get("spec") else {
        ferrs.push(FieldError::new("spec: Required value", node.span));
        return Err(ferrs.into_iter().map(field).collect());
    };
    let spec = match as_map(spec_node, "spec") {
        Ok(s) => s,
        Err(e) => {
            ferrs.push(e);
            return Err(ferrs.into_iter().map(field).collect());
        }
    };
    let fields = read_spec(spec, spec_node, &mut ferrs);
    let rule_nodes = match opt_seq(spec, "rules", "spec") {
        Ok(r) => r.unwrap_or(&[]),
        Err(e) => {
            ferrs.push(e);
            return Err(ferrs.into_iter().map(field).collect());
        }
    };
    let mut errs: Vec<Invalid> = ferrs.into_iter().map(field).collect();

    let ctx = validate::PolicyCtx {
        kind,
        name,
        namespace: written_ns,
        annotations: &annotations,
        node,
        spec,
        rule_nodes,
        background: fields.background,
        admission: fields.admission,
        compiler,
    };
    let bad_types = validate::check_document(&ctx, &mut errs);

    let mut built = Vec::with_capacity(rule_nodes.len());
    let mut all_built = bad_types.is_empty();
    for (i, r) in rule_nodes.iter().enumerate() {
        if bad_types.contains(&i) {
            continue;
        }
        match build_rule(r, &format!("spec.rules[{i}]"), schema, false, compiler) {
            Ok(rule) => built.push((i, rule)),
            Err(es) => {
                all_built = false;
                errs.extend(es.into_iter().map(field));
            }
        }
    }
    if !all_built {
        // The rules that compiled are checked on their own (no autogen: it needs them all).
        let indexed: Vec<validate::Indexed> = built.iter().map(|(i, r)| (*i, r)).collect();
        validate::check_rules(&ctx, &indexed, &indexed, &mut errs);
        return Err(errs);
    }
    let rules: Vec<Rule> = built.into_iter().map(|(_, r)| r).collect();
    let autogen = (compiler.autogen)(&rules, &annotations, schema, compiler);
    let written: Vec<validate::Indexed> = rules.iter().enumerate().collect();
    let computed: Vec<validate::Indexed> = autogen.all.iter().enumerate().collect();
    validate::check_rules(&ctx, &written, &computed, &mut errs);
    if !errs.is_empty() {
        return Err(errs);
    }

    let namespace = match kind {
        PolicyKind::Policy => Some(written_ns.unwrap_or("default").to_owned()),
        _ => None,
    };
    Ok(Policy {
        name: name.to_owned(),
        namespace,
        kind,
        source: source.clone(),
        annotations,
        background: fields.background,
        raw: node.clone(),
        api_version,
        admission: fields.admission,
        match_conditions: fields.match_conditions,
        body: PolicyBody::Rules(RuleSet {
            validation_failure_action: fields.validation_failure_action,
            apply_one: fields.apply_one,
            rules: autogen.all,
            failure_action_overrides: fields.failure_action_overrides,
            autogen: super::model::Autogen {
                spec_rules: rules,
                by_kind: autogen
                    .controllers
                    .into_iter()
                    .map(super::model::KindRules::new)
                    .collect(),
                schema,
                compiler: *compiler,
            },
        }),
    })
}

#[cfg(test)]
pub(crate) mod tests;

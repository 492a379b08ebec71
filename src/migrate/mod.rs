//! `kpol migrate`: a ClusterPolicy or Policy's rules rewritten as the CEL kinds, construct by
//! construct (docs/MIGRATE.md): validate rules as a ValidatingPolicy, mutate rules as a
//! MutatingPolicy, generate rules as a GeneratingPolicy (the Namespaced kinds for a Policy).
//!
//! The conversion works on the policy's YAML tree, so every refusal points at the construct
//! it is about. It never guesses: a rule with a construct that has no faithful CEL spelling
//! is left out with a [`Unconverted`] saying why, and the rest of the policy is converted.

mod api_call;
mod cel_text;
mod conditions;
mod generate;
mod images;
mod jmes;
mod matching;
mod mutate;
mod pattern;

#[cfg(test)]
mod tests;

use serde_json::{Value as J, json};

use crate::policy::{LoadedPolicies, Policy, PolicyKind, Rule};
use crate::source::Span;
use crate::yaml::Node;

use jmes::Translator;
use pattern::{Mode, Patterns};

/// Why a construct was not converted, and where it is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Blocked {
    pub(crate) span: Span,
    pub(crate) reason: String,
}

impl Blocked {
    pub(crate) fn new(span: Span, reason: String) -> Self {
        Blocked { span, reason }
    }
}

/// A rule left unconverted.
#[derive(Clone, Debug, PartialEq)]
pub struct Unconverted {
    pub rule: String,
    pub span: Span,
    pub reason: String,
}

/// The result of converting one policy document.
#[derive(Clone, Debug, Default)]
pub struct Migration {
    /// The source policy's name.
    pub name: String,
    /// The source's kind (ClusterPolicy or Policy).
    pub source_kind: String,
    /// The source document (for a policy Kyverno rejects: where its first problem is).
    pub span: Span,
    /// The converted policies, as JSON values (`apiVersion` … `spec`).
    pub policies: Vec<J>,
    /// Facts the reader must know about the conversion (each becomes a header comment).
    pub notes: Vec<String>,
    pub unconverted: Vec<Unconverted>,
}

const API_VERSION: &str = "policies.kyverno.io/v1";

/// What Kyverno's autogen made of the ClusterPolicy, as the loader computed it.
struct PodAutogen<'a> {
    /// The policy's rules for the whole controller set, autogen rules included.
    rules: &'a [Rule],
    /// The controller kinds autogen writes rules for; empty where it writes none (`CanAutoGen`
    /// false, or the annotation `none`).
    controllers: Vec<String>,
    /// The policy carries the controllers annotation.
    annotated: bool,
}

impl PodAutogen<'_> {
    fn on(&self) -> bool {
        !self.controllers.is_empty()
    }
}

/// The converted form of one rule.
#[derive(Clone, Debug)]
struct RuleCel {
    name: String,
    matching: matching::Matching,
    preconditions: Option<String>,
    variables: Vec<(String, String)>,
    validations: Vec<J>,
    /// MutatingPolicy mutations (a mutate rule).
    mutations: Vec<mutate::Mutation>,
    /// The GeneratingPolicy `generate` entry (a generate rule).
    generate: Option<generate::Generate>,
    actions: Vec<String>,
    /// The policy's own autogen is off: the rule and the pod-controller copies the
    /// ClusterPolicy's autogen made of it are merged ([`controller_copies`]).
    autogen_off: bool,
    /// A mutate rule merged from rules over disjoint kinds ([`merge_kinds`]) whose guards
    /// read variables (which its kind condition leaves out): where some of its rules applies
    /// (the `||` of their whole guards), for a MutatingPolicy match condition, which reads
    /// variables where a ValidatingPolicy's cannot.
    applies: Option<String>,
}

/// Converts every ClusterPolicy/Policy that the loader read, in document order. One that
/// Kyverno's policy validation rejects is a [`Migration`] with nothing converted and the
/// reason (Kyverno would not run it, so there is no behaviour to carry over).
pub fn migrate_loaded(loaded: &LoadedPolicies) -> Vec<Migration> {
    let mut out: Vec<Migration> = loaded.policies.iter().filter_map(migrate_policy).collect();
    for invalid in &loaded.invalid {
        if invalid.kind != "ClusterPolicy" && invalid.kind != "Policy" {
            continue;
        }
        let span = invalid
            .location
            .as_ref()
            .map_or_else(Span::default, |l| l.span);
        out.push(Migration {
            name: invalid.name.clone(),
            source_kind: invalid.kind.clone(),
            span,
            unconverted: vec![Unconverted {
                rule: String::new(),
                span,
                reason: format!(
                    "Kyverno's policy validation rejects the policy ({}), so it has no behaviour to convert",
                    invalid.reason
                ),
            }],
            ..Migration::default()
        });
    }
    out.sort_by_key(|m| m.span.start);
    out
}

/// Converts one ClusterPolicy/Policy as the loader read it; `None` for another kind. Where
/// Kyverno's autogen makes pod-controller rules of it is read from the loaded policy (its
/// rules for the whole controller set and its controllers, `CanAutoGen` applied).
pub fn migrate_policy(policy: &Policy) -> Option<Migration> {
    let root = &policy.raw;
    let namespaced = match policy.kind {
        PolicyKind::ClusterPolicy => false,
        PolicyKind::Policy => true,
        _ => return None,
    };
    let kind = if namespaced {
        "Policy"
    } else {
        "ClusterPolicy"
    };
    let set = policy.rule_set()?;
    let autogen = PodAutogen {
        rules: policy.rules(),
        controllers: set.autogen.by_kind.iter().map(|k| k.kind.clone()).collect(),
        annotated: policy
            .annotations
            .contains_key(crate::autogen::CONTROLLERS_ANNOTATION),
    };
    let name = policy.name.clone();
    let mut out = Migration {
        name: name.clone(),
        source_kind: kind.to_owned(),
        span: root.span,
        ..Migration::default()
    };
    let null = Node::null();
    let spec = root.get("spec").unwrap_or(&null);
    let policy_action = spec
        .get("validationFailureAction")
        .and_then(Node::as_str)
        .unwrap_or("Audit");
    let mut converted = Vec::new();
    for rule in spec.get("rules").and_then(Node::as_seq).unwrap_or(&[]) {
        let rule_name = rule_name(rule);
        let body = ["validate", "mutate", "generate", "verifyImages"]
            .into_iter()
            .find(|k| rule.get(k).is_some());
        let config_map = rule
            .get("context")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .find_map(|e| e.get("configMap"));
        if let (true, Some(cm)) = (namespaced, config_map) {
            out.unconverted.push(Unconverted {
                rule: rule_name,
                span: cm.span,
                reason: "a `configMap` context entry of a namespaced Policy is not converted (Kyverno refuses one in another namespace than the policy's)".to_owned(),
            });
            continue;
        }
        match body {
            Some("validate") => match validate_rule(rule, policy_action, &mut out.notes) {
                Ok(r) => converted.push(r),
                Err(b) => out.unconverted.push(Unconverted {
                    rule: rule_name,
                    span: b.span,
                    reason: b.reason,
                }),
            },
            Some("mutate") => match mutate_with_copies(&autogen, rule, &mut out.notes) {
                Ok(r) => converted.push(r),
                Err(b) => out.unconverted.push(Unconverted {
                    rule: rule_name,
                    span: b.span,
                    reason: b.reason,
                }),
            },
            Some("generate") => match generate_rule(rule, spec, namespaced, &mut out.notes) {
                Ok(r) => converted.push(r),
                Err(b) => out.unconverted.push(Unconverted {
                    rule: rule_name,
                    span: b.span,
                    reason: b.reason,
                }),
            },
            Some(other) => out.unconverted.push(Unconverted {
                rule: rule_name,
                span: rule.get(other).map_or(rule.span, |n| n.span),
                reason: format!(
                    "`{other}` rules are not converted yet (validate, mutate and generate rules are)"
                ),
            }),
            None => out.unconverted.push(Unconverted {
                rule: rule_name,
                span: rule.span,
                reason: "the rule has no validate, mutate, generate or verifyImages body"
                    .to_owned(),
            }),
        }
    }
    if converted.is_empty() {
        return Some(out);
    }
    let (generating, converted): (Vec<RuleCel>, Vec<RuleCel>) =
        converted.into_iter().partition(|r| r.generate.is_some());
    let (mutating, validating): (Vec<RuleCel>, Vec<RuleCel>) =
        converted.into_iter().partition(|r| !r.mutations.is_empty());
    let mut groups = Vec::new();
    if let Some(merged) = merge_validate_kinds(&validating, &autogen, spec, policy_action) {
        out.notes.push(
            "the validate rules match different kinds: one ValidatingPolicy for all of them, each rule's validations guarded by its kinds, conditions and preconditions".to_owned(),
        );
        if merged.autogen_off {
            out.notes.push(
                "the pod-controller copies the ClusterPolicy's autogen makes of its Pod rules are written out (each guarded by its kinds) and the ValidatingPolicy's own autogen is off".to_owned(),
            );
        }
        groups.push(vec![merged]);
    } else if !validating.is_empty() {
        groups.extend(group(validating, &mut out.notes));
    }
    if !mutating.is_empty() {
        groups.extend(group(mutating, &mut out.notes));
    }
    if !generating.is_empty() {
        groups.extend(group(generating, &mut out.notes));
    }
    let single = groups.len() == 1;
    for rules in groups {
        let pname = if single {
            name.clone()
        } else {
            format!("{name}-{}", rules[0].name)
        };
        out.policies
            .push(assemble(root, spec, &autogen, &pname, namespaced, &rules));
    }
    if autogen
        .controllers
        .iter()
        .any(|c| c == "ReplicationController")
    {
        let copies: Vec<J> = out
            .policies
            .iter()
            .filter_map(replication_controllers)
            .collect();
        if !copies.is_empty() {
            out.notes.push(
                "a ValidatingPolicy's autogen has no ReplicationController (Kyverno's ClusterPolicy autogen has): each ValidatingPolicy for Pods got a copy NAME-replicationcontrollers for them, its expressions rewritten to the pod template as autogen rewrites them".to_owned(),
            );
            out.policies.extend(copies);
        }
    }
    Some(out)
}

/// Whether a converted policy's `matchConstraints` are those CEL autogen copies for pod
/// controllers (one resource rule for exactly `""/v1/pods`, no exclusions or object
/// selector, as the conversion writes them).
fn cel_autogen_eligible(c: &J) -> bool {
    let Some([rule]) = c
        .get("resourceRules")
        .and_then(J::as_array)
        .map(Vec::as_slice)
    else {
        return false;
    };
    rule["apiGroups"] == json!([""])
        && rule["apiVersions"] == json!(["v1"])
        && rule["resources"] == json!(["pods"])
        && rule.get("resourceNames").is_none()
        && c.get("excludeResourceRules").is_none()
        && c.get("objectSelector").is_none()
}

/// For a converted ValidatingPolicy that ValidatingPolicy autogen copies for pod controllers
/// (its constraints exactly `""/v1/pods`, autogen not turned off): the same policy for
/// ReplicationControllers, every expression and message rewritten to the pod template as the
/// autogen copies are (`object.spec` → `object.spec.template.spec`, …), its own autogen off.
fn replication_controllers(p: &J) -> Option<J> {
    use crate::vpol::autogen::{Target, rewrite};
    if p["kind"] != "ValidatingPolicy" && p["kind"] != "NamespacedValidatingPolicy" {
        return None;
    }
    let spec = p.get("spec")?;
    if !cel_autogen_eligible(spec.get("matchConstraints")?)
        || spec["autogen"]["podControllers"]["controllers"]
            .as_array()
            .is_some_and(Vec::is_empty)
    {
        return None;
    }
    let mut copy = p.clone();
    let name = format!("{}-replicationcontrollers", p["metadata"]["name"].as_str()?);
    copy["metadata"]["name"] = J::String(name);
    let s = &mut copy["spec"];
    s["matchConstraints"]["resourceRules"][0]["resources"] = json!(["replicationcontrollers"]);
    s["autogen"] = json!({"podControllers": {"controllers": []}});
    let fields: [(&str, &[&str]); 3] = [
        ("matchConditions", &["expression"]),
        ("variables", &["expression"]),
        (
            "validations",
            &["expression", "message", "messageExpression"],
        ),
    ];
    for (list, keys) in fields {
        if let Some(items) = s.get_mut(list).and_then(J::as_array_mut) {
            for item in items {
                for k in keys {
                    if let Some(t) = item.get(*k).and_then(J::as_str) {
                        item[*k] = J::String(rewrite(t, Target::Template));
                    }
                }
            }
        }
    }
    Some(copy)
}

/// Mutate rules that match disjoint kinds (no Pod, so no autogen; no selectors, exclusions
/// or subresources; the same operations; no conflicting variables) as one rule: the
/// resource rules joined, each rule's mutations guarded by `object.kind` (and
/// `object.apiVersion` for `group/version/Kind`), its match conditions and preconditions,
/// and the policy matching where some rule's guard holds. At most one rule applies to a
/// resource, so the verdicts are the ClusterPolicy's: pass where that rule applied, skip
/// where none did.
///
/// With `pod` (a Pod rule and its pod-controller copies, [`controller_copies`]) a `Pod`
/// kind is taken, the constraints besides the resource rules (the namespace selector the
/// copies keep) must be the first rule's, and a variable of a later rule that has another
/// expression under the same name is renamed `NAME_N` in that rule.
///
/// With `validate` the rules are validate rules: each validation becomes `!(guard) || …`
/// (guarded by its kinds, conditions and preconditions), several rules may match the very
/// same kinds (one set of kinds applies to a resource, so the verdict is that of those
/// rules together, as the ClusterPolicy's rules for it), and a variable with another
/// expression is renamed as with `pod`. The policy's match condition leaves out
/// preconditions that read variables (a match condition cannot read them).
fn merge_mutate_kinds(rules: &[RuleCel], pod: bool) -> Option<RuleCel> {
    merge_kinds(rules, pod, false)
}

fn merge_kinds(rules: &[RuleCel], pod: bool, validate: bool) -> Option<RuleCel> {
    let first = rules.first()?;
    let others = |r: &RuleCel| -> Option<serde_json::Map<String, J>> {
        let mut c = r.matching.constraints.as_object()?.clone();
        c.remove("resourceRules");
        Some(c)
    };
    let first_others = others(first)?;
    let mut resource_rules = Vec::new();
    let mut seen_kinds: Vec<String> = Vec::new();
    let mut guards = Vec::new();
    let mut full_guards = Vec::new();
    let mut variables: Vec<(String, String)> = Vec::new();
    let mut mutations = Vec::new();
    let mut validations = Vec::new();
    let mut kinds = Vec::new();
    let ops = |r: &RuleCel| -> Option<Vec<J>> {
        let rr = r.matching.constraints.get("resourceRules")?.as_array()?;
        let mut all = Vec::new();
        for x in rr {
            all.push(x.get("operations")?.clone());
        }
        Some(all)
    };
    let first_ops = ops(first)?;
    for r in rules {
        let right_body = if validate {
            r.mutations.is_empty() && !r.validations.is_empty()
        } else {
            !r.mutations.is_empty() && r.validations.is_empty()
        };
        if !right_body || r.generate.is_some() || r.autogen_off {
            return None;
        }
        let c = r.matching.constraints.as_object()?;
        let extra = others(r)?;
        if (if pod {
            extra != first_others
        } else {
            !extra.is_empty()
        }) || !r.matching.guessed.is_empty()
        {
            return None;
        }
        let o = ops(r)?;
        if o.iter().any(|x| Some(x) != first_ops.first()) || r.actions != first.actions {
            return None;
        }
        let mut kind_tests = Vec::new();
        // A validate rule matching exactly the kinds of an earlier one shares its guard.
        let repeated = validate
            && rules
                .iter()
                .take_while(|o| !std::ptr::eq(*o, r))
                .any(|o| o.matching.kinds == r.matching.kinds);
        for k in &r.matching.kinds {
            let parts: Vec<&str> = k.split('/').collect();
            let (test, bare) = match parts.as_slice() {
                [kind] => (format!("object.kind == {}", cel_text::quote(kind)), *kind),
                [v, kind] => (
                    format!(
                        "object.apiVersion == {} && object.kind == {}",
                        cel_text::quote(v),
                        cel_text::quote(kind)
                    ),
                    *kind,
                ),
                [g, v, kind] => (
                    format!(
                        "object.apiVersion == {} && object.kind == {}",
                        cel_text::quote(&format!("{g}/{v}")),
                        cel_text::quote(kind)
                    ),
                    *kind,
                ),
                _ => return None,
            };
            if (bare == "Pod" && !pod)
                || bare.contains(['*', '?', '.'])
                || (!repeated && seen_kinds.iter().any(|s| s == bare))
            {
                return None;
            }
            kind_tests.push(test);
            if !repeated {
                seen_kinds.push(bare.to_owned());
                kinds.push(k.clone());
            }
        }
        // A variable is renamed where another rule has it with another expression, or where
        // it reads a renamed one; repeated until nothing more is renamed.
        let mut renames: Vec<(String, String)> = Vec::new();
        loop {
            let before = renames.len();
            for (n, e) in &r.variables {
                if renames.iter().any(|(o, _)| o == n) {
                    continue;
                }
                let Some((_, f)) = variables.iter().find(|(m, _)| m == n) else {
                    continue;
                };
                if *f == cel_text::rename_variables(e, &renames) {
                    continue;
                }
                if !pod && !validate {
                    return None;
                }
                let fresh = (1..).map(|i| format!("{n}_{i}")).find(|c| {
                    !variables.iter().any(|(m, _)| m == c)
                        && !r.variables.iter().any(|(m, _)| m == c)
                        && !renames.iter().any(|(_, m)| m == c)
                })?;
                renames.push((n.clone(), fresh));
            }
            if renames.len() == before {
                break;
            }
        }
        let renamed = |e: &str| cel_text::rename_variables(e, &renames);
        for (n, e) in &r.variables {
            let n = renames
                .iter()
                .find(|(o, _)| o == n)
                .map_or(n.clone(), |(_, f)| f.clone());
            if !variables.iter().any(|(m, _)| *m == n) {
                variables.push((n, renamed(e)));
            }
        }
        if !repeated {
            resource_rules.extend(c.get("resourceRules")?.as_array()?.iter().cloned());
        }
        let mut parts = vec![cel_text::or(&kind_tests)];
        parts.extend(r.matching.conditions.iter().map(|e| renamed(e)));
        // What the policy's match condition may hold: no variables.
        let mut matchable = parts.clone();
        for p in r.preconditions.iter().map(|e| renamed(e)) {
            if !p.contains("variables.") {
                matchable.push(p.clone());
            }
            parts.push(p);
        }
        let guard = cel_text::and(&parts);
        for v in &r.validations {
            let mut v = v.clone();
            if let Some(e) = v.get("expression").and_then(J::as_str) {
                let e = cel_text::or(&[cel_text::not(&guard), renamed(e)]);
                v["expression"] = J::String(e);
            }
            if let Some(e) = v.get("messageExpression").and_then(J::as_str) {
                v["messageExpression"] = J::String(renamed(e));
            }
            validations.push(v);
        }
        for m in &r.mutations {
            let m = mutate::Mutation {
                json_patch: m.json_patch,
                expr: renamed(&m.expr),
            };
            let nothing = if m.json_patch { "[]" } else { "Object{}" };
            mutations.push(mutate::Mutation {
                json_patch: m.json_patch,
                expr: format!(
                    "{} ? {} : {nothing}",
                    cel_text::paren(&guard),
                    cel_text::paren(&m.expr)
                ),
            });
        }
        guards.push(cel_text::and(&matchable));
        full_guards.push(guard);
    }
    let mut constraints = first_others;
    constraints.insert("resourceRules".to_owned(), J::Array(resource_rules));
    Some(RuleCel {
        name: first.name.clone(),
        matching: matching::Matching {
            constraints: J::Object(constraints),
            conditions: vec![cel_text::or(&guards)],
            guessed: Vec::new(),
            kinds,
        },
        preconditions: None,
        variables,
        validations,
        mutations,
        generate: None,
        actions: first.actions.clone(),
        autogen_off: pod && seen_kinds.iter().any(|k| k == "Pod"),
        applies: (!validate && full_guards != guards).then(|| cel_text::or(&full_guards)),
    })
}

/// Validate rules that do not all share their matching as one rule over their kinds
/// ([`merge_kinds`]), where the ClusterPolicy's autogen copies a Pod rule for pod
/// controllers with those copies converted beside it (their paths rewritten as Kyverno's
/// autogen rewrites them), so the policy needs no autogen of its own. `None` where the rules
/// share their matching (grouped as usual), where a copy cannot be converted, or where the
/// rules cannot be merged.
fn merge_validate_kinds(
    rules: &[RuleCel],
    autogen: &PodAutogen,
    spec: &Node,
    policy_action: &str,
) -> Option<RuleCel> {
    let first = rules.first()?;
    if rules.len() < 2
        || rules
            .iter()
            .all(|r| r.matching == first.matching && r.actions == first.actions)
    {
        return None;
    }
    let nodes = spec.get("rules").and_then(Node::as_seq).unwrap_or(&[]);
    let mut all = Vec::new();
    for r in rules {
        all.push(r.clone());
        if !autogen.on() {
            continue;
        }
        let node = nodes.iter().find(|n| rule_name(n) == r.name)?;
        let name = rule_name(node);
        for copy in crate::autogen::copies_of(autogen.rules, &name) {
            // The copies' notes repeat the rule's.
            all.push(validate_rule(&copy.raw, policy_action, &mut Vec::new()).ok()?);
        }
    }
    merge_kinds(&all, true, true)
}

/// Rules that share matching and actions go into one policy; where their preconditions
/// differ, each rule's become a guard on its own validations.
fn group(mut rules: Vec<RuleCel>, notes: &mut Vec<String>) -> Vec<Vec<RuleCel>> {
    // Rules that differ only in their match conditions (not generate rules, whose policies
    // hold one rule's evaluation settings): the conditions join each rule's preconditions,
    // which then differ (handled below as such).
    let first = &rules[0];
    let conditions_only = rules.len() > 1
        && first.generate.is_none()
        && rules.iter().all(|r| {
            r.matching.constraints == first.matching.constraints
                && r.matching.guessed == first.matching.guessed
                && r.actions == first.actions
                && r.autogen_off == first.autogen_off
                && r.generate.is_none()
        })
        && rules
            .iter()
            .any(|r| r.matching.conditions != first.matching.conditions);
    if conditions_only {
        for r in &mut rules {
            let mut all = std::mem::take(&mut r.matching.conditions);
            all.extend(r.preconditions.take());
            r.preconditions = (!all.is_empty()).then(|| cel_text::and(&all));
        }
    }
    let first = &rules[0];
    let same = rules.iter().all(|r| {
        r.matching == first.matching
            && r.actions == first.actions
            && r.generate.as_ref().map(|g| &g.evaluation)
                == first.generate.as_ref().map(|g| &g.evaluation)
    });
    if !same && let Some(merged) = merge_mutate_kinds(&rules, false) {
        notes.push(
            "the mutate rules match different kinds: one MutatingPolicy for all of them, each rule's mutations guarded by its kind, conditions and preconditions".to_owned(),
        );
        return vec![vec![merged]];
    }
    if !same {
        notes.push(
            "the rules match different resources or have different failure actions: one policy per rule, named POLICY-RULE".to_owned(),
        );
        return rules.into_iter().map(|r| vec![r]).collect();
    }
    let same_pre = rules.iter().all(|r| r.preconditions == first.preconditions);
    if same_pre {
        return vec![rules];
    }
    if first.generate.is_some() {
        notes.push(
            "the generate rules' preconditions differ: one policy per rule, named POLICY-RULE"
                .to_owned(),
        );
        return rules.into_iter().map(|r| vec![r]).collect();
    }
    notes.push(
        "the rules' preconditions differ: each became a guard on its rule's validations or mutations, so where a rule's preconditions do not hold the policy passes (or patches nothing) where Kyverno skipped the rule".to_owned(),
    );
    // Where every rule has preconditions, the policy matches where some rule's hold: where
    // none does, Kyverno skips every rule and the policy is skipped too. (A match condition
    // cannot read the policy's variables.)
    let any_pre = rules
        .iter()
        .map(|r| r.preconditions.clone())
        .collect::<Option<Vec<String>>>()
        .filter(|pres| !pres.iter().any(|p| p.contains("variables.")))
        .map(|pres| cel_text::or(&pres));
    let mut guarded: Vec<RuleCel> = rules
        .into_iter()
        .map(|mut r| {
            if let Some(pre) = r.preconditions.take() {
                for m in &mut r.mutations {
                    let nothing = if m.json_patch { "[]" } else { "Object{}" };
                    m.expr = format!(
                        "{} ? {} : {nothing}",
                        cel_text::paren(&pre),
                        cel_text::paren(&m.expr)
                    );
                }
                for v in &mut r.validations {
                    if let Some(e) = v.get("expression").and_then(J::as_str) {
                        let e = cel_text::or(&[cel_text::not(&pre), e.to_owned()]);
                        v["expression"] = J::String(e);
                    }
                }
            }
            r
        })
        .collect();
    guarded[0].preconditions = any_pre;
    vec![guarded]
}

fn assemble(
    root: &Node,
    spec: &Node,
    autogen: &PodAutogen,
    name: &str,
    namespaced: bool,
    rules: &[RuleCel],
) -> J {
    let first = &rules[0];
    let mut metadata = serde_json::Map::new();
    metadata.insert("name".to_owned(), J::String(name.to_owned()));
    if namespaced
        && let Some(ns) = root
            .get_path(&["metadata", "namespace"])
            .and_then(Node::as_str)
    {
        metadata.insert("namespace".to_owned(), J::String(ns.to_owned()));
    }
    for key in ["labels", "annotations"] {
        if let Some(n) = root.get_path(&["metadata", key])
            && !n.is_null()
        {
            metadata.insert(key.to_owned(), n.to_json());
        }
    }
    let mutating = !first.mutations.is_empty();
    let generating = first.generate.is_some();
    let mut s = serde_json::Map::new();
    if !mutating && !generating {
        s.insert("validationActions".to_owned(), json!(first.actions));
    }
    if let Some(g) = &first.generate {
        s.insert("evaluation".to_owned(), g.evaluation.clone());
    } else if let Some(b) = spec.get("background").and_then(Node::as_bool) {
        s.insert(
            "evaluation".to_owned(),
            json!({"background": {"enabled": b}}),
        );
    }
    s.insert(
        "matchConstraints".to_owned(),
        first.matching.constraints.clone(),
    );
    // A match condition cannot read the policy's variables: their expressions are spelled
    // out there.
    let all_vars: Vec<(String, String)> = rules
        .iter()
        .flat_map(|r| r.variables.iter().cloned())
        .collect();
    let mut conds: Vec<J> = Vec::new();
    for (i, c) in first.matching.conditions.iter().enumerate() {
        let c = cel_text::inline_variables(c, &all_vars);
        conds.push(json!({"name": format!("match-{}", i + 1), "expression": c}));
    }
    if let Some(p) = &first.preconditions {
        let p = cel_text::inline_variables(p, &all_vars);
        conds.push(json!({"name": "preconditions", "expression": p}));
    }
    // A policy of one merged mutate rule whose guards read variables: it applies where some
    // of its rules does (the kind condition above leaves their variables out). A
    // MutatingPolicy's match condition reads the variables (Kyverno binds them lazily before
    // the match conditions), there on the object as it came, as the rule's context was.
    if mutating
        && let [only] = rules
        && let Some(a) = &only.applies
    {
        conds.push(json!({"name": "applies", "expression": a}));
    }
    // Kyverno evaluates a MutatingPolicy's variables when first read, with the object as the
    // mutations before left it, where Kyverno's `images` is the resource's as it came: a match
    // condition reads the `images` maps the mutations read, before any mutation.
    if mutating {
        let mut read: Vec<&String> = rules
            .iter()
            .flat_map(|r| r.variables.iter())
            .filter(|(n, e)| {
                images::is_map(e)
                    && rules.iter().flat_map(|r| r.mutations.iter()).any(|m| {
                        cel_text::rename_variables(&m.expr, &[(n.clone(), "#".to_owned())])
                            .contains("variables.#")
                    })
            })
            .map(|(n, _)| n)
            .collect();
        read.dedup();
        read.sort();
        read.dedup();
        if !read.is_empty() {
            let each: Vec<String> = read
                .iter()
                .map(|n| format!("size(variables.{n}) >= 0"))
                .collect();
            conds.push(json!({"name": "images", "expression": each.join(" && ")}));
        }
    }
    if !conds.is_empty() {
        s.insert("matchConditions".to_owned(), J::Array(conds));
    }
    let mut vars: Vec<J> = Vec::new();
    let mut seen = Vec::new();
    for r in rules {
        for (n, e) in &r.variables {
            if !seen.contains(n) {
                seen.push(n.clone());
                vars.push(json!({"name": n, "expression": e}));
            }
        }
    }
    if !vars.is_empty() {
        s.insert("variables".to_owned(), J::Array(vars));
    }
    if generating {
        // GeneratingPolicies have no autogen.
    } else if first.autogen_off
        || (!autogen.on() && cel_autogen_eligible(&first.matching.constraints))
    {
        // Kyverno's autogen makes no pod-controller rules of the ClusterPolicy (or they are
        // written out): the CEL policy's own autogen must not make them either.
        s.insert(
            "autogen".to_owned(),
            json!({"podControllers": {"controllers": []}}),
        );
    } else if autogen.annotated && autogen.on() {
        let list: Vec<String> = autogen
            .controllers
            .iter()
            .map(|c| c.trim().to_ascii_lowercase() + "s")
            .collect();
        s.insert(
            "autogen".to_owned(),
            json!({"podControllers": {"controllers": list}}),
        );
    }
    let kind = if generating {
        let entries: Vec<J> = rules
            .iter()
            .filter_map(|r| r.generate.as_ref())
            .map(|g| json!({"expression": g.expr}))
            .collect();
        s.insert("generate".to_owned(), J::Array(entries));
        if namespaced {
            "NamespacedGeneratingPolicy"
        } else {
            "GeneratingPolicy"
        }
    } else if mutating {
        let mutations: Vec<J> = rules
            .iter()
            .flat_map(|r| r.mutations.iter())
            .map(|m| {
                if m.json_patch {
                    json!({"patchType": "JSONPatch", "jsonPatch": {"expression": m.expr}})
                } else {
                    json!({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": m.expr}})
                }
            })
            .collect();
        s.insert("mutations".to_owned(), J::Array(mutations));
        if namespaced {
            "NamespacedMutatingPolicy"
        } else {
            "MutatingPolicy"
        }
    } else {
        let validations: Vec<J> = rules.iter().flat_map(|r| r.validations.clone()).collect();
        s.insert("validations".to_owned(), J::Array(validations));
        if namespaced {
            "NamespacedValidatingPolicy"
        } else {
            "ValidatingPolicy"
        }
    };
    json!({
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": metadata,
        "spec": s,
    })
}

/// The rule's `name` (empty when it has none).
fn rule_name(rule: &Node) -> String {
    rule.get("name")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn validate_rule(
    rule: &Node,
    policy_action: &str,
    notes: &mut Vec<String>,
) -> Result<RuleCel, Blocked> {
    let name = rule_name(rule);
    let null = Node::null();
    let validate = rule.get("validate").unwrap_or(&null);
    let action = validate
        .get("failureAction")
        .and_then(Node::as_str)
        .unwrap_or(policy_action);
    let actions = match action.to_ascii_lowercase().as_str() {
        "enforce" => vec!["Deny".to_owned()],
        _ => vec!["Audit".to_owned()],
    };
    for key in ["failureActionOverrides", "validationFailureActionOverrides"] {
        if let Some(n) = validate.get(key) {
            return Err(Blocked::new(
                n.span,
                format!("`{key}` (per-namespace actions) has no ValidatingPolicy equivalent"),
            ));
        }
    }
    let (matching, jmes, mut variables, mut preconditions) = common(rule, &name, notes)?;
    let message = validate.get("message");
    let mut some = None;
    let validations = validations(
        validate,
        message,
        &jmes,
        notes,
        &name,
        &mut variables,
        &mut some,
    )?;
    if let Some(s) = some {
        preconditions = Some(match preconditions {
            Some(p) => cel_text::and(&[p, s]),
            None => s,
        });
    }
    let r = RuleCel {
        name,
        matching,
        preconditions,
        variables,
        validations,
        mutations: Vec::new(),
        generate: None,
        actions,
        autogen_off: false,
        applies: None,
    };
    with_images(r, &jmes, rule.span)
}

/// A mutate rule, and where the ClusterPolicy's autogen copies it for pod controllers in a
/// way a MutatingPolicy's autogen does not (it rewrites match conditions and
/// `ApplyConfiguration` expressions only: not variables, not JSON patches), the rule and its
/// copies as one rule ([`controller_copies`]).
fn mutate_with_copies(
    autogen: &PodAutogen,
    rule: &Node,
    notes: &mut Vec<String>,
) -> Result<RuleCel, Blocked> {
    let mut own_notes = Vec::new();
    let first = mutate_rule(rule, autogen.on(), &mut own_notes);
    let pod = |r: &RuleCel| {
        r.matching
            .kinds
            .iter()
            .any(|k| k.rsplit('/').next() == Some("Pod"))
    };
    // A MutatingPolicy's autogen moves only an expression that starts with `Object{` under
    // the pod template, and leaves a nested `Object.metadata{…}` typed literal with a type
    // name Kubernetes rejects there (docs/MIGRATE.md): such mutations need the copies too.
    let unsafe_for_autogen = |r: &RuleCel| {
        r.mutations.iter().any(|m| {
            m.json_patch
                || !m.expr.trim_start().starts_with("Object{")
                || m.expr.contains("Object.metadata{")
        }) || r
            .variables
            .iter()
            .any(|(_, e)| e.contains("object.spec") || e.contains("object.metadata"))
    };
    let needs_copies = match &first {
        Ok(r) => autogen.on() && pod(r) && unsafe_for_autogen(r),
        Err(_) => autogen.on(),
    };
    if needs_copies {
        match controller_copies(autogen, rule) {
            Some(Ok((r, copy_notes))) => {
                for n in copy_notes {
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
                return Ok(r);
            }
            Some(Err(b)) if first.is_ok() => return Err(b),
            _ if first.is_ok() => {
                return Err(Blocked::new(
                    rule.span,
                    "the ClusterPolicy's autogen copies the rule for pod controllers, and a MutatingPolicy's autogen would not rewrite its JSON patches or variables; the copies could not be written as one MutatingPolicy".to_owned(),
                ));
            }
            _ => {}
        }
    }
    notes.extend(own_notes);
    first
}

/// The rule converted as it is (for Pods) and each `autogen-` / `autogen-cronjob-` rule the
/// ClusterPolicy's autogen made of it (for the controllers, its paths rewritten: the loaded
/// policy's rules), merged into one rule whose mutations are guarded by the kind
/// ([`merge_mutate_kinds`]); the policy it goes into gets its own autogen off. `None` where
/// autogen made no copy (then nothing needs writing) or a copy cannot be merged.
fn controller_copies(
    autogen: &PodAutogen,
    rule: &Node,
) -> Option<Result<(RuleCel, Vec<String>), Blocked>> {
    let name = rule_name(rule);
    let copies = crate::autogen::copies_of(autogen.rules, &name);
    if copies.is_empty() {
        return None;
    }
    let mut notes = Vec::new();
    let mut all = Vec::new();
    let mut copy_notes = Vec::new();
    for (i, r) in std::iter::once(rule)
        .chain(copies.iter().map(|c| &c.raw))
        .enumerate()
    {
        // The copies' notes repeat the rule's.
        let n = if i == 0 { &mut notes } else { &mut copy_notes };
        match mutate_rule(r, false, n) {
            Ok(c) => all.push(c),
            Err(b) => return Some(Err(b)),
        }
    }
    let merged = merge_mutate_kinds(&all, true)?;
    notes.push(format!(
        "rule {name}: the pod-controller copies the ClusterPolicy's autogen makes of it are written out (each guarded by its kinds) and the MutatingPolicy's own autogen is off, as that autogen rewrites neither JSON patches nor variables"
    ));
    Some(Ok((merged, notes)))
}

/// `pod_autogen`: the ClusterPolicy's autogen copies this rule for pod controllers.
fn mutate_rule(
    rule: &Node,
    pod_autogen: bool,
    notes: &mut Vec<String>,
) -> Result<RuleCel, Blocked> {
    let name = rule_name(rule);
    let null = Node::null();
    let mutate = rule.get("mutate").unwrap_or(&null);
    for key in ["targets", "mutateExistingOnPolicyUpdate"] {
        if let Some(n) = mutate.get(key) {
            return Err(Blocked::new(
                n.span,
                format!("`mutate.{key}` is not converted yet"),
            ));
        }
    }
    let (matching, jmes, variables, preconditions) = common(rule, &name, notes)?;
    let pod_autogen = pod_autogen
        && matching
            .kinds
            .iter()
            .any(|k| k.rsplit('/').next() == Some("Pod"));
    let mut changes = None;
    let mut anchor_conditions = Vec::new();
    let mutations = match (
        mutate.get("patchStrategicMerge"),
        mutate.get("patchesJson6902"),
    ) {
        _ if mutate.get("foreach").is_some() => {
            if let Some(p) = mutate
                .get("patchStrategicMerge")
                .or_else(|| mutate.get("patchesJson6902"))
            {
                return Err(Blocked::new(
                    p.span,
                    "a mutate rule with both `foreach` and a patch is not converted".to_owned(),
                ));
            }
            let (m, c) =
                mutate::foreach(mutate.get("foreach").unwrap_or(&null), &jmes, pod_autogen)?;
            changes = c;
            m
        }
        (Some(patch), None) => {
            let merge = mutate::strategic_merge(patch, &jmes, &matching.kinds)?;
            changes = merge.changes;
            anchor_conditions = merge.conditions;
            merge.mutations
        }
        (None, Some(patch)) => mutate::json6902(patch)?,
        (Some(_), Some(p)) => {
            return Err(Blocked::new(
                p.span,
                "a rule with both `patchStrategicMerge` and `patchesJson6902` is not converted"
                    .to_owned(),
            ));
        }
        (None, None) => {
            return Err(Blocked::new(
                mutate.span,
                "a mutate rule without `patchStrategicMerge` or `patchesJson6902` is not converted"
                    .to_owned(),
            ));
        }
    };
    if mutations.is_empty() {
        return Err(Blocked::new(mutate.span, "the overlay is empty".to_owned()));
    }
    // Kyverno skips a mutate rule whose patch changes nothing; a MutatingPolicy that
    // matched passes. Where the change is known as a condition it joins the preconditions.
    let preconditions = if anchor_conditions.is_empty() {
        preconditions
    } else {
        let mut all: Vec<String> = preconditions.into_iter().collect();
        all.extend(anchor_conditions);
        Some(cel_text::and(&all))
    };
    let preconditions = match (changes, preconditions) {
        (Some(c), Some(p)) => Some(cel_text::and(&[p, c])),
        (Some(c), None) => Some(c),
        (None, p) => {
            notes.push(format!(
                "rule {name}: where its patch changes nothing Kyverno skips the rule (\"no patches applied\") and the MutatingPolicy passes"
            ));
            p
        }
    };
    let r = RuleCel {
        name,
        matching,
        preconditions,
        variables,
        validations: Vec::new(),
        mutations,
        generate: None,
        actions: Vec::new(),
        autogen_off: false,
        applies: None,
    };
    with_images(r, &jmes, rule.span)
}

fn generate_rule(
    rule: &Node,
    spec: &Node,
    namespaced: bool,
    notes: &mut Vec<String>,
) -> Result<RuleCel, Blocked> {
    let name = rule_name(rule);
    let null = Node::null();
    let block = rule.get("generate").unwrap_or(&null);
    let (matching, jmes, variables, preconditions) = common(rule, &name, notes)?;
    let existing = ["generateExisting", "generateExistingOnPolicyUpdate"]
        .iter()
        .any(|k| spec.get(k).and_then(Node::as_bool) == Some(true));
    let g = generate::generate(block, &jmes, namespaced, existing)?;
    let r = RuleCel {
        name,
        matching,
        preconditions,
        variables,
        validations: Vec::new(),
        mutations: Vec::new(),
        generate: Some(g),
        actions: Vec::new(),
        autogen_off: false,
        applies: None,
    };
    with_images(r, &jmes, rule.span)
}

/// The rule with Kyverno's `images` as its first variable where its conversion reads it
/// (`images` on the translator: no context entry shadows it).
fn with_images(mut r: RuleCel, jmes: &Translator, span: Span) -> Result<RuleCel, Blocked> {
    if !jmes.images {
        return Ok(r);
    }
    let text = format!(
        "{:?}",
        (
            &r.preconditions,
            &r.validations,
            &r.mutations,
            &r.generate,
            &r.variables,
            &r.matching.conditions
        )
    );
    if images::reads(&text) {
        if r.mutations.is_empty()
            && (r.preconditions.iter().chain(&r.matching.conditions)).any(|c| images::reads(c))
        {
            // A ValidatingPolicy's match condition cannot read variables, and the variable
            // spelled out there would nest deeper than CEL allows.
            return Err(Blocked::new(
                span,
                "`images` read in the preconditions of a validate or generate rule is not translated"
                    .to_owned(),
            ));
        }
        for (i, v) in images::variables(&r.matching.kinds, span)?
            .into_iter()
            .enumerate()
        {
            if r.variables.iter().any(|(n, _)| *n == v.0) {
                return Err(Blocked::new(
                    span,
                    format!(
                        "a context entry `{}` beside Kyverno's `images` is not translated",
                        v.0
                    ),
                ));
            }
            r.variables.insert(i, v);
        }
    }
    Ok(r)
}

type Common = (
    matching::Matching,
    Translator,
    Vec<(String, String)>,
    Option<String>,
);

/// A context `configMap` entry: the ConfigMap read with the CEL resource library's
/// `resource.Get` (bound as `NAMEResponse`), and the variable as Kyverno's loader writes it:
/// only `data` (null where the ConfigMap has none) and `metadata`. The name and namespace are
/// substituted as Kyverno substitutes them: a lone `{{ }}` must be a string, text around one
/// is spliced; an empty one (a path Kyverno cannot get) is an error.
fn config_map(cm: &Node, vname: &str, jmes: &Translator) -> Result<Vec<(String, String)>, Blocked> {
    let part = |key: &str| -> Result<String, Blocked> {
        let Some(n) = cm.get(key) else {
            return Err(Blocked::new(
                cm.span,
                format!("the context entry `{vname}`: a `configMap` needs `{key}`"),
            ));
        };
        let Some(s) = n.as_str() else {
            return Err(Blocked::new(
                n.span,
                format!("the context entry `{vname}`: `configMap.{key}` must be a string"),
            ));
        };
        let t = s.trim();
        let value = if !s.contains("{{") {
            return if s.is_empty() {
                Err(Blocked::new(
                    n.span,
                    format!("the context entry `{vname}`: `configMap.{key}` is empty"),
                ))
            } else {
                Ok(cel_text::quote(s))
            };
        } else if t == s && t.starts_with("{{") && t.ends_with("}}") && t.matches("{{").count() == 1
        {
            let e = jmes.template(s, n.span)?;
            format!(
                "cel.bind(v, {e}, type(v) == string ? v : dyn({}))",
                cel_text::runtime_error(&format!(
                    "failed to substitute variables in context {vname} configMap.{key}: expected string"
                ))
            )
        } else {
            jmes.template_text(s, n.span, true)?
        };
        Ok(format!(
            "cel.bind(v, {value}, v == '' ? dyn({}) : v)",
            cel_text::runtime_error(&format!(
                "the context entry {vname}: an empty configMap.{key}"
            ))
        ))
    };
    let (name, namespace) = (part("name")?, part("namespace")?);
    let response = format!("{vname}Response");
    if jmes.variables.iter().any(|x| x == &response || x == vname) {
        return Err(Blocked::new(
            cm.span,
            format!("the context entry `{vname}`: the name `{response}` is taken"),
        ));
    }
    let r = cel_text::select("variables", &response);
    Ok(vec![
        (
            response.clone(),
            format!("resource.Get('v1', 'configmaps', {namespace}, {name})"),
        ),
        (
            vname.to_owned(),
            format!(
                "{{'data': dyn('data' in {r} ? {r}.data : null), 'metadata': dyn({r}.metadata)}}"
            ),
        ),
    ])
}

/// What every rule kind shares: matching, context variables, preconditions.
fn common(rule: &Node, name: &str, notes: &mut Vec<String>) -> Result<Common, Blocked> {
    let matching = matching::convert(rule)?;
    if !matching.guessed.is_empty() {
        notes.push(format!(
            "rule {name}: {} no built-in kind; its resource name is the English plural, any group and version",
            matching.guessed.join(", ")
        ));
    }
    let mut jmes = Translator::default();
    let mut variables = Vec::new();
    for entry in rule.get("context").and_then(Node::as_seq).unwrap_or(&[]) {
        let vname = entry.get("name").and_then(Node::as_str).unwrap_or_default();
        if let Some(call) = entry.get("apiCall") {
            let c = api_call::convert(entry, call, vname, &jmes)?;
            for (n, e) in c.variables {
                jmes.variables.push(n.clone());
                variables.push((n, e));
            }
            if c.list {
                jmes.list_variables.push(vname.to_owned());
            }
            continue;
        }
        if let Some(cm) = entry.get("configMap") {
            for (n, e) in config_map(cm, vname, &jmes)? {
                jmes.variables.push(n.clone());
                variables.push((n, e));
            }
            continue;
        }
        let Some(var) = entry.get("variable") else {
            return Err(Blocked::new(
                entry.span,
                format!(
                    "the context entry `{vname}` (an image registry or global context) needs a cluster or a mock; only `variable`, `configMap` and API-call (GET) entries are converted"
                ),
            ));
        };
        let expr = if let Some(v) = var.get("value") {
            if var.get("jmesPath").is_some() {
                return Err(Blocked::new(
                    var.span,
                    "a `variable` with both `value` and `jmesPath` is not translated".to_owned(),
                ));
            }
            jmes.operand(v)?.folded()
        } else if let Some(p) = var.get("jmesPath").and_then(Node::as_str) {
            let tr = jmes.expr(p, var.span)?;
            let default = var.get("default").filter(|d| !d.is_null());
            // A list where present is a list wherever the variable can be read.
            if tr.list && tr.nest.is_none() && default.is_none_or(|d| d.to_json().is_array()) {
                jmes.list_variables.push(vname.to_owned());
            }
            match default {
                Some(d) => tr.folded_or(&jmes::literal(&d.to_json())),
                // Kyverno: a variable that evaluates to null without a default is an error
                // where it is read (context entries load when first used, as CEL variables
                // evaluate).
                None if tr.guards.is_empty() && !tr.list && !tr.boolean => format!(
                    "{e} != null ? {e} : {}",
                    cel_text::runtime_error(&format!(
                        "failed to add context entry for variable {vname} since it evaluated to nil"
                    )),
                    e = cel_text::nullable(&tr.expr)
                ),
                None if tr.guards.is_empty() => tr.expr,
                None => {
                    let mut g = tr.guards.clone();
                    let e = cel_text::nullable(&tr.expr);
                    g.push(format!("{e} != null"));
                    format!(
                        "{} ? {e} : {}",
                        cel_text::and(&g),
                        cel_text::runtime_error(&format!(
                            "failed to add context entry for variable {vname} since it evaluated to nil"
                        ))
                    )
                }
            }
        } else {
            return Err(Blocked::new(var.span, "an empty `variable`".to_owned()));
        };
        variables.push((vname.to_owned(), expr));
        jmes.variables.push(vname.to_owned());
    }
    // Kyverno's `images`, unless a context entry of that name shadows it.
    jmes.images = !variables.iter().any(|(n, _)| n == images::NAME);
    let preconditions = match rule.get("preconditions") {
        Some(p) => Some(conditions::block(p, &jmes)?),
        None => None,
    };
    Ok((matching, jmes, variables, preconditions))
}

/// The rule's message as `message`, or `messageExpression` when it uses variables.
fn message_fields(
    message: Option<&Node>,
    jmes: &Translator,
) -> Result<serde_json::Map<String, J>, Blocked> {
    let mut m = serde_json::Map::new();
    if let Some(n) = message
        && let Some(s) = n.as_str()
    {
        if s.contains("{{") {
            m.insert(
                "messageExpression".to_owned(),
                J::String(jmes.template(s, n.span)?),
            );
        } else {
            m.insert("message".to_owned(), J::String(s.to_owned()));
        }
    }
    Ok(m)
}

fn validations(
    validate: &Node,
    message: Option<&Node>,
    jmes: &Translator,
    notes: &mut Vec<String>,
    rule: &str,
    variables: &mut Vec<(String, String)>,
    foreach_some: &mut Option<String>,
) -> Result<Vec<J>, Blocked> {
    let one = |expr: String, msg: &serde_json::Map<String, J>| {
        let mut v = serde_json::Map::new();
        v.insert("expression".to_owned(), J::String(expr));
        v.extend(msg.clone());
        J::Object(v)
    };
    let msg = message_fields(message, jmes)?;
    if let Some(p) = validate.get("pattern") {
        let mut pats = Patterns::new(jmes);
        let lenient = pats.translate(p, "object", Mode::Lenient)?;
        let lenient = jmes.after_substitutions(lenient);
        if pattern::has_skips(p) {
            // Kyverno skips where the pattern neither passes nor fails: that is a match
            // condition, and the validation is the strict form.
            let strict = pats.translate(p, "object", Mode::Strict)?;
            let strict = jmes.after_substitutions(strict);
            *foreach_some = Some(cel_text::or(&[strict.clone(), cel_text::not(&lenient)]));
            return Ok(vec![one(strict, &msg)]);
        }
        return Ok(vec![one(lenient, &msg)]);
    }
    if let Some(list) = validate.get("anyPattern") {
        let items = list.as_seq().unwrap_or(&[]);
        if items.iter().any(pattern::has_skips) {
            // Kyverno skips when every pattern skips.
            let mut pats = Patterns::new(jmes);
            let mut strict = Vec::new();
            let mut skipped = Vec::new();
            for p in items {
                let s = pats.translate(p, "object", Mode::Strict)?;
                let l = pats.translate(p, "object", Mode::Lenient)?;
                skipped.push(cel_text::and(&[l, cel_text::not(&s)]));
                strict.push(s);
            }
            *foreach_some = Some(cel_text::not(&cel_text::and(&skipped)));
            return Ok(vec![one(cel_text::or(&strict), &msg)]);
        }
        return Ok(vec![one(
            any_pattern(list, "object", jmes, notes, rule)?,
            &msg,
        )]);
    }
    if let Some(deny) = validate.get("deny") {
        let null = Node::null();
        let conds = deny.get("conditions").unwrap_or(&null);
        jmes.missing_keys_fail.set(true);
        let block = conditions::block(conds, jmes);
        jmes.missing_keys_fail.set(false);
        let body = jmes.after_substitutions(cel_text::not(&block?));
        return Ok(vec![one(body, &msg)]);
    }
    if let Some(fe) = validate.get("foreach") {
        let mut out = Vec::new();
        let mut some = Vec::new();
        for each in fe.as_seq().unwrap_or(&[]) {
            let (v, s) = foreach(each, jmes, notes, rule)?;
            out.push(one(v, &msg));
            some.push(s);
        }
        // Kyverno skips a foreach rule that met no element (`applyCount == 0`).
        *foreach_some = Some(cel_text::or(&some));
        return Ok(out);
    }
    if let Some(cel) = validate.get("cel") {
        for key in ["paramKind", "paramRef", "generate"] {
            if let Some(n) = cel.get(key) {
                return Err(Blocked::new(
                    n.span,
                    format!("`validate.cel.{key}` is not converted"),
                ));
            }
        }
        for v in cel.get("variables").and_then(Node::as_seq).unwrap_or(&[]) {
            let (Some(n), Some(e)) = (
                v.get("name").and_then(Node::as_str),
                v.get("expression").and_then(Node::as_str),
            ) else {
                return Err(Blocked::new(
                    v.span,
                    "a CEL variable needs `name` and `expression`".to_owned(),
                ));
            };
            variables.push((n.to_owned(), e.to_owned()));
        }
        let mut out = Vec::new();
        for e in cel.get("expressions").and_then(Node::as_seq).unwrap_or(&[]) {
            out.push(e.to_json());
        }
        return Ok(out);
    }
    if let Some(n) = validate.get("podSecurity") {
        return Err(Blocked::new(
            n.span,
            "`podSecurity` (the Pod Security Standards checks) has no CEL library to convert to"
                .to_owned(),
        ));
    }
    Err(Blocked::new(
        validate.span,
        "the validate rule has no pattern, anyPattern, deny, foreach or cel".to_owned(),
    ))
}

fn skip_note(notes: &mut Vec<String>, rule: &str) {
    let n = format!(
        "rule {rule}: where a conditional or global anchor does not hold Kyverno skips the rule; the converted policy passes"
    );
    if !notes.contains(&n) {
        notes.push(n);
    }
}

/// `anyPattern`: some pattern passes, or (Kyverno's skip) every pattern skips.
fn any_pattern(
    list: &Node,
    v: &str,
    jmes: &Translator,
    notes: &mut Vec<String>,
    rule: &str,
) -> Result<String, Blocked> {
    let items = list.as_seq().unwrap_or(&[]);
    let mut pats = Patterns::new(jmes);
    let mut strict = Vec::new();
    let mut skipped = Vec::new();
    let skips = items.iter().any(pattern::has_skips);
    for p in items {
        strict.push(pats.translate(p, v, Mode::Strict)?);
        if skips {
            let l = pats.translate(p, v, Mode::Lenient)?;
            let s = strict.last().cloned().unwrap_or_default();
            skipped.push(cel_text::and(&[l, cel_text::not(&s)]));
        }
    }
    if skips {
        skip_note(notes, rule);
        strict.push(cel_text::and(&skipped));
    }
    Ok(cel_text::or(&strict))
}

/// One `foreach` entry: every element of its list meets its pattern, anyPattern or deny.
fn foreach(
    each: &Node,
    outer: &Translator,
    notes: &mut Vec<String>,
    rule: &str,
) -> Result<(String, String), Blocked> {
    for key in ["context", "foreach", "elementScope"] {
        if let Some(n) = each.get(key) {
            return Err(Blocked::new(
                n.span,
                format!("`{key}` inside a foreach is not translated"),
            ));
        }
    }
    let Some(list) = each.get("list").and_then(Node::as_str) else {
        return Err(Blocked::new(
            each.span,
            "a foreach needs a `list`".to_owned(),
        ));
    };
    let span = each.get("list").map_or(each.span, |n| n.span);
    let tr = outer.expr(list, span)?;
    let items = tr.folded_or("[]");
    let mut jmes = outer.clone();
    jmes.element = Some("element".to_owned());
    let body = if let Some(p) = each.get("pattern") {
        if pattern::has_skips(p) {
            skip_note(notes, rule);
        }
        let e = Patterns::new(&jmes).translate(p, "element", Mode::Lenient)?;
        jmes.after_substitutions(e)
    } else if let Some(ap) = each.get("anyPattern") {
        any_pattern(ap, "element", &jmes, notes, rule)?
    } else if let Some(deny) = each.get("deny") {
        let null = Node::null();
        let conds = deny.get("conditions").unwrap_or(&null);
        cel_text::not(&conditions::block(conds, &jmes)?)
    } else {
        return Err(Blocked::new(
            each.span,
            "a foreach needs a pattern, anyPattern or deny".to_owned(),
        ));
    };
    let pre = match each.get("preconditions") {
        Some(p) => Some(conditions::block(p, &jmes)?),
        None => None,
    };
    let body = match &pre {
        Some(p) => cel_text::or(&[cel_text::not(p), body]),
        None => body,
    };
    // The elements that count (Kyverno skips the rule when none does).
    let some = match (&pre, tr.nest.is_some()) {
        (Some(p), _) => tr.exists("element", p),
        (None, true) => tr.exists("element", "true"),
        (None, false) => format!("size({items}) > 0"),
    };
    if tr.nest.is_some() {
        return Ok((tr.all("element", &body), some));
    }
    Ok((
        format!("{}.all(element, {body})", cel_text::paren(&items)),
        some,
    ))
}

/// Writes converted policies as YAML, each with a header naming its source.
pub fn to_yaml(m: &Migration, source: &str, line: u32) -> String {
    let mut out = String::new();
    for (i, p) in m.policies.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&format!(
            "# Converted by kpol migrate from {} {} ({source}:{line}).\n",
            m.source_kind, m.name
        ));
        for n in &m.notes {
            out.push_str(&format!("# Note: {n}.\n"));
        }
        for u in &m.unconverted {
            out.push_str(&format!(
                "# Not converted: rule {}: {}.\n",
                u.rule, u.reason
            ));
        }
        out.push_str(&emit(p));
    }
    out
}

fn emit(v: &J) -> String {
    let style = crate::yaml::emit::Style {
        sort_keys: false,
        key: &crate::yaml::emit::plain_or_quoted,
        scalar: &crate::yaml::emit::json_scalar,
    };
    crate::yaml::emit::block(v, &style)
}

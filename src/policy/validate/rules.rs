//! Per-rule policy validation (match.md §1.4 items 5, 7, 14–15, 18, 20): rule type,
//! wildcard kinds, mandatory kinds, validate/mutate forms, JSON patches, label values
//! (`kyverno/kyverno:pkg/validation/policy/validate.go`, `pkg/policy/mutate/validate.go`,
//! `pkg/policy/validate/validate.go`).

use super::Invalid;
use crate::policy::RuleCompiler;
use crate::policy::model::{Rule, RuleBody, ValidateCheck};
use crate::yaml::{Limits, Node, Value, parse_documents};

fn present<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    n.get(key).filter(|v| !v.is_null())
}

/// 5. `ValidateRuleType`.
pub(crate) fn check_rule_type(r: &Node, i: usize) -> Result<(), Invalid> {
    let name = r.get("name").and_then(Node::as_str).unwrap_or("");
    let count = ["mutate", "validate", "generate", "verifyImages"]
        .iter()
        .filter(|k| present(r, k).is_some())
        .count();
    if count == 0 {
        return Err(Invalid::new(
            format!(
                "spec.rules[{i}]: Invalid value: No operation defined in the rule '{name}'.(supported operations: mutate,validate,generate,verifyImages)"
            ),
            r.span,
        ));
    }
    if count > 1 {
        return Err(Invalid::new(
            format!(
                "spec.rules[{i}]: Invalid value: Multiple operations defined in the rule '{name}', only one operation (mutate,validate,generate,verifyImages) is allowed per rule"
            ),
            r.span,
        ));
    }
    if let Some(e) = r.as_map().and_then(|m| m.entry("imageExtractors"))
        && !e.value.is_null()
        && present(r, "verifyImages").is_none()
    {
        return Err(Invalid::new(
            format!(
                "spec.rules[{i}].imageExtractors: Invalid value: Invalid rule spec for rule '{name}', imageExtractors can only be defined for verifyImages rule"
            ),
            e.key_span,
        ));
    }
    Ok(())
}

/// Whether every top-level key of the patterns / patches is `metadata`
/// (`ruleOnlyDealsWithResourceMetaData`).
fn only_metadata(rule: &Rule) -> bool {
    let meta_only = |n: &Node| n.as_map().is_none_or(|m| m.keys().all(|k| k == "metadata"));
    match &rule.body {
        RuleBody::Mutate(m) => present(m, "patchStrategicMerge").is_none_or(meta_only),
        RuleBody::Validate(v) => match &v.check {
            ValidateCheck::Pattern(p) => meta_only(p),
            ValidateCheck::AnyPattern(ps) => ps.iter().all(meta_only),
            _ => true,
        },
        _ => true,
    }
}

/// 14–15. `validateWildcard` for every kinds list of the rule.
pub(crate) fn check_kinds(rule: &Rule, i: usize, background: bool) -> Result<(), Invalid> {
    let blocks = std::iter::once(&rule.match_).chain(rule.exclude.as_ref());
    for b in blocks {
        for f in b.filters() {
            let kinds = f.resources.kind_strings();
            if !kinds.contains(&"*") {
                continue;
            }
            let span = f.resources.span;
            let err = |m: &str| {
                Err(Invalid::new(
                    format!("path: spec.rules[{i}].match.kinds: {m}"),
                    span,
                ))
            };
            if background {
                return err(
                    "wildcard policy not allowed in background mode. Set spec.background=false to disable background mode for this policy rule ",
                );
            }
            if kinds.len() > 1 {
                return err("wildcard policy can not deal with more than one kind");
            }
            let foreach = matches!(&rule.body, RuleBody::Validate(v) if matches!(v.check, ValidateCheck::Foreach(_)));
            if matches!(rule.body, RuleBody::Generate(_) | RuleBody::VerifyImages(_)) || foreach {
                return err("wildcard policy does not support rule type");
            }
            if matches!(&rule.body, RuleBody::Validate(v) if matches!(v.check, ValidateCheck::Pattern(_) | ValidateCheck::AnyPattern(_)))
                && !only_metadata(rule)
            {
                return err(
                    "policy can only deal with the metadata field of the resource if the rule does not match any kind",
                );
            }
        }
    }
    Ok(())
}

/// Checks Kyverno runs per rule of `ComputeRules(policy, "")`: the first failure of the
/// resource checks, else every condition block's and the first of the checks after them.
pub(crate) fn check_computed_rule(rule: &Rule, i: usize, compiler: &RuleCompiler) -> Vec<Invalid> {
    if let Err(e) = check_resources(rule, i) {
        return vec![e];
    }
    // The rest of validateResources: preconditions, deny and foreach conditions.
    let mut out = super::conditions::check(rule, i);
    out.extend(check_forms(rule, i, compiler).err());
    out
}

/// The filters of the match block that Kyverno checks (`any`, else `all`, else the flat one).
fn match_filters(rule: &Rule) -> Vec<&crate::matching::ResourceFilter> {
    let m = &rule.match_;
    if !m.any.is_empty() {
        m.any.iter().collect()
    } else if !m.all.is_empty() {
        m.all.iter().collect()
    } else {
        vec![&m.flat]
    }
}

/// JSON patches, any/all next to the flat form, empty resource descriptions.
fn check_resources(rule: &Rule, i: usize) -> Result<(), Invalid> {
    if let RuleBody::Mutate(m) = &rule.body {
        check_json_patch(m, i)?;
    }
    // validateResources: any/all next to the flat form; empty resource descriptions.
    for (name, block) in [
        ("exclude", rule.exclude.as_ref()),
        ("match", Some(&rule.match_)),
    ] {
        let Some(b) = block else { continue };
        if (!b.any.is_empty() || !b.all.is_empty()) && !b.flat.resources.is_empty() {
            return Err(Invalid::new(
                format!(
                    "path: spec.rules[{i}].{name}.: can't specify any/all together with {name} resources"
                ),
                b.raw.span,
            ));
        }
    }
    for f in match_filters(rule) {
        if f.resources.is_empty() {
            return Err(Invalid::new(
                format!("path: spec.rules[{i}].match.resources.: match resources not specified"),
                f.span,
            ));
        }
    }
    Ok(())
}

/// Kinds listed (7), validate and mutate forms, anchors, label values (20).
fn check_forms(rule: &Rule, i: usize, compiler: &RuleCompiler) -> Result<(), Invalid> {
    let raw = &rule.raw;
    // 7. Every match filter lists kinds.
    for f in match_filters(rule) {
        if f.resources.kinds.is_empty() {
            let msg = if only_metadata(rule) {
                "at least one element must be specified in a kind block, the kind attribute is mandatory when working with the resources element"
            } else {
                "policy can only deal with the metadata field of the resource if the rule does not match any kind"
            };
            return Err(Invalid::new(msg, f.resources.span));
        }
    }
    // Validate and mutate forms (validateActions).
    if let Some(v) = present(raw, "validate") {
        let n = [
            "pattern",
            "anyPattern",
            "deny",
            "foreach",
            "podSecurity",
            "cel",
        ]
        .iter()
        .filter(|k| present(v, k).is_some())
        .count()
            + usize::from(
                present(v, "manifests")
                    .and_then(|m| m.get("attestors"))
                    .and_then(Node::as_seq)
                    .is_some_and(|a| !a.is_empty()),
            );
        if n > 1 {
            return Err(Invalid::new(
                format!(
                    "path: spec.rules[{i}].validate..: only one of pattern, anyPattern, deny, foreach, cel can be specified"
                ),
                v.span,
            ));
        }
        if rule.cel_preconditions.is_some() && present(v, "cel").is_none() {
            return Err(Invalid::new(
                format!(
                    "path: spec.rules[{i}].validate..: celPrecondition can only be used with validate.cel"
                ),
                v.span,
            ));
        }
    }
    if let RuleBody::Mutate(mu) = &rule.body {
        check_mutate(mu, rule, i)?;
    }
    // Anchors a validate pattern may not use (validate.md §4: `+()` is mutate-only).
    if let RuleBody::Validate(v) = &rule.body {
        let patterns: Vec<(&str, &Node)> = match &v.check {
            ValidateCheck::Pattern(p) => vec![("pattern", p)],
            ValidateCheck::AnyPattern(ps) => ps.iter().map(|p| ("anyPattern", p)).collect(),
            _ => Vec::new(),
        };
        for (field, p) in patterns {
            if let Some((path, anchor, span)) = (compiler.unsupported_anchor)(p) {
                return Err(Invalid::new(
                    format!(
                        "path: spec.rules[{i}].validate.{field}.{path}: unsupported anchor {anchor}"
                    ),
                    span,
                ));
            }
        }
    }
    // 20. labels/annotations in patterns and patches hold strings.
    if !labels_are_strings(rule) {
        return Err(Invalid::new(
            "labels and annotations supports only string values, \"use double quotes around the non string values\"",
            raw.span,
        ));
    }
    Ok(())
}

fn check_mutate(mu: &Node, rule: &Rule, i: usize) -> Result<(), Invalid> {
    let psm = present(mu, "patchStrategicMerge").is_some();
    let jp = mu
        .get("patchesJson6902")
        .and_then(Node::as_str)
        .is_some_and(|s| !s.is_empty());
    let err = |path: &str, m: &str| {
        Err(Invalid::new(
            format!("path: spec.rules[{i}].mutate.{path}.: {m}"),
            mu.span,
        ))
    };
    if let Some(fes) = present(mu, "foreach").and_then(Node::as_seq) {
        if psm || jp {
            return err(
                "foreach",
                "only one of `foreach`, `patchStrategicMerge`, or `patchesJson6902` is allowed",
            );
        }
        return check_foreach(fes, String::new(), &|p: &str, m: &str| err(p, m));
    }
    if psm && jp {
        return err(
            "foreach",
            "only one of `patchStrategicMerge` or `patchesJson6902` is allowed",
        );
    }
    if rule.cel_preconditions.is_some() {
        return err("", "celPrecondition can only be used with validate.cel");
    }
    Ok(())
}

type ErrFn<'a> = &'a dyn Fn(&str, &str) -> Result<(), Invalid>;

fn check_foreach(fes: &[Node], mut tag: String, err: ErrFn) -> Result<(), Invalid> {
    // Only the first entry is looked at when it is nested, as upstream returns from the loop.
    for (i, fe) in fes.iter().enumerate() {
        tag.push_str(&format!("foreach[{i}]"));
        if let Some(nested) = present(fe, "foreach")
            .and_then(Node::as_seq)
            .filter(|s| !s.is_empty())
        {
            let other = ["context", "preconditions", "patchStrategicMerge"]
                .iter()
                .any(|k| present(fe, k).is_some())
                || fe
                    .get("patchesJson6902")
                    .and_then(Node::as_str)
                    .is_some_and(|s| !s.is_empty());
            if other {
                return err(&tag, "a nested foreach cannot contain other declarations");
            }
            return check_foreach(nested, tag, err);
        }
        let psm = present(fe, "patchStrategicMerge").is_some();
        let jp = fe
            .get("patchesJson6902")
            .and_then(Node::as_str)
            .is_some_and(|s| !s.is_empty());
        if psm == jp {
            return err(
                &tag,
                "only one of `patchStrategicMerge` or `patchesJson6902` is allowed",
            );
        }
    }
    Ok(())
}

/// 18. JSON patch operations and paths (variables replaced first, as upstream does).
fn check_json_patch(mu: &Node, i: usize) -> Result<(), Invalid> {
    let Some(text) = mu
        .get("patchesJson6902")
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
    else {
        return Ok(());
    };
    let span = mu.get("patchesJson6902").map_or(mu.span, |n| n.span);
    let replaced = regex::Regex::new(r"\{\{[^{}]*\}\}")
        .map(|re| {
            re.replace_all(text, "kyvernojsonpatchvariable")
                .into_owned()
        })
        .unwrap_or_else(|_| text.to_owned());
    let bad = |m: String| Err(Invalid::new(m, span));
    let ops = match parse_documents(&replaced, Limits::default()) {
        Ok(mut d) if !d.is_empty() => d.remove(0).root,
        Ok(_) => return Ok(()),
        Err(e) => {
            return bad(format!(
                "path must begin with a forward slash: spec.rules[{i}]: {}",
                e.message
            ));
        }
    };
    let Some(ops) = ops.as_seq() else {
        return bad(format!(
            "path must begin with a forward slash: spec.rules[{i}]: json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        ));
    };
    for op in ops {
        let path = op.get("path").and_then(Node::as_str).unwrap_or("");
        if !path.starts_with('/') {
            return bad(format!(
                "path must begin with a forward slash: spec.rules[{i}]: {path}"
            ));
        }
    }
    for op in ops {
        let kind = op.get("op").and_then(Node::as_str).unwrap_or("");
        if !matches!(
            kind,
            "add" | "remove" | "replace" | "move" | "copy" | "test"
        ) {
            return bad(format!("unexpected kind: spec.rules[{i}]: {kind}"));
        }
    }
    Ok(())
}

fn labels_are_strings(rule: &Rule) -> bool {
    let maps_ok = |meta: Option<&Node>| {
        let Some(meta) = meta.and_then(Node::as_map) else {
            return true;
        };
        ["labels", "annotations"].iter().all(|k| {
            meta.get(k)
                .and_then(Node::as_map)
                .is_none_or(|m| m.iter().all(|(_, v)| matches!(v.value, Value::Str(_))))
        })
    };
    let check = |p: &Node| {
        maps_ok(p.get("metadata")) && maps_ok(p.get_path(&["spec", "template", "metadata"]))
    };
    match &rule.body {
        RuleBody::Validate(v) => match &v.check {
            ValidateCheck::Pattern(p) => check(p),
            ValidateCheck::AnyPattern(ps) => ps.iter().all(check),
            ValidateCheck::Foreach(fes) => fes
                .as_seq()
                .and_then(|s| s.iter().find_map(|fe| present(fe, "pattern")))
                .is_none_or(check),
            _ => true,
        },
        RuleBody::Mutate(m) => match present(m, "foreach").and_then(Node::as_seq) {
            Some(fes) => fes
                .iter()
                .find_map(|fe| present(fe, "patchStrategicMerge"))
                .is_none_or(check),
            None => present(m, "patchStrategicMerge").is_none_or(check),
        },
        _ => true,
    }
}

//! Rule documents → [`Rule`]: match/exclude compiled, the rule body classified, CRD defaults
//! applied (match.md §1.2). Used for the rules as written and for autogen rules.

use super::model::{Rule, RuleBody, Validate, ValidateCheck};
use crate::matching::{MatchBlock, Schema};
use crate::report::FailureAction;
use crate::validate::PatternScan;
use crate::yaml::fields::{FieldError, FieldResult, as_map, opt_bool, opt_map, opt_seq, opt_str};
use crate::yaml::{Node, Value};

/// Builds one rule from its document. `path` is `spec.rules[i]`.
pub fn build_rule(raw: &Node, path: &str, schema: Schema, autogen: bool) -> FieldResult<Rule> {
    let m = as_map(raw, path)?;
    let name = opt_str(m, "name", path)?
        .ok_or_else(|| FieldError::new(format!("{path}.name: Required value"), raw.span))?
        .to_owned();
    let match_node = m
        .get("match")
        .filter(|n| !n.is_null())
        .ok_or_else(|| FieldError::new(format!("{path}.match: Required value"), raw.span))?;
    let match_ = MatchBlock::compile(match_node, &format!("{path}.match"), schema)?;
    let exclude = match m.get("exclude").filter(|n| !n.is_null()) {
        Some(n) => Some(MatchBlock::compile(n, &format!("{path}.exclude"), schema)?),
        None => None,
    };
    let context = opt_seq(m, "context", path)?.and_then(|_| m.get("context").cloned());
    let preconditions = m.get("preconditions").filter(|n| !n.is_null()).cloned();
    let cel_preconditions = opt_seq(m, "celPreconditions", path)?
        .and(m.get("celPreconditions"))
        .cloned();
    let report_properties =
        crate::yaml::fields::opt_str_map(m, "reportProperties", path)?.unwrap_or_default();
    let skip_background_requests = opt_bool(m, "skipBackgroundRequests", path)?.unwrap_or(true);
    let mut body = build_body(m, path, schema)?;
    // celPreconditions are compiled once, with the rule's `validate.cel`.
    if let RuleBody::Validate(v) = &mut body
        && let ValidateCheck::Cel(cel) = &mut v.check
        && let Some(cel) = std::sync::Arc::get_mut(cel)
    {
        cel.set_preconditions(cel_preconditions.as_ref());
    }
    Ok(Rule {
        name,
        autogen,
        match_,
        exclude,
        context,
        preconditions,
        body,
        raw: raw.clone(),
        cel_preconditions,
        report_properties,
        skip_background_requests,
    })
}

fn present<'a>(m: &'a crate::yaml::Map, key: &str) -> Option<&'a Node> {
    m.get(key).filter(|n| !n.is_null())
}

fn build_body(m: &crate::yaml::Map, path: &str, schema: Schema) -> FieldResult<RuleBody> {
    if let Some(v) = present(m, "validate") {
        return build_validate(v, &format!("{path}.validate"), schema).map(RuleBody::Validate);
    }
    if let Some(n) = present(m, "mutate") {
        as_map(n, &format!("{path}.mutate"))?;
        return Ok(RuleBody::Mutate(n.clone()));
    }
    if let Some(n) = present(m, "generate") {
        as_map(n, &format!("{path}.generate"))?;
        return Ok(RuleBody::Generate(n.clone()));
    }
    if let Some(n) = present(m, "verifyImages") {
        return Ok(RuleBody::VerifyImages(n.clone()));
    }
    Err(FieldError::new(
        format!(
            "{path}: No operation defined in the rule '{}'.(supported operations: mutate,validate,generate,verifyImages)",
            m.get("name").and_then(Node::as_str).unwrap_or("")
        ),
        m.get("name").map_or(crate::source::Span::EMPTY, |n| n.span),
    ))
}

/// The validate forms, in the order Kyverno's validate handler tries them.
const CHECKS: &[&str] = &[
    "pattern",
    "anyPattern",
    "deny",
    "foreach",
    "podSecurity",
    "cel",
    "manifests",
];

fn build_validate(node: &Node, path: &str, schema: Schema) -> FieldResult<Validate> {
    let m = as_map(node, path)?;
    let message = opt_str(m, "message", path)?.map(str::to_owned);
    let failure_action = match opt_str(m, "failureAction", path)? {
        None => None,
        Some(s) => Some(FailureAction::parse(s).ok_or_else(|| {
            FieldError::new(
                format!("{path}.failureAction: Unsupported value: \"{s}\": supported values: \"Audit\", \"Enforce\""),
                m.get("failureAction").map_or(node.span, |n| n.span),
            )
        })?),
    };
    if schema == Schema::V2beta1
        && let Some(e) = m.entry("allowExistingViolations")
    {
        return Err(FieldError::new(
            format!("{path}: unknown field \"allowExistingViolations\""),
            e.key_span,
        ));
    }
    let allow_existing_violations = opt_bool(m, "allowExistingViolations", path)?.unwrap_or(true);
    let failure_action_overrides = super::Overrides::compile(m, "failureActionOverrides", path)?;
    let check = CHECKS
        .iter()
        .find_map(|k| present(m, k).map(|n| (*k, n)))
        .map(|(k, n)| classify(k, n, path))
        .transpose()?
        .ok_or_else(|| {
            FieldError::new(
                format!(
                    "{path}.: one of pattern, anyPattern, deny, foreach, cel must be specified"
                ),
                node.span,
            )
        })?;
    let patterns = match &check {
        ValidateCheck::Pattern(p) => PatternScan::of(std::slice::from_ref(p)),
        ValidateCheck::AnyPattern(ps) => PatternScan::of(ps),
        _ => PatternScan::default(),
    };
    let foreach = match &check {
        ValidateCheck::Foreach(f) => crate::validate::compile_foreach(f),
        _ => Vec::new(),
    };
    let message_variables = message.as_deref().is_some_and(|m| m.contains("{{"));
    Ok(Validate {
        message,
        message_variables,
        check,
        failure_action,
        allow_existing_violations,
        failure_action_overrides,
        patterns,
        foreach,
    })
}

fn classify(key: &str, n: &Node, path: &str) -> FieldResult<ValidateCheck> {
    Ok(match key {
        "pattern" => ValidateCheck::Pattern(n.clone()),
        "anyPattern" => match &n.value {
            Value::Seq(items) => ValidateCheck::AnyPattern(items.clone()),
            _ => {
                return Err(FieldError::new(
                    format!("{path}.anyPattern: failed to deserialize anyPattern, expect array"),
                    n.span,
                ));
            }
        },
        "deny" => ValidateCheck::Deny(n.clone()),
        "foreach" => ValidateCheck::Foreach(n.clone()),
        "podSecurity" => {
            as_map(n, &format!("{path}.podSecurity"))?;
            ValidateCheck::PodSecurity(n.clone(), Box::new(crate::pss::Body::read(n)))
        }
        "cel" => {
            as_map(n, &format!("{path}.cel"))?;
            ValidateCheck::Cel(std::sync::Arc::new(
                crate::vpol::cel_rule::CelRule::compile(n),
            ))
        }
        _ => ValidateCheck::Manifests(n.clone()),
    })
}

/// `spec` fields read with their defaults (match.md §1.2).
pub struct SpecFields {
    pub validation_failure_action: FailureAction,
    pub background: bool,
    pub admission: bool,
    pub apply_one: bool,
    pub failure_action_overrides: super::Overrides,
    pub match_conditions: Option<Node>,
}

pub fn read_spec(spec: &crate::yaml::Map, spec_node: &Node) -> FieldResult<SpecFields> {
    let p = "spec";
    let validation_failure_action = match opt_str(spec, "validationFailureAction", p)? {
        None => FailureAction::Audit,
        Some(s) => FailureAction::parse(s).ok_or_else(|| {
            FieldError::new(
                format!("spec.validationFailureAction: Unsupported value: \"{s}\": supported values: \"audit\", \"enforce\", \"Audit\", \"Enforce\""),
                spec.get("validationFailureAction").map_or(spec_node.span, |n| n.span),
            )
        })?,
    };
    let apply_one = match opt_str(spec, "applyRules", p)? {
        None | Some("All") => false,
        Some("One") => true,
        Some(s) => {
            return Err(FieldError::new(
                format!(
                    "spec.applyRules: Unsupported value: \"{s}\": supported values: \"All\", \"One\""
                ),
                spec.get("applyRules").map_or(spec_node.span, |n| n.span),
            ));
        }
    };
    let match_conditions = opt_map(spec, "webhookConfiguration", p)?
        .and_then(|w| w.get("matchConditions"))
        .filter(|n| !n.is_null())
        .cloned();
    Ok(SpecFields {
        validation_failure_action,
        background: opt_bool(spec, "background", p)?.unwrap_or(true),
        admission: opt_bool(spec, "admission", p)?.unwrap_or(true),
        apply_one,
        failure_action_overrides: super::Overrides::compile(
            spec,
            "validationFailureActionOverrides",
            p,
        )?,
        match_conditions,
    })
}

//! Rule documents → [`Rule`]: match/exclude compiled, the rule body classified, CRD defaults
//! applied (match.md §1.2). Used for the rules as written and for autogen rules.

use super::RuleCompiler;
use super::model::{Rule, RuleBody, Validate, ValidateCheck};
use crate::matching::{MatchBlock, Schema};
use crate::report::FailureAction;
use crate::yaml::fields::{
    FieldError, FieldResult, as_map, opt_bool, opt_map, opt_seq, opt_str, or_push,
};
use crate::yaml::{Node, Value};

/// Builds one rule from its document. `path` is `spec.rules[i]`. Every field is read, so
/// that each independent problem of the rule is reported (in field order).
pub(crate) fn build_rule(
    raw: &Node,
    path: &str,
    schema: Schema,
    autogen: bool,
    compiler: &RuleCompiler,
) -> Result<Rule, Vec<FieldError>> {
    let m = as_map(raw, path).map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    let name = or_push(opt_str(m, "name", path), &mut errs, Some(""))
        .map(str::to_owned)
        .ok_or_else(|| FieldError::new(format!("{path}.name: Required value"), raw.span));
    let name = or_push(name, &mut errs, String::new());
    let match_ = match m.get("match").filter(|n| !n.is_null()) {
        None => Err(FieldError::new(
            format!("{path}.match: Required value"),
            raw.span,
        )),
        Some(n) => MatchBlock::compile(n, &format!("{path}.match"), schema),
    };
    let exclude = m
        .get("exclude")
        .filter(|n| !n.is_null())
        .map(|n| MatchBlock::compile(n, &format!("{path}.exclude"), schema))
        .transpose();
    let (match_, exclude) = match (match_, exclude) {
        (Ok(m), Ok(e)) => (Some(m), e),
        (m, e) => {
            errs.extend(m.err());
            errs.extend(e.err());
            (None, None)
        }
    };
    let context = or_push(opt_seq(m, "context", path), &mut errs, None)
        .and_then(|_| m.get("context").cloned());
    let preconditions = m.get("preconditions").filter(|n| !n.is_null()).cloned();
    let cel_preconditions = or_push(opt_seq(m, "celPreconditions", path), &mut errs, None)
        .and(m.get("celPreconditions"))
        .cloned();
    let report_properties = or_push(
        crate::yaml::fields::opt_str_map(m, "reportProperties", path),
        &mut errs,
        None,
    )
    .unwrap_or_default();
    let skip_background_requests =
        or_push(opt_bool(m, "skipBackgroundRequests", path), &mut errs, None).unwrap_or(true);
    let body = build_body(m, path, schema, compiler);
    let (Some(match_), Ok(mut body), true) =
        (match_, body.map_err(|e| errs.extend(e)), errs.is_empty())
    else {
        return Err(errs);
    };
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

fn build_body(
    m: &crate::yaml::Map,
    path: &str,
    schema: Schema,
    compiler: &RuleCompiler,
) -> Result<RuleBody, Vec<FieldError>> {
    if let Some(v) = present(m, "validate") {
        return build_validate(v, &format!("{path}.validate"), schema, compiler)
            .map(RuleBody::Validate);
    }
    let one = |e| vec![e];
    if let Some(n) = present(m, "mutate") {
        as_map(n, &format!("{path}.mutate")).map_err(one)?;
        return Ok(RuleBody::Mutate(n.clone()));
    }
    if let Some(n) = present(m, "generate") {
        as_map(n, &format!("{path}.generate")).map_err(one)?;
        return Ok(RuleBody::Generate(n.clone()));
    }
    if let Some(n) = present(m, "verifyImages") {
        return Ok(RuleBody::VerifyImages(n.clone()));
    }
    Err(vec![FieldError::new(
        format!(
            "{path}: No operation defined in the rule '{}'.(supported operations: mutate,validate,generate,verifyImages)",
            m.get("name").and_then(Node::as_str).unwrap_or("")
        ),
        m.get("name").map_or(crate::source::Span::EMPTY, |n| n.span),
    )])
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

fn build_validate(
    node: &Node,
    path: &str,
    schema: Schema,
    compiler: &RuleCompiler,
) -> Result<Validate, Vec<FieldError>> {
    let m = as_map(node, path).map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    let message = or_push(opt_str(m, "message", path), &mut errs, None).map(str::to_owned);
    let failure_action = match or_push(opt_str(m, "failureAction", path), &mut errs, None) {
        None => None,
        Some(s) => FailureAction::parse(s).or_else(|| {
            errs.push(FieldError::new(
                format!("{path}.failureAction: Unsupported value: \"{s}\": supported values: \"Audit\", \"Enforce\""),
                m.get("failureAction").map_or(node.span, |n| n.span),
            ));
            None
        }),
    };
    if schema == Schema::V2beta1
        && let Some(e) = m.entry("allowExistingViolations")
    {
        errs.push(FieldError::new(
            format!("{path}: unknown field \"allowExistingViolations\""),
            e.key_span,
        ));
    }
    let allow_existing_violations = or_push(
        opt_bool(m, "allowExistingViolations", path),
        &mut errs,
        None,
    )
    .unwrap_or(true);
    let failure_action_overrides = or_push(
        super::Overrides::compile(m, "failureActionOverrides", path),
        &mut errs,
        Default::default(),
    );
    let check = CHECKS
        .iter()
        .find_map(|k| present(m, k).map(|n| (*k, n)))
        .map(|(k, n)| classify(k, n, path))
        .transpose()
        .and_then(|c| {
            c.ok_or_else(|| {
                FieldError::new(
                    format!(
                        "{path}.: one of pattern, anyPattern, deny, foreach, cel must be specified"
                    ),
                    node.span,
                )
            })
        });
    let check = match check {
        Ok(c) if errs.is_empty() => c,
        res => {
            errs.extend(res.err());
            return Err(errs);
        }
    };
    let compiled = (compiler.check)(&check);
    let message_variables = message.as_deref().is_some_and(|m| m.contains("{{"));
    Ok(Validate {
        message,
        message_variables,
        check,
        failure_action,
        allow_existing_violations,
        failure_action_overrides,
        compiled,
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
            ValidateCheck::PodSecurity(n.clone())
        }
        "cel" => {
            as_map(n, &format!("{path}.cel"))?;
            ValidateCheck::Cel(std::sync::Arc::new(super::CelRule::compile(n)))
        }
        _ => ValidateCheck::Manifests(n.clone()),
    })
}

/// `spec` fields read with their defaults (match.md §1.2).
pub(crate) struct SpecFields {
    pub validation_failure_action: FailureAction,
    pub background: bool,
    pub admission: bool,
    pub apply_one: bool,
    pub failure_action_overrides: super::Overrides,
    pub match_conditions: Option<Node>,
}

/// Reads `spec`'s fields; each one that is not what it must be is pushed to `errs` and its
/// default stands in.
pub(crate) fn read_spec(
    spec: &crate::yaml::Map,
    spec_node: &Node,
    errs: &mut Vec<FieldError>,
) -> SpecFields {
    let p = "spec";
    let validation_failure_action = match or_push(opt_str(spec, "validationFailureAction", p), errs, None) {
        None => FailureAction::Audit,
        Some(s) => FailureAction::parse(s).unwrap_or_else(|| {
            errs.push(FieldError::new(
                format!("spec.validationFailureAction: Unsupported value: \"{s}\": supported values: \"audit\", \"enforce\", \"Audit\", \"Enforce\""),
                spec.get("validationFailureAction").map_or(spec_node.span, |n| n.span),
            ));
            FailureAction::Audit
        }),
    };
    let apply_one = match or_push(opt_str(spec, "applyRules", p), errs, None) {
        None | Some("All") => false,
        Some("One") => true,
        Some(s) => {
            errs.push(FieldError::new(
                format!(
                    "spec.applyRules: Unsupported value: \"{s}\": supported values: \"All\", \"One\""
                ),
                spec.get("applyRules").map_or(spec_node.span, |n| n.span),
            ));
            false
        }
    };
    let match_conditions = or_push(opt_map(spec, "webhookConfiguration", p), errs, None)
        .and_then(|w| w.get("matchConditions"))
        .filter(|n| !n.is_null())
        .cloned();
    SpecFields {
        validation_failure_action,
        background: or_push(opt_bool(spec, "background", p), errs, None).unwrap_or(true),
        admission: or_push(opt_bool(spec, "admission", p), errs, None).unwrap_or(true),
        apply_one,
        failure_action_overrides: or_push(
            super::Overrides::compile(spec, "validationFailureActionOverrides", p),
            errs,
            Default::default(),
        ),
        match_conditions,
    }
}

//! `policies.kyverno.io` PolicyExceptions (v1alpha1, v1beta1, v1) for CEL policies (cel.md §3.3,
//! §11.1 item 5): loaded next to the `kyverno.io` ones, they bind to a policy through
//! `spec.policyRefs` (name and kind, compared exactly; the namespace is not) and select a
//! resource through `spec.matchConditions`, evaluated with the policy's own variables (but not
//! `variables`) before the policy's matchConditions.
//!
//! An exception without `images` / `allowedValues` exempts the resource: the policy gives one
//! rule `exception`, skip (or pass with `reportResult: pass`) with the exception keys in the
//! message. The others only widen `exceptions.allowedImages` / `exceptions.allowedValues`.

use super::Outcome;
use crate::cel::{Program, compile, syntax_diagnostic};
use crate::diagnostic::{Code, Diagnostic, Location};
use crate::report::{RuleResponse, Status};
use crate::source::{SourceFile, Span};
use crate::yaml::Node;

/// The label whose integer value picks the exception whose `reportResult` decides.
pub(crate) const PRIORITY_LABEL: &str = "polex.kyverno.io/priority";
/// The rule name of a response given by an exception.
pub const RULE: &str = "exception";
/// How the message of a response given by an exception starts (skip, pass); the exception
/// keys follow, joined by `, `.
const MESSAGE_PREFIXES: [&str; 2] = [
    "rule is skipped due to policy exception: ",
    "rule is passed due to policy exception: ",
];

/// What a `policies.kyverno.io` PolicyException adds to a [`super::PolicyException`].
#[derive(Debug)]
pub struct CelException {
    /// `<namespace>/<name>`, or `<name>` without a namespace (Kubernetes' object key).
    pub key: String,
    /// `spec.policyRefs`: `(name, kind)`.
    pub policy_refs: Vec<(String, String)>,
    /// `spec.matchConditions`: `(name, expression)`.
    pub match_conditions: Vec<(String, Program)>,
    pub images: Vec<String>,
    pub allowed_values: Vec<String>,
    /// `spec.reportResult: pass` (default skip).
    pub report_pass: bool,
    /// The label [`PRIORITY_LABEL`] when it is an integer.
    pub priority: Option<i64>,
}

impl CelException {
    /// Whether a `policyRefs` entry names the policy (name and kind exactly).
    pub(crate) fn refers_to(&self, kind: &str, name: &str) -> bool {
        self.policy_refs.iter().any(|(n, k)| n == name && k == kind)
    }

    /// A full exemption: neither `images` nor `allowedValues`.
    pub(crate) fn is_full(&self) -> bool {
        self.images.is_empty() && self.allowed_values.is_empty()
    }
}

/// Decides for the exceptions in `applicable` (those referring to the policy, in load order).
/// `eval` evaluates one match condition; with `ignore_failures` an exception whose conditions
/// fail to evaluate does not match, otherwise the errors are the outcome.
pub(super) fn decide(
    applicable: &[&CelException],
    ignore_failures: bool,
    eval: &mut dyn FnMut(&Program) -> Result<bool, String>,
) -> Outcome {
    let mut matched: Vec<&CelException> = Vec::new();
    let mut full = false;
    let mut allowed_images = Vec::new();
    let mut allowed_values = Vec::new();
    for e in applicable {
        let hit = match conditions_hold(e, ignore_failures, eval) {
            Ok(hit) => hit,
            // An exemption already granted is not undone by a later broken exception.
            Err(_) if full => continue,
            Err(err) => return Outcome::Error(err),
        };
        if !hit {
            continue;
        }
        matched.push(e);
        if e.is_full() {
            full = true;
        } else if !full {
            allowed_images.extend(e.images.iter().cloned());
            allowed_values.extend(e.allowed_values.iter().cloned());
        }
    }
    if !full {
        return Outcome::Evaluate {
            allowed_images,
            allowed_values,
        };
    }
    // The first exception decides, unless a later one has a greater priority (from 0).
    let mut best = 0i64;
    let mut chosen = 0usize;
    for (i, e) in matched.iter().enumerate() {
        if let Some(p) = e.priority
            && p > best
        {
            best = p;
            chosen = i;
        }
    }
    let keys: Vec<&str> = matched.iter().map(|e| e.key.as_str()).collect();
    let (status, prefix) = if matched[chosen].report_pass {
        (Status::Pass, MESSAGE_PREFIXES[1])
    } else {
        (Status::Skip, MESSAGE_PREFIXES[0])
    };
    let mut response = RuleResponse::new(RULE, status, format!("{prefix}{}", keys.join(", ")));
    // Reports list the names without their namespace, as for kyverno.io exceptions.
    response.exceptions = keys
        .iter()
        .map(|k| k.rsplit_once('/').map_or(*k, |(_, n)| n).to_owned())
        .collect();
    Outcome::Respond(response)
}

/// All match conditions true (none means true); the first false decides; errors are
/// collected and, unless `ignore_failures`, returned.
fn conditions_hold(
    e: &CelException,
    ignore_failures: bool,
    eval: &mut dyn FnMut(&Program) -> Result<bool, String>,
) -> Result<bool, String> {
    let mut errors = Vec::new();
    for (_, p) in &e.match_conditions {
        match eval(p) {
            Ok(false) => return Ok(false),
            Ok(true) => {}
            // Unnamed, as Kyverno joins them (multierr).
            Err(err) => errors.push(err),
        }
    }
    if errors.is_empty() {
        Ok(true)
    } else if ignore_failures {
        Ok(false)
    } else {
        Err(errors.join("; "))
    }
}

/// Reads one `policies.kyverno.io` PolicyException document; invalid ones are an error at
/// the offending node. Syntax errors in match conditions are reported but the exception is
/// kept: evaluating such a condition is an error (never a silent exemption).
pub(super) fn build(
    source: &SourceFile,
    root: &Node,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(String, String, CelException), Diagnostic> {
    let err = |msg: String, span: Span| {
        Diagnostic::error(Code::InvalidPolicy, msg, Some(Location::at(source, span)))
    };
    let name = root
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned();
    let namespace = root
        .get_path(&["metadata", "namespace"])
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_owned();
    let what = format!("PolicyException {name}");
    let Some(spec) = root.get("spec").filter(|s| s.as_map().is_some()) else {
        return Err(err(format!("{what}: spec is required"), root.span));
    };
    let Some(refs) = spec.get("policyRefs").and_then(Node::as_seq) else {
        let at = spec.get("policyRefs").map_or(spec.span, |n| n.span);
        return Err(err(format!("{what}: spec.policyRefs is required"), at));
    };
    let mut policy_refs = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        let n = r.get("name").and_then(Node::as_str);
        let k = r.get("kind").and_then(Node::as_str);
        let (Some(n), Some(k)) = (n, k) else {
            return Err(err(
                format!("{what}: spec.policyRefs[{i}] needs name and kind"),
                r.span,
            ));
        };
        policy_refs.push((n.to_owned(), k.to_owned()));
    }
    let mut match_conditions = Vec::new();
    if let Some(list) = spec.get("matchConditions").filter(|n| !n.is_null()) {
        let Some(items) = list.as_seq() else {
            return Err(err(
                format!("{what}: spec.matchConditions must be a list"),
                list.span,
            ));
        };
        for (i, c) in items.iter().enumerate() {
            let cname = c.get("name").and_then(Node::as_str);
            let expr = c.get("expression").filter(|e| e.as_str().is_some());
            let (Some(cname), Some(expr)) = (cname, expr) else {
                return Err(err(
                    format!("{what}: spec.matchConditions[{i}] needs name and expression"),
                    c.span,
                ));
            };
            let text = expr.as_str().unwrap_or("");
            let (program, syntax) = compile(text, expr.span);
            if let Some(e) = syntax {
                let field = format!("{what} spec.matchConditions[{i}].expression");
                diagnostics.push(syntax_diagnostic(source, expr.span, &field, text, &e));
            }
            match_conditions.push((cname.to_owned(), program));
        }
    }
    let strings = |key: &str| -> Result<Vec<String>, Diagnostic> {
        let Some(n) = spec.get(key).filter(|n| !n.is_null()) else {
            return Ok(Vec::new());
        };
        let items = n
            .as_seq()
            .ok_or_else(|| err(format!("{what}: spec.{key} must be a list"), n.span))?;
        items
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| err(format!("{what}: spec.{key} must hold strings"), s.span))
            })
            .collect()
    };
    let images = strings("images")?;
    let allowed_values = strings("allowedValues")?;
    let report_pass = match spec.get("reportResult").filter(|n| !n.is_null()) {
        None => false,
        Some(n) => match n.as_str() {
            Some("skip") => false,
            Some("pass") => true,
            _ => {
                return Err(err(
                    format!("{what}: spec.reportResult must be skip or pass"),
                    n.span,
                ));
            }
        },
    };
    let priority = root
        .get_path(&["metadata", "labels", PRIORITY_LABEL])
        .and_then(Node::as_str)
        .and_then(|v| v.parse::<i64>().ok());
    let key = if namespace.is_empty() {
        name.clone()
    } else {
        format!("{namespace}/{name}")
    };
    Ok((
        name,
        namespace,
        CelException {
            key,
            policy_refs,
            match_conditions,
            images,
            allowed_values,
            report_pass,
            priority,
        },
    ))
}

#[cfg(test)]
#[path = "cel_tests.rs"]
mod tests;

//! What the engine says about one resource: per policy, the responses of the rules that
//! matched (match.md §3.2). Plain data, serialisable, rendered by the binary.

use serde::Serialize;

/// Enforce blocks at admission; Audit only reports. Carried on every finding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum FailureAction {
    #[default]
    Audit,
    Enforce,
    /// A CEL policy whose `validationActions` include `Warn` but not `Deny`: a failure is an
    /// admission warning (never read from a ClusterPolicy's `validationFailureAction`).
    Warn,
}

impl FailureAction {
    /// `Enforce`/`enforce` and `Audit`/`audit` (the lowercase forms are deprecated but accepted).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Enforce" | "enforce" => Some(Self::Enforce),
            "Audit" | "audit" => Some(Self::Audit),
            _ => None,
        }
    }

    /// The action of a CEL policy's `validationActions` (a ValidatingPolicy's, or a
    /// ValidatingAdmissionPolicyBinding's): `Deny` enforces, else `Warn` warns, else Audit.
    /// Kyverno defaults an empty list to `[Deny]`.
    pub(crate) fn from_validation_actions<'a>(actions: impl IntoIterator<Item = &'a str>) -> Self {
        let mut seen = None;
        for a in actions {
            match a {
                "Deny" => return Self::Enforce,
                "Warn" => seen = Some(Self::Warn),
                _ => {
                    seen.get_or_insert(Self::Audit);
                }
            }
        }
        seen.unwrap_or(Self::Enforce)
    }

    /// The stronger of two actions: Enforce, then Warn, then Audit.
    pub(crate) fn stronger(self, other: Self) -> Self {
        let rank = |a: Self| match a {
            Self::Audit => 0,
            Self::Warn => 1,
            Self::Enforce => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Audit => "Audit",
            Self::Enforce => "Enforce",
            Self::Warn => "Warn",
        }
    }
}

/// A rule result, as Kyverno names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Warn,
    Error,
    Skip,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Warn => "warn",
            Status::Error => "error",
            Status::Skip => "skip",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleType {
    Validation,
    Mutation,
    Generation,
    ImageVerify,
    /// A DeletingPolicy's verdict (Kyverno's `Deletion`).
    Deletion,
}

/// One rule's response for one resource.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleResponse {
    pub rule: String,
    pub rule_type: RuleType,
    pub status: Status,
    pub message: String,
    pub failure_action: FailureAction,
    /// The failing path as Kyverno reports it, split into keys/indices
    /// (`["spec", "containers", "0", "image"]`); `None` when the rule did not fail at a path.
    pub path: Option<Vec<String>>,
    /// Set when kpol could not evaluate the rule because it uses a feature kpol does not
    /// implement yet (the status is then `error`): the feature's name.
    pub unsupported: Option<String>,
    /// Where in the resource the response points: the failing field, the foreach element
    /// (or its field) that failed, else the whole resource. The engine sets it on every
    /// response it returns ([`RuleResponse::place`]); every output format reports this span
    /// and none locates `path` again (`path` of a foreach failure is relative to the
    /// element).
    #[serde(skip)]
    pub span: Option<crate::source::Span>,
    /// The PolicyExceptions that turned this response into a skip, by name (without
    /// namespace), in load order; empty when none applied. Recorded by the exception layer,
    /// never parsed back out of `message`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exceptions: Vec<String>,
    /// A mutate-existing rule that patched a target (`WithPatchedTarget` upstream): the target
    /// as the rule left it. The trigger itself is never changed by such a rule.
    #[serde(skip)]
    pub target: Option<Box<crate::yaml::Node>>,
}

/// The pass message of a validate rule, `<prefix> rule '<rule>' passed.` (Kyverno writes
/// `validation` or `Validation`). perf: built for every passing rule of every resource, so
/// without the formatting machinery (docs/PERFORMANCE.md).
pub(crate) fn pass_message(prefix: &str, rule: &str) -> String {
    const MIDDLE: &str = " rule '";
    const END: &str = "' passed.";
    let mut out = String::with_capacity(prefix.len() + MIDDLE.len() + rule.len() + END.len());
    for part in [prefix, MIDDLE, rule, END] {
        out.push_str(part);
    }
    out
}

impl RuleResponse {
    pub fn new(rule: &str, status: Status, message: impl Into<String>) -> Self {
        Self {
            rule: rule.to_owned(),
            rule_type: RuleType::Validation,
            status,
            message: message.into(),
            failure_action: FailureAction::Audit,
            path: None,
            unsupported: None,
            span: None,
            exceptions: Vec::new(),
            target: None,
        }
    }

    /// Sets [`span`](Self::span) when the producer left it unset: `path` located in `root`
    /// (the resource the response is about), else `root` itself.
    pub fn place(&mut self, root: &crate::yaml::Node) {
        if self.span.is_none() {
            self.span = Some(match &self.path {
                Some(path) => root.locate(path).0,
                None => root.span,
            });
        }
    }

    /// Kyverno's path string: `/spec/containers/0/image/`.
    pub fn kyverno_path(&self) -> Option<String> {
        self.path.as_ref().map(|p| {
            let mut s = String::from("/");
            for seg in p {
                s.push_str(seg);
                s.push('/');
            }
            s
        })
    }
}

/// All rule responses of one policy for one resource (possibly none: the policy applied but no
/// rule matched).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyResponse {
    /// Index of the policy in the engine's policy list.
    pub policy: usize,
    pub rules: Vec<RuleResponse>,
}

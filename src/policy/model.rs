//! The compiled policy model: what the engine evaluates, built once from policy documents by
//! [`super::load`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::matching::MatchBlock;
use crate::source::Source;
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PolicyKind {
    ClusterPolicy,
    Policy,
    // CEL policy kinds (crate::vpol): one synthetic rule with a `RuleBody::CelPolicy` body.
    ValidatingPolicy,
    NamespacedValidatingPolicy,
    ValidatingAdmissionPolicy,
}

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
    pub fn from_validation_actions<'a>(actions: impl IntoIterator<Item = &'a str>) -> Self {
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
    pub fn stronger(self, other: Self) -> Self {
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

/// A loaded `ClusterPolicy` or `Policy`.
#[derive(Clone, Debug)]
pub struct Policy {
    pub name: String,
    /// The namespace of a namespaced `Policy` (`default` when unset); `None` for ClusterPolicy.
    pub namespace: Option<String>,
    pub kind: PolicyKind,
    /// The file the policy came from (spans in `raw` and in rules point into it).
    pub source: Source,
    pub annotations: BTreeMap<String, String>,
    /// `spec.validationFailureAction` (default Audit).
    pub validation_failure_action: FailureAction,
    /// `spec.applyRules: One`.
    pub apply_one: bool,
    pub background: bool,
    /// The rules in Kyverno's order for the whole controller set (`ComputeRules(policy, "")`,
    /// used by the mutate phase and rule counting): the policy's own rules, then autogen rules
    /// (match.md §8.6). For the validate phase use [`Policy::validate_rules`].
    pub rules: Vec<Rule>,
    /// The whole policy document.
    pub raw: Node,
    /// `apiVersion` of the document (`kyverno.io/v1` or `kyverno.io/v2beta1`).
    pub api_version: String,
    /// `spec.admission` (default true).
    pub admission: bool,
    /// `spec.validationFailureActionOverrides`, compiled (ClusterPolicy only).
    pub failure_action_overrides: super::Overrides,
    /// `spec.webhookConfiguration.matchConditions`, as written (match.md §2.3).
    pub match_conditions: Option<Node>,
    /// Autogen as computed per resource kind for the validate phase (match.md §8.3).
    pub autogen: Autogen,
}

/// The rule lists Kyverno computes per resource kind (`ComputeRules(policy, kind)`).
#[derive(Clone, Debug)]
pub struct Autogen {
    /// The rules as written (what a kind outside the controller set sees).
    pub spec_rules: Vec<Rule>,
    /// The policy's autogen controller kinds, each with its rule list, computed the first
    /// time a resource of that kind is checked (most runs meet few of the kinds).
    pub by_kind: Vec<KindRules>,
    /// The schema the rules were read with, for generating the per-kind rules.
    pub schema: crate::matching::Schema,
}

/// `ComputeRules(policy, kind)` for one controller kind, once.
#[derive(Clone, Debug)]
pub struct KindRules {
    pub kind: String,
    /// `None` inside: the kind yields no generated rules (the rules as written apply).
    rules: std::sync::OnceLock<Option<Vec<Rule>>>,
}

impl KindRules {
    pub fn new(kind: String) -> Self {
        Self {
            kind,
            rules: std::sync::OnceLock::new(),
        }
    }
}

/// One rule, as written or as generated by autogen.
#[derive(Clone, Debug)]
pub struct Rule {
    pub name: String,
    /// Set for rules made by autogen (`autogen-…`, `autogen-cronjob-…`).
    pub autogen: bool,
    pub match_: MatchBlock,
    pub exclude: Option<MatchBlock>,
    /// `context:` entries (evaluated by the conditions/variables layer).
    pub context: Option<Node>,
    /// `preconditions:` (a condition block).
    pub preconditions: Option<Node>,
    pub body: RuleBody,
    /// The rule document (autogen rules: the rewritten one).
    pub raw: Node,
    /// `celPreconditions`, as written.
    pub cel_preconditions: Option<Node>,
    /// `reportProperties` (values may hold variables).
    pub report_properties: Vec<(String, String)>,
    /// `skipBackgroundRequests` (default true).
    pub skip_background_requests: bool,
}

#[derive(Clone, Debug)]
pub enum RuleBody {
    Validate(Validate),
    /// A mutate rule; evaluated by the mutate layer.
    Mutate(Node),
    Generate(Node),
    VerifyImages(Node),
    /// A compiled ValidatingPolicy / ValidatingAdmissionPolicy (crate::vpol).
    CelPolicy(std::sync::Arc<crate::vpol::CelPolicy>),
}

#[derive(Clone, Debug)]
pub struct Validate {
    /// `validate.message`, before variable substitution.
    pub message: Option<String>,
    /// Whether `message` holds a `{{`: found once at load (a message without one needs no
    /// variable context).
    pub message_variables: bool,
    pub check: ValidateCheck,
    /// `validate.failureAction` if set on the rule.
    pub failure_action: Option<FailureAction>,
    /// `validate.allowExistingViolations` (default true).
    pub allow_existing_violations: bool,
    /// `validate.failureActionOverrides`, compiled.
    pub failure_action_overrides: super::Overrides,
    /// What `pattern` / `anyPattern` hold (variables, references) and their walk plans, found
    /// once at load (empty for other checks).
    pub patterns: crate::validate::PatternScan,
    /// `foreach` entries as the engine runs them, read once at load (empty for other checks).
    pub(crate) foreach: Vec<crate::validate::ForeachEntry>,
}

/// Which of the mutually exclusive validate forms the rule uses.
#[derive(Clone, Debug)]
pub enum ValidateCheck {
    Pattern(Node),
    AnyPattern(Vec<Node>),
    Deny(Node),
    Foreach(Node),
    /// The body as written, and as read for evaluation.
    PodSecurity(Node, Box<crate::pss::Body>),
    /// `validate.cel`, compiled once (crate::vpol::cel_rule).
    Cel(std::sync::Arc<crate::vpol::cel_rule::CelRule>),
    Manifests(Node),
}

impl Policy {
    /// `spec.failurePolicy: Ignore`: Kyverno admits a request its rules error on (the default,
    /// `Fail`, blocks it).
    pub fn ignores_failures(&self) -> bool {
        self.raw
            .get("spec")
            .and_then(|s| s.get("failurePolicy"))
            .and_then(Node::as_str)
            == Some("Ignore")
    }

    /// `namespace/name` for namespaced policies, `name` for cluster policies — the key Kyverno
    /// test files and reports use.
    pub fn key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The rules the validate phase evaluates for a resource of `kind`
    /// (`ComputeRules(policy, kind)`, match.md §8.3): the rules generated for that kind alone
    /// when it is one of the policy's autogen controllers, else the rules as written.
    pub fn validate_rules(&self, kind: &str) -> &[Rule] {
        self.validate_rules_in(self.kind_slot(kind), kind)
    }

    /// Where `kind`'s rule list is kept, for [`Policy::validate_rules_in`]; `None` for a kind
    /// outside the autogen controllers.
    pub fn kind_slot(&self, kind: &str) -> Option<usize> {
        self.autogen.by_kind.iter().position(|e| e.kind == kind)
    }

    /// [`Policy::validate_rules`] with the kind's slot found already.
    pub fn validate_rules_in(&self, slot: Option<usize>, kind: &str) -> &[Rule] {
        let autogen = &self.autogen;
        let Some(entry) = slot.and_then(|i| autogen.by_kind.get(i)) else {
            return &autogen.spec_rules;
        };
        let rules = entry.rules.get_or_init(|| {
            crate::autogen::compute_rules(
                &autogen.spec_rules,
                &self.annotations,
                kind,
                autogen.schema,
            )
        });
        rules.as_deref().unwrap_or(&autogen.spec_rules)
    }

    /// The action of a rule for a resource in `namespace`, whose namespace has `labels`
    /// (match.md §2.1): for a validate rule its first applying `failureActionOverrides` entry,
    /// else its `failureAction`; then the first applying entry of the policy's
    /// `validationFailureActionOverrides`, else `validationFailureAction`.
    pub fn rule_action(
        &self,
        rule: &Rule,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> FailureAction {
        match &rule.body {
            RuleBody::Validate(v) => v
                .failure_action_overrides
                .resolve(namespace, labels)
                .or(v.failure_action),
            _ => None,
        }
        .or_else(|| self.failure_action_overrides.resolve(namespace, labels))
        .unwrap_or(self.validation_failure_action)
    }
}

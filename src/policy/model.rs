//! The compiled policy model: what the engine evaluates, built once from policy documents by
//! [`super::load`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::matching::{MatchBlock, ResourceFilter};
use crate::report::FailureAction;
use crate::request::Request;
use crate::resource::Resource;
use crate::source::Source;
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PolicyKind {
    ClusterPolicy,
    Policy,
    // CEL policy kinds: a `PolicyBody::Cel` body.
    ValidatingPolicy,
    NamespacedValidatingPolicy,
    ValidatingAdmissionPolicy,
    MutatingPolicy,
    NamespacedMutatingPolicy,
    GeneratingPolicy,
    NamespacedGeneratingPolicy,
    DeletingPolicy,
    NamespacedDeletingPolicy,
    ImageValidatingPolicy,
    NamespacedImageValidatingPolicy,
    MutatingAdmissionPolicy,
}

impl PolicyKind {
    /// The kind as a document writes it.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::ClusterPolicy => "ClusterPolicy",
            PolicyKind::Policy => "Policy",
            PolicyKind::ValidatingPolicy => "ValidatingPolicy",
            PolicyKind::NamespacedValidatingPolicy => "NamespacedValidatingPolicy",
            PolicyKind::ValidatingAdmissionPolicy => "ValidatingAdmissionPolicy",
            PolicyKind::MutatingPolicy => "MutatingPolicy",
            PolicyKind::NamespacedMutatingPolicy => "NamespacedMutatingPolicy",
            PolicyKind::GeneratingPolicy => "GeneratingPolicy",
            PolicyKind::NamespacedGeneratingPolicy => "NamespacedGeneratingPolicy",
            PolicyKind::DeletingPolicy => "DeletingPolicy",
            PolicyKind::NamespacedDeletingPolicy => "NamespacedDeletingPolicy",
            PolicyKind::ImageValidatingPolicy => "ImageValidatingPolicy",
            PolicyKind::NamespacedImageValidatingPolicy => "NamespacedImageValidatingPolicy",
            PolicyKind::MutatingAdmissionPolicy => "MutatingAdmissionPolicy",
        }
    }
}

/// A loaded policy of any kind: what every kind shares (the envelope), and its [`PolicyBody`].
#[derive(Clone, Debug)]
pub struct Policy {
    pub name: String,
    /// The namespace of a namespaced `Policy` / `NamespacedValidatingPolicy` (`default` when
    /// unset); `None` for cluster-wide kinds.
    pub namespace: Option<String>,
    pub kind: PolicyKind,
    /// The file the policy came from (spans in `raw` and in rules point into it).
    pub source: Source,
    pub annotations: BTreeMap<String, String>,
    /// `spec.background` (default true).
    pub background: bool,
    /// The whole policy document.
    pub raw: Node,
    /// `apiVersion` of the document (`kyverno.io/v1`, `kyverno.io/v2beta1`, …).
    pub api_version: String,
    /// `spec.admission` (default true).
    pub admission: bool,
    /// `spec.webhookConfiguration.matchConditions`, as written (match.md §2.3).
    pub match_conditions: Option<Node>,
    /// What the policy's kind compiled.
    pub body: PolicyBody,
}

/// A policy's compiled body: one variant per kind family.
#[derive(Clone, Debug)]
pub enum PolicyBody {
    /// `ClusterPolicy` / `Policy`: Kyverno rules.
    Rules(RuleSet),
    /// A compiled ValidatingPolicy / NamespacedValidatingPolicy / ValidatingAdmissionPolicy,
    /// owned by the module that loaded it (the kinds layer). It has no Kyverno rules.
    Cel(std::sync::Arc<dyn CelBody>),
}

/// What the envelope reads of a compiled CEL policy body; the module that owns the body
/// gets it back through [`CelBody::as_any`].
pub trait CelBody: std::fmt::Debug + Send + Sync {
    /// The policy-wide action of a failing or erroring result.
    fn failure_action(&self) -> FailureAction;
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The rules of a `ClusterPolicy` or `Policy` and the spec fields that act on them.
#[derive(Clone, Debug)]
pub struct RuleSet {
    /// `spec.validationFailureAction` (default Audit).
    pub validation_failure_action: FailureAction,
    /// `spec.applyRules: One`.
    pub apply_one: bool,
    /// The rules in Kyverno's order for the whole controller set (`ComputeRules(policy, "")`,
    /// used by the mutate phase and rule counting): the policy's own rules, then autogen rules
    /// (match.md §8.6). For the validate phase use [`Policy::validate_rules`].
    pub rules: Vec<Rule>,
    /// `spec.validationFailureActionOverrides`, compiled (ClusterPolicy only).
    pub failure_action_overrides: super::Overrides,
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
    /// What generates them ([`super::RuleCompiler::autogen_for_kind`]).
    pub compiler: super::RuleCompiler,
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

impl Rule {
    /// Whether a rule selects every resource of this apiVersion and kind, or none, when that
    /// depends on them alone: its `match` filters constrain only `kinds`
    /// ([`ResourceFilter::only_kinds`](crate::matching::ResourceFilter::only_kinds)) and there is nothing to exclude. `None` otherwise.
    pub(crate) fn selects_kind(&self, api_version: &str, kind: &str) -> Option<bool> {
        let block = &self.match_;
        if self.exclude.as_ref().is_some_and(|e| !e.is_empty())
            || !block.deciding().iter().all(ResourceFilter::only_kinds)
        {
            return None;
        }
        let (group, version) = crate::resource::split_api_version(api_version);
        let one = |f: &ResourceFilter| f.kinds_match(group, version, kind);
        Some(if !block.any.is_empty() {
            block.any.iter().any(one)
        } else if !block.all.is_empty() {
            block.all.iter().all(one)
        } else {
            one(&block.flat)
        })
    }

    /// Whether a rule's match (and not its exclude) selects the resource.
    pub fn matches(&self, resource: &Resource, request: &Request) -> bool {
        self.match_.selects(resource, request)
            && !self
                .exclude
                .as_ref()
                .is_some_and(|e| e.excludes(resource, request))
    }
}

#[derive(Clone, Debug)]
pub enum RuleBody {
    Validate(Validate),
    /// A mutate rule; evaluated by the mutate layer.
    Mutate(Node),
    Generate(Node),
    VerifyImages(Node),
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
    /// The check as the evaluator compiled it at load ([`super::RuleCompiler::check`]: what
    /// `pattern` / `anyPattern` hold and their walk plans, the `foreach` entries, the
    /// `podSecurity` body read); `policy` never looks inside.
    pub compiled: std::sync::Arc<dyn super::CompiledCheck>,
}

/// Which of the mutually exclusive validate forms the rule uses.
#[derive(Clone, Debug)]
pub enum ValidateCheck {
    Pattern(Node),
    AnyPattern(Vec<Node>),
    Deny(Node),
    Foreach(Node),
    /// The body as written (read for evaluation into [`Validate::compiled`]).
    PodSecurity(Node),
    /// `validate.cel`, compiled once ([`super::CelRule`]).
    Cel(std::sync::Arc<super::CelRule>),
    Manifests(Node),
}

impl Policy {
    /// The Kyverno rules of a `ClusterPolicy` / `Policy`; `None` for other kinds.
    pub fn rule_set(&self) -> Option<&RuleSet> {
        match &self.body {
            PolicyBody::Rules(set) => Some(set),
            PolicyBody::Cel(_) => None,
        }
    }

    /// The Kyverno rules, autogen rules included ([`RuleSet::rules`]); none for kinds without
    /// Kyverno rules.
    pub fn rules(&self) -> &[Rule] {
        self.rule_set().map_or(&[], |set| &set.rules)
    }

    /// `spec.applyRules: One` ([`RuleSet::apply_one`]).
    pub(crate) fn apply_one(&self) -> bool {
        self.rule_set().is_some_and(|set| set.apply_one)
    }

    /// `spec.failurePolicy: Ignore`: Kyverno admits a request its rules error on (the default,
    /// `Fail`, blocks it).
    pub fn ignores_failures(&self) -> bool {
        self.raw
            .get("spec")
            .and_then(|s| s.get("failurePolicy"))
            .and_then(Node::as_str)
            == Some("Ignore")
    }

    /// Whether the policy reaches resources in `namespace`: a namespaced policy (`Policy`,
    /// `NamespacedValidatingPolicy`) only those of its own namespace (match.md §2.2), a cluster
    /// policy all. The one scope check every phase uses.
    pub fn in_scope(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
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
    pub(crate) fn kind_slot(&self, kind: &str) -> Option<usize> {
        self.rule_set()?
            .autogen
            .by_kind
            .iter()
            .position(|e| e.kind == kind)
    }

    /// [`Policy::validate_rules`] with the kind's slot found already.
    pub(crate) fn validate_rules_in(&self, slot: Option<usize>, kind: &str) -> &[Rule] {
        let Some(set) = self.rule_set() else {
            return &[];
        };
        let autogen = &set.autogen;
        let Some(entry) = slot.and_then(|i| autogen.by_kind.get(i)) else {
            return &autogen.spec_rules;
        };
        let rules = entry.rules.get_or_init(|| {
            (autogen.compiler.autogen_for_kind)(
                &autogen.spec_rules,
                &self.annotations,
                kind,
                autogen.schema,
                &autogen.compiler,
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
        let set = match &self.body {
            PolicyBody::Rules(set) => set,
            PolicyBody::Cel(cel) => return cel.failure_action(),
        };
        match &rule.body {
            RuleBody::Validate(v) => v
                .failure_action_overrides
                .resolve(namespace, labels)
                .or(v.failure_action),
            _ => None,
        }
        .or_else(|| set.failure_action_overrides.resolve(namespace, labels))
        .unwrap_or(set.validation_failure_action)
    }
}

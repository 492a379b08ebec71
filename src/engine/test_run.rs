//! `kpol test`'s evaluation of one test (cli-compat.md §7): one run with the values'
//! operations, one more per operation declared on result entries (§7.2); in the default run
//! the test's JSON payloads (cel.md §3.5) and authorization requests too; then the `Target`
//! map of the mutate-existing targets every run patched.
//!
//! The binary reads the test file and what it names into [`TestInputs`], asks [`evaluate`]
//! for the runs and compares them with the expected rows; how one resource goes through
//! `kpol test`'s row of the phase table is `resource`'s.

mod resource;

use std::sync::Arc;

use crate::cel::context::{CelContext, with_context};
use crate::cluster::Offline;
use crate::engine::Engine;
use crate::policy::Policy;
use crate::report::{RuleResponse, Status};
use crate::request::values::Values;
use crate::request::{Operation, Request, UserInfo};
use crate::resource::Resource;
use crate::vpol::authz::{self, AuthzMode};
use crate::yaml::Node;

/// What one test evaluates besides its policies and exceptions (those are the [`Engine`]'s),
/// as the binary read it from the test file and the files it names.
pub struct TestInputs {
    pub resources: Vec<Resource>,
    pub values: Arc<Values>,
    pub user_info: Option<UserInfo>,
    /// The data of the test's `context:` file (or, in `clusterResources` mode, the virtual
    /// cluster) and the mocks, served to CEL library calls.
    pub cel_context: Option<Arc<CelContext>>,
    /// The virtual cluster and the mocks, served to ClusterPolicy context entries.
    pub offline: Arc<Offline>,
    /// The objects of `paramResources`, in file order (their numbers stay integers).
    pub params: Arc<Vec<Node>>,
    /// The test's `jsonPayloads`, each named as the test writes it (cel.md §3.5).
    pub payloads: Vec<Resource>,
    /// The test's `targetResources`, in file order (duplicates dropped): what mutate-existing
    /// rows are keyed by, and what MutatingPolicies' mutateExisting passes mutate.
    pub targets: Vec<Resource>,
    /// The CEL context data for MutatingPolicies on targets: [`TestInputs::cel_context`] with
    /// the targets added (the CLI registers them with its fake context provider; in
    /// `clusterResources` mode the cluster holds them already).
    pub target_cel_context: Option<Arc<CelContext>>,
    /// `(policy, rule, resource)` from the result entries' `cloneSourceResource` files.
    pub clone_sources: Vec<(String, String, Resource)>,
    /// The test's `httpPayloads` and `envoyPayloads`, read.
    pub authz: Vec<AuthzRequest>,
}

/// One authorization request of a test (kyverno-authz): answered by every ValidatingPolicy
/// of its mode (`crate::vpol::authz`), as `kyverno test` does (`commands/test/test.go`).
pub struct AuthzRequest {
    /// The file's path joined to the test's directory (the CLI's full path; an absolute path
    /// as written): the key of its rows.
    pub path: String,
    pub mode: AuthzMode,
    /// The request as CEL's `object`.
    pub object: cel::Value,
}

/// Every run of one test.
pub struct TestRuns {
    /// The default run (`None`), then one per declared operation, in the order asked.
    pub runs: Vec<(Option<Operation>, Vec<ResourceRun>)>,
    /// The `Target` map ([`target_runs`]): targets patched in any run.
    pub targets: Vec<ResourceRun>,
}

/// Evaluates one test: the default run, then one per operation of `declared` (§7.2). `Err`
/// is what stops the test (the first run that could not be made), with the CLI's words.
pub fn evaluate(
    engine: &Engine,
    inputs: &TestInputs,
    declared: &[Operation],
) -> Result<TestRuns, String> {
    let mut runs: Vec<(Option<Operation>, Vec<ResourceRun>)> = Vec::new();
    let wanted = std::iter::once(None).chain(declared.iter().copied().map(Some));
    for op in wanted {
        let ctx = inputs.cel_context.clone();
        let mut r = with_context(ctx, || run(engine, inputs, op))?;
        // Authorization requests only in the default run.
        if op.is_none() {
            let ctx = inputs.cel_context.clone();
            r.extend(with_context(ctx, || authz_runs(engine, &inputs.authz)));
        }
        runs.push((op, r));
    }
    let all: Vec<&[ResourceRun]> = runs.iter().map(|(_, r)| r.as_slice()).collect();
    let targets = target_runs(inputs, &all);
    Ok(TestRuns { runs, targets })
}

/// One rule response, as the row matcher needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleOutcome {
    pub rule: String,
    pub status: Status,
    pub message: String,
    /// Set when kpol could not evaluate the rule: the feature.
    pub unsupported: Option<String>,
    /// Generate rules: the resources generated (name, resource); `None` for other rules.
    pub generated: Option<Vec<(String, serde_json::Value)>>,
    /// The resource this response is about, as `patchedResources` compares it: after the
    /// policy for mutate rules, as validated for validate rules (mutate.md §10).
    pub patched: Option<Node>,
    /// A mutate-existing rule that patched a target: the target as it left it (the rows of
    /// the target's key compare this, [`target_runs`]).
    pub target: Option<Node>,
}

impl From<RuleResponse> for RuleOutcome {
    /// A response with nothing generated, patched or targeted.
    fn from(r: RuleResponse) -> Self {
        Self {
            unsupported: r.unsupported,
            rule: r.rule,
            status: r.status,
            message: r.message,
            generated: None,
            patched: None,
            target: None,
        }
    }
}

impl RuleOutcome {
    /// [`RuleOutcome::from`] a borrowed response (the mutate phase keeps its responses).
    fn from_ref(r: &RuleResponse) -> Self {
        Self {
            rule: r.rule.clone(),
            status: r.status,
            message: r.message.clone(),
            unsupported: r.unsupported.clone(),
            generated: None,
            patched: None,
            target: None,
        }
    }
}

/// One engine response (a policy in one phase) for one resource.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub policy: String,
    /// `policies.kyverno.io/scored: "false"`: fail is reported as warn (§8.4).
    pub unscored: bool,
    /// A kind without rules (every CEL kind: ValidatingPolicy, VAP, MutatingPolicy, MAP,
    /// ImageValidatingPolicy, GeneratingPolicy, DeletingPolicy and the Namespaced ones):
    /// an entry's `rule` does not select among its responses (`isRulelessPolicyKind`).
    pub ruleless: bool,
    pub rules: Vec<RuleOutcome>,
}

/// The responses for one resource, keyed like the CLI keys them (§8).
#[derive(Clone, Debug)]
pub struct ResourceRun {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub responses: Vec<Response>,
}

impl ResourceRun {
    /// Whether this is a JSON payload's run (no apiVersion, no kind: never a resource).
    pub fn is_payload(&self) -> bool {
        self.api_version.is_empty() && self.kind.is_empty()
    }

    /// `<apiVersion>/<Kind>/<namespace>/<name>` (the RESOURCE column); a payload's name as
    /// the test writes it.
    pub fn display(&self) -> String {
        if self.is_payload() {
            return self.name.clone();
        }
        format!(
            "{}/{}/{}/{}",
            self.api_version, self.kind, self.namespace, self.name
        )
    }
}

/// Evaluates every resource. `forced` overrides the values' operations (§7.2).
fn run(
    engine: &Engine,
    inputs: &TestInputs,
    forced: Option<Operation>,
) -> Result<Vec<ResourceRun>, String> {
    let mut runs = Vec::with_capacity(inputs.resources.len());
    for resource in &inputs.resources {
        runs.push(resource::run_resource(engine, inputs, resource, forced)?);
    }
    // Upstream iterates a map here; kpol sorts.
    runs.sort_by(|a, b| {
        (&a.api_version, &a.kind, &a.namespace, &a.name).cmp(&(
            &b.api_version,
            &b.kind,
            &b.namespace,
            &b.name,
        ))
    });
    // JSON payloads (cel.md §3.5) only in the default run, as the CLI evaluates them: only
    // JSON-mode ValidatingPolicies see them, keyed by the payload's name.
    if forced.is_none() {
        runs.extend(
            inputs
                .payloads
                .iter()
                .map(|p| payload_run(engine, inputs, p)),
        );
    }
    Ok(runs)
}

fn payload_run(engine: &Engine, inputs: &TestInputs, payload: &Resource) -> ResourceRun {
    let policies = engine.policies();
    let mut responses: Vec<_> = engine
        .validate_payload(payload)
        .into_iter()
        .filter_map(|pr| {
            let p = policies.get(pr.policy)?;
            let rules = pr.rules.into_iter().map(RuleOutcome::from).collect();
            Some(response(p, rules))
        })
        .collect();
    // Every DeletingPolicy evaluates its conditions on a payload too (`test.go`
    // `applyDeletingPolicies`; crate::dpol).
    let request = Request {
        values: inputs.values.clone(),
        offline: inputs.offline.clone(),
        ..Request::default()
    };
    for (i, p) in policies.iter().enumerate() {
        if let Some(r) = engine.deletion(i, payload, &request) {
            let rules = vec![RuleOutcome::from(r)];
            responses.push(response(p, rules));
        }
    }
    ResourceRun {
        api_version: String::new(),
        kind: String::new(),
        namespace: String::new(),
        name: payload.name.clone(),
        responses,
    }
}

/// The `Target` map of `kyverno test` (`test.go`): per `targetResources` object, every
/// response (of every run, of every trigger, in order) with a rule whose patched target is
/// that object (apiVersion, kind, name, and namespace unless the target has none); each kept
/// with that first rule only, its `patched` the patched target.
fn target_runs(inputs: &TestInputs, runs: &[&[ResourceRun]]) -> Vec<ResourceRun> {
    let mut out = Vec::new();
    for t in &inputs.targets {
        let mut responses = Vec::new();
        for run in runs.iter().flat_map(|r| r.iter()) {
            for resp in &run.responses {
                let hit = resp.rules.iter().find_map(|o| {
                    let node = o.target.as_ref()?;
                    let r = Resource::from_document(node.clone(), None, 0).ok()?;
                    let ns = if t.namespace.is_empty() {
                        &r.namespace
                    } else {
                        &t.namespace
                    };
                    (r.api_version == t.api_version
                        && r.kind == t.kind
                        && r.name == t.name
                        && r.namespace == *ns)
                        .then_some((o, node))
                });
                if let Some((o, node)) = hit {
                    let mut o = o.clone();
                    o.patched = Some(node.clone());
                    responses.push(Response {
                        policy: resp.policy.clone(),
                        unscored: resp.unscored,
                        ruleless: resp.ruleless,
                        rules: vec![o],
                    });
                }
            }
        }
        if !responses.is_empty() {
            out.push(ResourceRun {
                api_version: t.api_version.clone(),
                kind: t.kind.clone(),
                namespace: t.namespace.clone(),
                name: t.name.clone(),
                responses,
            });
        }
    }
    out
}

/// One run per authorization request, with the response of every policy of its mode.
fn authz_runs(engine: &Engine, requests: &[AuthzRequest]) -> Vec<ResourceRun> {
    requests
        .iter()
        .map(|req| {
            let responses = engine
                .policies()
                .iter()
                .filter_map(|p| {
                    let cel = crate::vpol::cel_policy(p)?;
                    let r = authz::evaluate(cel, req.mode, req.object.clone())?;
                    Some(response(p, vec![RuleOutcome::from(r)]))
                })
                .collect();
            ResourceRun {
                api_version: String::new(),
                kind: String::new(),
                namespace: String::new(),
                name: req.path.clone(),
                responses,
            }
        })
        .collect()
}

/// `policy`'s response of `rules`.
fn response(policy: &Policy, rules: Vec<RuleOutcome>) -> Response {
    Response {
        policy: policy.name.clone(),
        unscored: policy
            .annotations
            .get("policies.kyverno.io/scored")
            .is_some_and(|v| v == "false"),
        ruleless: matches!(policy.body, crate::policy::PolicyBody::Cel(_)),
        rules,
    }
}

//! The `cli.kyverno.io/v1alpha1` `Test` document (cli-compat.md §3): read strictly, with
//! case-insensitive field names ([`super::fields`]), legacy (≤ v1.14) fields accepted with a
//! warning and mapped as v1.11–v1.14 did (§3.2).

use super::fields::{Fields, LoadError};
use crate::request::Operation;
use crate::source::SourceFile;
use crate::yaml::Node;

const TEST_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "policies",
    "resources",
    "targetResources",
    "exceptions",
    "variables",
    "values",
    "userinfo",
    "results",
    "checks",
    "context",
    "clusterResources",
    "paramResources",
    "jsonPayload",
    "jsonPayloads",
    "httpPayloads",
    "envoyPayloads",
    "apiCallResponses",
    "globalContextEntries",
];

const RESULT_FIELDS: &[&str] = &[
    "policy",
    "rule",
    "resources",
    "resourceSpecs",
    "kind",
    "result",
    "operation",
    "patchedResources",
    "failOnMissingResources",
    "generatedResource",
    "generatedResources",
    "cloneSourceResource",
    "isValidatingAdmissionPolicy",
    "isMutatingAdmissionPolicy",
    "isValidatingPolicy",
    "isImageValidatingPolicy",
    "isGeneratingPolicy",
    "isMutatingPolicy",
    "isDeletingPolicy",
    // Legacy (removed in v1.15.0).
    "resource",
    "status",
    "namespace",
    "patchedResource",
];

/// The CEL policy kinds a result entry can declare; kpol evaluates none of them.
const CEL_FLAGS: &[(&str, &str)] = &[
    ("isValidatingAdmissionPolicy", "ValidatingAdmissionPolicy"),
    ("isMutatingAdmissionPolicy", "MutatingAdmissionPolicy"),
    ("isValidatingPolicy", "ValidatingPolicy"),
    ("isImageValidatingPolicy", "ImageValidatingPolicy"),
    ("isGeneratingPolicy", "GeneratingPolicy"),
    ("isMutatingPolicy", "MutatingPolicy"),
    ("isDeletingPolicy", "DeletingPolicy"),
];

/// One test (one YAML document of a test file).
#[derive(Clone, Debug, Default)]
pub struct TestSpec {
    pub name: String,
    pub policies: Vec<String>,
    pub resources: Vec<String>,
    pub target_resources: Vec<String>,
    /// `paramResources`: files of the objects VAP/MAP bindings take their params from (they
    /// are part of the virtual cluster too).
    pub param_resources: Vec<String>,
    pub exceptions: Vec<String>,
    /// The values file (`variables:`); ignored when inline `values` is set.
    pub variables: Option<String>,
    /// Inline `values:` (a ValuesSpec).
    pub values: Option<Node>,
    pub userinfo: Option<String>,
    /// The `context:` file (a `cli.kyverno.io/v1alpha1` Context) for CEL library calls.
    pub context: Option<String>,
    /// `clusterResources`: `ClusterResource` files; any switches the test to cluster mode.
    pub cluster_resources: Vec<String>,
    /// `apiCallResponses`, checked and indexed.
    pub api_calls: crate::cluster::mocks::ApiCalls,
    /// `globalContextEntries` as written, each with the `resourceFiles` to read for it.
    pub global_entries: Vec<(crate::cluster::mocks::GlobalSource, Vec<String>)>,
    pub results: Vec<ResultEntry>,
    /// `jsonPayloads` (or the deprecated `jsonPayload` when that list is empty), each
    /// cleaned as Go's `path.Clean` does and deduplicated: the names rows give payloads
    /// (cel.md §3.5).
    pub json_payloads: Vec<String>,
    /// `httpPayloads` and `envoyPayloads`: the authorization requests of ValidatingPolicies
    /// in `evaluation.mode: HTTP` / `Envoy`, as written (duplicates dropped).
    pub http_payloads: Vec<String>,
    pub envoy_payloads: Vec<String>,
    /// Inputs kpol does not use yet; every row of the test is then unsupported.
    pub unsupported_inputs: Vec<&'static str>,
    pub warnings: Vec<String>,
}

/// One expected result (cli-compat.md §3.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultEntry {
    pub policy: String,
    pub rule: String,
    pub resources: Vec<String>,
    /// Informational only: never used for matching (§3.1).
    pub kind: String,
    /// The expected result, as written (`pass`, `fail`, `warn`, `error`, `skip`).
    pub result: String,
    pub operation: Option<Operation>,
    pub patched_resources: Option<String>,
    /// `generatedResource`: the expected generated resource's file.
    pub generated_resource: Option<String>,
    /// `generatedResources`: files, any of which may hold the expected resource.
    pub generated_resources: Vec<String>,
    /// `cloneSourceResource`: a file of clone sources for the entry's rule.
    pub clone_source_resource: Option<String>,
    /// The CEL policy kind the entry declares (`isValidatingPolicy: true` → `ValidatingPolicy`).
    pub cel_kind: Option<&'static str>,
    /// Whether the `resources` key is present (even as `[]`): only then are
    /// `resourceSpecs` consulted (cli-compat.md §15).
    pub resources_given: bool,
    /// `failOnMissingResources`: a resource absent from the `patchedResources` file fails
    /// the row instead of dropping it (`commands/test/output.go`).
    pub fail_on_missing_resources: bool,
    /// `resourceSpecs`: (group, version, namespace, name); kind and subresource are not
    /// compared upstream (`commands/test/output.go`).
    pub resource_specs: Vec<(String, String, String, String)>,
    /// Where the entry starts in the test file.
    pub at: Option<crate::source::LineCol>,
}

/// Reads one Test document. `Err` aborts this test (the file's other tests still run).
pub fn parse_test(source: &SourceFile, root: &Node) -> Result<TestSpec, LoadError> {
    let f = Fields::new(source, root, "test", TEST_FIELDS)?;
    let mut t = TestSpec::default();
    let legacy_name = f.string("name")?;
    if f.string("apiVersion")?.is_empty() || f.string("kind")?.is_empty() || f.has("name") {
        // Kyverno ≥ 1.15 refuses the file; kpol keeps running old suites (§3.2).
        t.warnings.push(format!(
            "test file ({}) uses a deprecated schema that will be removed in 1.15",
            source.name()
        ));
    }
    t.name = match f.get("metadata") {
        Some(m) => m
            .get("name")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_owned(),
        None => String::new(),
    };
    if t.name.is_empty() {
        t.name = legacy_name;
    }
    t.policies = dedup(f.strings("policies")?);
    t.resources = dedup(f.strings("resources")?);
    t.target_resources = f.strings("targetResources")?;
    t.param_resources = f.strings("paramResources")?;
    t.exceptions = f.strings("exceptions")?;
    t.variables = f.opt_string("variables")?;
    t.values = f.get("values").cloned();
    t.userinfo = f.opt_string("userinfo")?;
    t.context = f.opt_string("context")?;
    let mut payloads = f.strings("jsonPayloads")?;
    let single = f.string("jsonPayload")?;
    if payloads.is_empty() && !single.is_empty() {
        payloads.push(single);
    }
    t.json_payloads = dedup(
        payloads
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| clean_path(p))
            .collect(),
    );
    t.http_payloads = dedup(f.strings("httpPayloads")?);
    t.envoy_payloads = dedup(f.strings("envoyPayloads")?);
    for (field, feature) in [("checks", "checks")] {
        if f.get(field).is_some() && !t.unsupported_inputs.contains(&feature) {
            t.unsupported_inputs.push(feature);
        }
    }
    t.cluster_resources = f.strings("clusterResources")?;
    if let Some(n) = f.get("apiCallResponses") {
        let list = n.as_seq().unwrap_or(&[]);
        t.api_calls = crate::cluster::mocks::ApiCalls::from_list(list)
            .map_err(|e| LoadError::at(source, n, e))?;
    }
    if let Some(n) = f.get("globalContextEntries") {
        for e in n.as_seq().unwrap_or(&[]) {
            let entry = crate::cluster::mocks::GlobalSource::from_node(e)
                .map_err(|m| LoadError::at(source, e, m))?;
            if t.global_entries.iter().any(|(g, _)| g.name == entry.0.name) {
                return Err(LoadError::at(
                    source,
                    e,
                    format!("globalContextEntries: duplicate name {:?}", entry.0.name),
                ));
            }
            t.global_entries.push(entry);
        }
    }
    for item in f.list("results")? {
        t.results.push(parse_result(source, item, &mut t.warnings)?);
    }
    Ok(t)
}

/// Go's `path.Clean`: `.` segments and repeated slashes dropped, `..` resolved lexically.
pub fn clean_path(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

fn parse_result(
    source: &SourceFile,
    node: &Node,
    warnings: &mut Vec<String>,
) -> Result<ResultEntry, LoadError> {
    let f = Fields::new(source, node, "test result", RESULT_FIELDS)?;
    let mut r = ResultEntry {
        policy: f.string("policy")?,
        rule: f.string("rule")?,
        resources: f.strings("resources")?,
        kind: f.string("kind")?,
        result: f.string("result")?,
        patched_resources: f.opt_string("patchedResources")?,
        at: Some(source.line_col(node.span.start)),
        ..ResultEntry::default()
    };
    r.resources_given = f.has("resources");
    for s in f.list("resourceSpecs")? {
        let sf = Fields::new(
            source,
            s,
            "resourceSpec",
            &[
                "group",
                "version",
                "kind",
                "namespace",
                "subresource",
                "name",
            ],
        )?;
        r.resource_specs.push((
            sf.string("group")?,
            sf.string("version")?,
            sf.string("namespace")?,
            sf.string("name")?,
        ));
    }
    r.fail_on_missing_resources = f.bool("failOnMissingResources")?;
    r.generated_resource = f.opt_string("generatedResource")?;
    r.generated_resources = f.strings("generatedResources")?;
    r.clone_source_resource = f.opt_string("cloneSourceResource")?;
    for (flag, kind) in CEL_FLAGS {
        if f.bool(flag)? && r.cel_kind.is_none() {
            r.cel_kind = Some(kind);
        }
    }
    let op = f.string("operation")?;
    if !op.is_empty() {
        r.operation = match Operation::parse(&op) {
            Some(o @ (Operation::Create | Operation::Update | Operation::Delete)) => Some(o),
            _ => {
                return Err(LoadError::at(
                    source,
                    f.get("operation").unwrap_or(node),
                    format!(
                        "invalid test result for policy {}: invalid operation \"{op}\", must be one of CREATE, UPDATE, DELETE",
                        r.policy
                    ),
                ));
            }
        };
    }
    // Legacy fields, mapped as v1.11–v1.14 did (§3.2).
    let legacy: Vec<&str> = ["resource", "status", "namespace", "patchedResource"]
        .into_iter()
        .filter(|k| f.has(k))
        .collect();
    if !legacy.is_empty() {
        let lc = source.line_col(node.span.start);
        warnings.push(format!(
            "{}:{}:{}: deprecated result field(s) {} (removed in Kyverno 1.15)",
            source.name(),
            lc.line,
            lc.column,
            legacy.join(", ")
        ));
    }
    let resource = f.string("resource")?;
    if !resource.is_empty() {
        r.resources.push(resource);
    }
    if r.result.is_empty() {
        r.result = f.string("status")?;
    }
    if r.patched_resources.is_none() {
        r.patched_resources = f.opt_string("patchedResource")?;
    }
    let _ = f.string("namespace")?;
    Ok(r)
}

/// Removes repeated entries, keeping the first (§3).
fn dedup(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn parse(text: &str) -> Result<TestSpec, LoadError> {
        let src = SourceFile::new("kyverno-test.yaml", text);
        let docs = parse_documents(text, Limits::default())
            .map_err(|e| LoadError::in_file("yaml", e.message))?;
        let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
        parse_test(&src, &root)
    }

    #[test]
    fn current_format() -> Result<(), LoadError> {
        let t = parse(
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n\
             policies: [p.yaml, p.yaml]\nresources: [r.yaml]\nresults:\n\
             - policy: p\n  rule: r\n  resources: [a, ns/b]\n  kind: Pod\n  result: fail\n  operation: UPDATE\n",
        )?;
        assert_eq!(t.name, "t");
        assert_eq!(t.policies, ["p.yaml"]);
        assert!(t.warnings.is_empty());
        let r = &t.results[0];
        assert_eq!((r.policy.as_str(), r.rule.as_str()), ("p", "r"));
        assert_eq!(r.resources, ["a", "ns/b"]);
        assert_eq!(r.result, "fail");
        assert_eq!(r.operation, Some(Operation::Update));
        Ok(())
    }

    // jsonPayloads as the CLI's cleanTest leaves them: cleaned, deduplicated, blanks dropped;
    // the deprecated jsonPayload only when the list is empty.
    #[test]
    fn json_payload_names_are_cleaned() -> Result<(), LoadError> {
        let t = parse(
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n\
             jsonPayload: ignored.json\njsonPayloads: [./a.json, 'd//b.json', a.json, ' ', x/../c.yaml]\n\
             results: []\n",
        )?;
        assert_eq!(t.json_payloads, ["a.json", "d/b.json", "c.yaml"]);
        assert!(t.unsupported_inputs.is_empty());
        let t = parse(
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n\
             jsonPayload: ./one.json\nhttpPayloads: [h.json]\nresults: []\n",
        )?;
        assert_eq!(t.json_payloads, ["one.json"]);
        assert!(t.unsupported_inputs.is_empty());
        assert_eq!(t.http_payloads, ["h.json"]);
        Ok(())
    }

    // Old suites (Kyverno ≤ 1.14): top-level name, result `resource`/`status`.
    #[test]
    fn legacy_fields_are_mapped_with_a_warning() -> Result<(), LoadError> {
        let t = parse(
            "name: old\npolicies: [p.yaml]\nresources: [r.yaml]\nresults:\n\
             - policy: p\n  rule: r\n  resource: web\n  namespace: prod\n  status: pass\n  patchedResource: x.yaml\n",
        )?;
        assert_eq!(t.name, "old");
        assert_eq!(t.warnings.len(), 2);
        let r = &t.results[0];
        assert_eq!(r.resources, ["web"]);
        assert_eq!(r.result, "pass");
        assert_eq!(r.patched_resources.as_deref(), Some("x.yaml"));
        Ok(())
    }

    // The library itself writes `isMUtatingPolicy`; encoding/json accepts it.
    #[test]
    fn field_names_are_case_insensitive() -> Result<(), LoadError> {
        let t = parse(
            "apiVersion: v\nkind: Test\nPolicies: [p.yaml]\nresults:\n\
             - Policy: p\n  isMUtatingPolicy: true\n  RESULT: pass\n",
        )?;
        assert_eq!(t.policies, ["p.yaml"]);
        assert_eq!(t.results[0].cel_kind, Some("MutatingPolicy"));
        assert_eq!(t.results[0].result, "pass");
        Ok(())
    }

    #[test]
    fn unknown_fields_and_bad_operations_are_errors() {
        let e = parse("apiVersion: v\nkind: Test\npolicy: [p.yaml]\n").err();
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some("kyverno-test.yaml:3:1: test: unknown field \"policy\"")
        );
        let e = parse("apiVersion: v\nkind: Test\nresults:\n- policy: p\n  operation: PATCH\n");
        assert!(e.is_err_and(|e| e.message.contains("invalid operation \"PATCH\"")));
    }
}

//! Unit tests of the conversion, one per construct: the CEL each construct becomes, the
//! refusals with their location, and that converted policies load without diagnostics and
//! give the original's verdicts on small resources.

use std::sync::Arc;

use super::*;
use crate::engine::Engine;
use crate::report::Status;
use crate::request::Request;
use crate::source::SourceFile;
use crate::yaml::{Limits, parse_documents};

fn policy(rules: &str) -> String {
    format!(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n  annotations:\n    a: b\nspec:\n  validationFailureAction: Enforce\n  rules:\n{rules}"
    )
}

fn migrate(text: &str) -> Migration {
    let source = Arc::new(SourceFile::new("t.yaml", text.to_owned()));
    let docs = parse_documents(text, Limits::default()).expect("yaml");
    let loaded = crate::kinds::load_policies(&source, docs);
    let mut all = migrate_loaded(&loaded);
    assert_eq!(all.len(), 1, "one ClusterPolicy");
    all.remove(0)
}

fn only_expression(m: &Migration) -> String {
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let v = &m.policies[0]["spec"]["validations"];
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
    v[0]["expression"].as_str().expect("expression").to_owned()
}

fn pattern_rule(pattern: &str) -> String {
    policy(&format!(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      pattern:\n{pattern}"
    ))
}

fn load(text: &str) -> Vec<crate::policy::Policy> {
    let source = Arc::new(SourceFile::new("t.yaml", text.to_owned()));
    let docs = parse_documents(text, Limits::default()).expect("yaml");
    let loaded = crate::kinds::load_policies(&source, docs);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    assert!(loaded.invalid.is_empty());
    loaded.policies
}

fn resource(text: &str) -> crate::resource::Resource {
    let source = Arc::new(SourceFile::new("r.yaml", text.to_owned()));
    let m = crate::manifest::read_manifests(&source, Limits::default());
    m.resources.into_iter().next().expect("a resource")
}

/// The verdict of the only policy of `policies` on `res`, rules folded (fail, pass, skip).
fn verdict(policies: Vec<crate::policy::Policy>, res: &str) -> &'static str {
    let engine = Engine::new(policies);
    let rs = engine.validate(&resource(res), &Request::default());
    let statuses: Vec<Status> = rs
        .iter()
        .flat_map(|r| r.rules.iter().map(|x| x.status))
        .collect();
    if statuses.contains(&Status::Fail) {
        "fail"
    } else if statuses.contains(&Status::Error) {
        "error"
    } else if statuses.contains(&Status::Pass) {
        "pass"
    } else {
        "skip"
    }
}

/// Converts `original`, checks the result loads cleanly, and that both give the same
/// verdict on each resource (returned in order).
fn same_verdicts(original: &str, resources: &[&str]) -> Vec<&'static str> {
    let m = migrate(original);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let mut out = Vec::new();
    for r in resources {
        let a = verdict(load(original), r);
        let b = verdict(load(&yaml), r);
        assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
        out.push(a);
    }
    out
}

const POD_LATEST: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: nginx:latest\n";
const POD_TAGGED: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels:\n    app: x\nspec:\n  containers:\n  - name: c\n    image: nginx:1.2\n    securityContext:\n      runAsNonRoot: true\n";

#[test]
fn envelope_carries_metadata_actions_and_kinds() {
    let m = migrate(&pattern_rule("        metadata:\n          name: \"?*\"\n"));
    let p = &m.policies[0];
    assert_eq!(p["kind"], "ValidatingPolicy");
    assert_eq!(p["metadata"]["annotations"]["a"], "b");
    assert_eq!(p["spec"]["validationActions"][0], "Deny");
    let rr = &p["spec"]["matchConstraints"]["resourceRules"][0];
    assert_eq!(rr["apiGroups"][0], "");
    assert_eq!(rr["resources"][0], "pods");
    assert_eq!(rr["operations"], serde_json::json!(["CREATE", "UPDATE"]));
    assert!(
        to_yaml(&m, "f.yaml", 3)
            .starts_with("# Converted by kpol migrate from ClusterPolicy p (f.yaml:3).")
    );
}

#[test]
fn policy_becomes_namespaced_validating_policy() {
    let text = pattern_rule("        metadata:\n          name: \"?*\"\n")
        .replace("kind: ClusterPolicy", "kind: Policy")
        .replace("  name: p\n", "  name: p\n  namespace: team\n");
    let m = migrate(&text);
    assert_eq!(m.policies[0]["kind"], "NamespacedValidatingPolicy");
    assert_eq!(m.policies[0]["metadata"]["namespace"], "team");
}

#[test]
fn wildcards_and_negated_wildcards() {
    let m = migrate(&pattern_rule(
        "        spec:\n          containers:\n          - image: \"!*:latest\"\n",
    ));
    let e = only_expression(&m);
    assert!(
        e.contains("!string(containers1.image).matches('^.*:latest$')"),
        "{e}"
    );
    assert_eq!(
        same_verdicts(
            &pattern_rule(
                "        spec:\n          containers:\n          - image: \"!*:latest\"\n"
            ),
            &[POD_LATEST, POD_TAGGED]
        ),
        ["fail", "pass"]
    );
}

#[test]
fn equality_and_negation_anchors() {
    let e = only_expression(&migrate(&pattern_rule(
        "        spec:\n          =(hostNetwork): false\n          X(hostPID): \"*\"\n",
    )));
    assert!(
        e.contains("(!has(object.spec.hostNetwork) || (type(object.spec.hostNetwork) == list ? object.spec.hostNetwork.all(item, item == false) : (object.spec.hostNetwork == false)))"),
        "{e}"
    );
    assert!(e.contains("!has(object.spec.hostPID)"), "{e}");
}

#[test]
fn conditional_anchor_skips_as_kyverno_does() {
    let text = pattern_rule(
        "        spec:\n          containers:\n          - (name): \"c\"\n            securityContext:\n              runAsNonRoot: true\n",
    );
    let m = migrate(&text);
    // The validation is the strict form; where the pattern would skip, a match condition
    // keeps the policy out, as Kyverno skips the rule.
    let e = only_expression(&m);
    assert!(e.contains("(!(has(containers2.name) && (type(containers2.name) == list ? containers2.name.all(item, (item != null) && (string(item) == 'c')) : ((containers2.name != null) && (string(containers2.name) == 'c'))))) ||"), "{e}");
    assert_eq!(
        m.policies[0]["spec"]["matchConditions"][0]["name"],
        "preconditions"
    );
    let other = POD_LATEST.replace("name: c\n", "name: other\n");
    let root = POD_LATEST.replace(
        "name: c\n",
        "name: c\n    securityContext:\n      runAsNonRoot: false\n",
    );
    assert_eq!(
        same_verdicts(&text, &[&other, POD_TAGGED, &root]),
        ["skip", "pass", "fail"]
    );
}

#[test]
fn scalar_patterns_over_lists_match_every_element() {
    // A scalar pattern meets a list value when every element meets it (an empty list
    // passes); a list pattern led by a scalar asks for a list whose every element meets it.
    let scalar = pattern_rule("        spec:\n          accessModes: \"Read*\"\n");
    let e = only_expression(&migrate(&scalar));
    assert!(
        e.contains("type(object.spec.accessModes) == list ? object.spec.accessModes.all(item, "),
        "{e}"
    );
    let listed =
        pattern_rule("        spec:\n          accessModes:\n          - ReadWriteOncePod\n");
    let e = only_expression(&migrate(&listed));
    assert!(
        e.contains("type(object.spec.accessModes) == list && object.spec.accessModes.all(item, "),
        "{e}"
    );
    let pvc = |modes: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  accessModes: {modes}\n")
    };
    let pvcs = [
        pvc("[ReadWriteOncePod]"),
        pvc("[ReadWriteOncePod, ReadWriteOnce]"),
        pvc("[ReadOnlyMany, ReadWriteMany]"),
        pvc("[]"),
        pvc("ReadWriteOncePod"),
        pvc("[ReadWriteOnce]"),
    ];
    let pvcs: Vec<&str> = pvcs.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&scalar, &pvcs),
        ["pass", "pass", "pass", "pass", "pass", "pass"]
    );
    assert_eq!(
        same_verdicts(&listed, &pvcs),
        ["pass", "fail", "fail", "pass", "fail", "fail"]
    );
    // Later entries of a list pattern are ignored by Kyverno: refused, as for maps.
    let two = pattern_rule("        spec:\n          accessModes:\n          - a\n          - b\n");
    assert!(migrate(&two).unconverted[0].reason.contains("first entry"));
}

#[test]
fn existence_anchor_is_exists() {
    let e = only_expression(&migrate(&pattern_rule(
        "        spec:\n          ^(containers):\n          - name: c\n",
    )));
    assert!(
        e.contains("object.spec.containers.exists(containers"),
        "{e}"
    );
}

#[test]
fn global_anchor_skips_as_kyverno_does() {
    let text = pattern_rule(
        "        spec:\n          <(hostNetwork): true\n          dnsPolicy: ClusterFirstWithHostNet\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(
        e.contains("(!has(object.spec.hostNetwork) || (type(object.spec.hostNetwork) == list ? object.spec.hostNetwork.all(item, item == true) : (object.spec.hostNetwork == true)))"),
        "{e}"
    );
    let host = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: x\n";
    let host_ok = host.replace(
        "  hostNetwork: true\n",
        "  hostNetwork: true\n  dnsPolicy: ClusterFirstWithHostNet\n",
    );
    let no_host = host.replace("true", "false");
    assert_eq!(
        same_verdicts(&text, &[host, &host_ok, &no_host]),
        ["fail", "pass", "skip"]
    );
}

#[test]
fn numbers_ranges_and_durations() {
    assert_eq!(
        pattern::string_pattern(">0", "v").as_deref(),
        Ok("int(v) > 0")
    );
    assert_eq!(
        pattern::string_pattern("1-10", "v").as_deref(),
        Ok("int(v) >= 1 && int(v) <= 10")
    );
    assert_eq!(
        pattern::string_pattern("1024!-65535", "v").as_deref(),
        Ok("int(v) < 1024 || int(v) > 65535")
    );
    assert_eq!(
        pattern::string_pattern("<1h", "v").as_deref(),
        Ok("duration(string(v)) < duration('1h')")
    );
    assert_eq!(
        pattern::string_pattern("a | b", "v").as_deref(),
        Ok("(string(v) == 'a | b') || ((string(v) == 'a') || (string(v) == 'b'))")
    );
    // Quantities with suffixes: CEL's quantity library, exact; a missing value is 0.
    assert_eq!(
        pattern::string_pattern("<=2Gi", "v").as_deref(),
        Ok(
            "(v == null ? true : (type(v) == string || type(v) == int || type(v) == double) ? (isQuantity(string(v)) ? quantity(string(v)).compareTo(quantity('2Gi')) <= 0 : false) : false)"
        )
    );
    // A range mixing `0` (also a Go duration, which Kyverno tries first) with a quantity.
    assert!(pattern::string_pattern("0-2Gi", "v").is_err());
}

/// A pod whose one container has `memory` (a YAML scalar, written as is) under limits, or
/// no limits at all for `None`.
fn pod_memory(memory: Option<&str>) -> String {
    let limits = memory.map_or(String::new(), |m| {
        format!("    resources:\n      limits:\n        memory: {m}\n")
    });
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: nginx:1.2\n{limits}"
    )
}

#[test]
fn quantity_comparisons_keep_the_cluster_policys_verdicts() {
    let pods: Vec<String> = [
        Some("1Gi"),
        Some("2Gi"),
        Some("2049Mi"),
        Some("\"2048Mi\""),
        Some("3000000000"),
        Some("2147483648"),
        Some("1.5"),
        Some("500m"),
        Some("lots"),
        Some("true"),
        Some("null"),
        None,
    ]
    .iter()
    .map(|m| pod_memory(*m))
    .collect();
    let pods: Vec<&str> = pods.iter().map(String::as_str).collect();
    let rule = |p: &str| {
        pattern_rule(&format!(
            "        spec:\n          containers:\n          - =(resources):\n              =(limits):\n                =(memory): \"{p}\"\n"
        ))
    };
    // Expected verdicts: the ClusterPolicy's under kpol's engine (Kyverno v1.19.0's
    // `validateString`), which the converted policy must give too.
    let f = "fail";
    let p = "pass";
    let expected: [(&str, [&str; 12]); 6] = [
        ("<=2Gi", [p, p, f, p, f, p, p, p, f, f, p, p]),
        (">1Gi", [f, p, p, p, p, p, f, f, f, f, f, p]),
        ("!2Gi", [p, f, p, f, p, f, p, p, p, p, p, p]),
        ("2Gi", [f, p, f, p, f, p, f, f, f, f, f, p]),
        ("512Mi-2Gi", [p, p, f, p, f, p, f, f, f, f, f, p]),
        ("1Ki!-2Gi", [f, f, p, f, p, f, p, p, f, f, p, p]),
    ];
    for (pattern, verdicts) in expected {
        assert_eq!(same_verdicts(&rule(pattern), &pods), verdicts, "{pattern}");
    }
}

#[test]
fn missing_key_meets_pattern_as_null() {
    // `<=1` holds for a missing field (Kyverno reads it as 0); `?*` does not.
    let e = only_expression(&migrate(&pattern_rule(
        "        spec:\n          =(x): \"?*\"\n          z: \"<=1\"\n",
    )));
    assert!(
        e.contains(
            "(!has(object.spec.z) || (type(object.spec.z) == list ? object.spec.z.all(item, (item == null) || (int(item) <= 1)) : ((object.spec.z == null) || (int(object.spec.z) <= 1))))"
        ),
        "{e}"
    );
    assert!(
        e.contains(
            "(!has(object.spec.x) || (type(object.spec.x) == list ? object.spec.x.all(item, (item != null) && (string(item) != '')) : ((object.spec.x != null) && (string(object.spec.x) != ''))))"
        ),
        "{e}"
    );
}

#[test]
fn metadata_wildcard_keys() {
    let e = only_expression(&migrate(&pattern_rule(
        "        metadata:\n          =(annotations):\n            X(fluxcd.io/*): \"*\"\n",
    )));
    assert!(
        e.contains("!(object.metadata.annotations.exists(k, k.matches('^fluxcd\\\\.io/.*$')))"),
        "{e}"
    );
}

#[test]
fn preconditions_become_match_conditions() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Job]\n    preconditions:\n      any:\n      - key: \"{{ request.object.metadata.ownerReferences[0].kind || '' }}\"\n        operator: NotEquals\n        value: CronJob\n    validate:\n      message: m\n      deny: {}\n",
    );
    let m = migrate(&text);
    let mc = &m.policies[0]["spec"]["matchConditions"][0];
    assert_eq!(mc["name"], "preconditions");
    assert!(
        mc["expression"]
            .as_str()
            .unwrap_or_default()
            .contains("ownerReferences[0].kind"),
        "{mc}"
    );
    assert_eq!(only_expression(&m), "false");
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec: {}\n";
    let owned = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  ownerReferences:\n  - kind: CronJob\n    name: c\n    apiVersion: batch/v1\n    uid: u\nspec: {}\n";
    assert_eq!(same_verdicts(&text, &[job, owned]), ["fail", "skip"]);
}

/// A literal value list with wildcard entries: Kyverno matches the entry as a pattern for
/// the key and the key (as text) as a pattern for the entry, element by element of a list key.
#[test]
fn in_operators_with_wildcard_entries_match_both_ways() {
    let pod = |name: &str, image: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: '{name}'\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: c\n    image: '{image}'\n"
        )
    };
    let rule = |key: &str, op: &str| {
        policy(&format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{{{ {key} }}}}\"\n            operator: {op}\n            value: ['nginx:1.*', 'busybox', 'v?']\n"
        ))
    };
    let images = "request.object.spec.containers[?(@.name=='c')].image";
    let resources = [
        pod("p", "nginx:1.25"),
        pod("p", "redis"),
        pod("p", "busy*"),
        pod("p", "v1"),
        pod("p", "v10"),
    ];
    let r: Vec<&str> = resources.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&rule(images, "AnyIn"), &r),
        ["fail", "pass", "fail", "fail", "pass"]
    );
    assert_eq!(
        same_verdicts(
            &rule("request.object.spec.containers[].image", "AllNotIn"),
            &r
        ),
        ["pass", "fail", "pass", "pass", "fail"]
    );
    assert_eq!(
        same_verdicts(&rule("request.object.spec.containers[].image", "AllIn"), &r),
        ["pass", "pass", "pass", "pass", "pass"]
    );
    let names = [pod("nginx:1.0", "x"), pod("other", "x")];
    let n: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&rule("request.object.metadata.name", "AnyIn"), &n),
        ["fail", "pass"]
    );
}

#[test]
fn deny_key_reading_a_missing_key_is_an_error() {
    // Kyverno substitutes every deny operand first; a path reading a key its map lacks is
    // an error there (the rule errors), while a `||` default, a field of a non-map and an
    // index out of range give null.
    let deny = |key: &str| {
        policy(&format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{{{ {key} }}}}\"\n            operator: Equals\n            value: x\n"
        ))
    };
    let labelled = |app: &str| {
        POD_LATEST.replace(
            "  name: a\n",
            &format!("  name: a\n  labels:\n    app: {app}\n"),
        )
    };
    let (x, y) = (labelled("x"), labelled("y"));
    let plain = deny("request.object.metadata.labels.app");
    let e = only_expression(&migrate(&plain));
    assert!(
        e.starts_with("size([(('metadata' in object) && ((type(object.metadata) != map) || "),
        "{e}"
    );
    assert_eq!(
        same_verdicts(&plain, &[&x, &y, POD_LATEST]),
        ["fail", "pass", "error"]
    );
    let defaulted = deny("request.object.metadata.labels.app || ''");
    assert_eq!(
        same_verdicts(&defaulted, &[&x, &y, POD_LATEST]),
        ["fail", "pass", "pass"]
    );
    let indexed = deny("request.object.spec.containers[3].name");
    assert_eq!(same_verdicts(&indexed, &[POD_LATEST]), ["pass"]);
}

#[test]
fn deny_conditions_with_in_operators() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [ClusterRole]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.rules[].verbs[] }}\"\n            operator: AnyIn\n            value: [escalate, bind]\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(
        e.contains(".exists(x0, has(x0.verbs) && (x0.verbs.exists(k,"),
        "{e}"
    );
    let bad = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- apiGroups: ['']\n  resources: [pods]\n  verbs: [get, bind]\n";
    let good = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- apiGroups: ['']\n  resources: [pods]\n  verbs: [get]\n";
    assert_eq!(same_verdicts(&text, &[bad, good]), ["fail", "pass"]);
}

#[test]
fn foreach_with_element_and_skip_on_no_element() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      foreach:\n      - list: request.object.spec.containers\n        pattern:\n          image: \"*:*\"\n",
    );
    let m = migrate(&text);
    assert!(
        m.policies[0]["spec"]["matchConditions"][0]["expression"]
            .as_str()
            .unwrap_or_default()
            .contains("size(")
    );
    let untagged = POD_LATEST.replace("nginx:latest", "nginx");
    let no_containers = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec: {}\n";
    assert_eq!(
        same_verdicts(&text, &[&untagged, POD_TAGGED, no_containers]),
        ["fail", "pass", "skip"]
    );
}

#[test]
fn context_variables_and_message_expressions() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    context:\n    - name: app\n      variable:\n        jmesPath: request.object.metadata.labels.app\n        default: none\n    validate:\n      message: \"app {{ app }} is not allowed\"\n      deny:\n        conditions:\n        - key: \"{{ app }}\"\n          operator: Equals\n          value: x\n",
    );
    let m = migrate(&text);
    let spec = &m.policies[0]["spec"];
    assert_eq!(spec["variables"][0]["name"], "app");
    assert!(
        spec["variables"][0]["expression"]
            .as_str()
            .unwrap_or_default()
            .ends_with(": 'none')")
    );
    assert_eq!(
        spec["validations"][0]["messageExpression"],
        "'app ' + string(variables.app) + ' is not allowed'"
    );
    assert_eq!(
        same_verdicts(&text, &[POD_TAGGED, POD_LATEST]),
        ["fail", "pass"]
    );
}

#[test]
fn match_names_namespaces_and_exclude() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n          names: [\"a*\"]\n    exclude:\n      any:\n      - resources:\n          namespaces: [kube-system]\n    validate:\n      message: m\n      pattern:\n        metadata:\n          labels:\n            app: \"?*\"\n",
    );
    let m = migrate(&text);
    let conds = &m.policies[0]["spec"]["matchConditions"];
    assert_eq!(
        conds[0]["expression"],
        "object.metadata.name.matches('^a.*$')"
    );
    assert_eq!(
        conds[1]["expression"],
        "!(request.namespace == 'kube-system')"
    );
    assert_eq!(
        same_verdicts(&text, &[POD_LATEST, POD_TAGGED]),
        ["fail", "pass"]
    );
}

#[test]
fn bare_kinds_match_every_group() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Service, apps/v1/Deployment]\n    validate:\n      message: m\n      pattern:\n        metadata:\n          name: \"?*\"\n",
    );
    let rr = &migrate(&text).policies[0]["spec"]["matchConstraints"]["resourceRules"];
    assert_eq!(rr[0]["apiGroups"][0], "*");
    assert_eq!(rr[0]["resources"][0], "services");
    assert_eq!(rr[1]["apiGroups"][0], "apps");
    assert_eq!(rr[1]["resources"][0], "deployments");
}

#[test]
fn validate_cel_carries_over() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      cel:\n        variables:\n        - name: nm\n          expression: object.metadata.name\n        expressions:\n        - expression: variables.nm != 'bad'\n          message: bad name\n",
    );
    let m = migrate(&text);
    assert_eq!(
        m.policies[0]["spec"]["validations"][0]["expression"],
        "variables.nm != 'bad'"
    );
    assert_eq!(m.policies[0]["spec"]["variables"][0]["name"], "nm");
}

#[test]
fn audit_action_and_autogen_annotation() {
    let text = pattern_rule("        metadata:\n          name: \"?*\"\n")
        .replace(
            "validationFailureAction: Enforce",
            "validationFailureAction: Audit",
        )
        .replace(
            "    a: b\n",
            "    a: b\n    pod-policies.kyverno.io/autogen-controllers: Deployment,Job\n",
        );
    let m = migrate(&text);
    assert_eq!(m.policies[0]["spec"]["validationActions"][0], "Audit");
    assert_eq!(
        m.policies[0]["spec"]["autogen"]["podControllers"]["controllers"],
        serde_json::json!(["deployments", "jobs"])
    );
}

#[test]
fn refusals_point_at_the_construct() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    context:\n    - name: cm\n      imageRegistry:\n        reference: x\n    validate:\n      message: m\n      deny: {}\n",
    );
    let m = migrate(&text);
    assert!(m.policies.is_empty());
    let u = &m.unconverted[0];
    assert_eq!(u.rule, "r");
    assert!(
        u.reason
            .contains("only `variable`, `configMap` and API-call (GET) entries are converted"),
        "{}",
        u.reason
    );
    let src = SourceFile::new("t", text.clone());
    let at = src.line_col(u.span.start);
    assert_eq!((at.line, at.column), (16, 7));

    let range = migrate(&pattern_rule(
        "        spec:\n          containers:\n          - resources:\n              limits:\n                memory: \"0-2Gi\"\n",
    ));
    assert!(
        range.unconverted[0].reason.contains("duration"),
        "{:?}",
        range.unconverted
    );
    let pss = migrate(&policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      podSecurity:\n        level: baseline\n        version: latest\n",
    ));
    assert!(pss.unconverted[0].reason.contains("podSecurity"));
}

#[test]
fn mutate_overlay_becomes_apply_configuration() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          labels:\n            +(team): core\n            app.kubernetes.io/part-of: shop\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let p = &m.policies[0];
    assert_eq!(p["kind"], "MutatingPolicy");
    let muts = p["spec"]["mutations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        muts[0]["applyConfiguration"]["expression"],
        "Object{metadata: Object.metadata{labels: {'app.kubernetes.io/part-of': 'shop'}}}"
    );
    assert_eq!(
        muts[1]["applyConfiguration"]["expression"],
        "has(object.metadata) && has(object.metadata.labels) && has(object.metadata.labels.team) ? Object{} : Object{metadata: Object.metadata{labels: Object.metadata.labels{team: 'core'}}}"
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert_eq!(load(&yaml).len(), 1);
}

#[test]
fn unconverted_bodies_are_said() {
    let m = migrate(&policy(
        "  - name: g\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    verifyImages:\n    - imageReferences: ['*']\n",
    ));
    assert!(m.policies.is_empty());
    assert!(
        m.unconverted[0]
            .reason
            .contains("`verifyImages` rules are not converted yet"),
        "{:?}",
        m.unconverted
    );
}

#[test]
fn counts_against_digit_strings() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n        - key: \"{{ length(request.object.spec.containers) }}\"\n          operator: GreaterThan\n          value: \"1\"\n",
    );
    let two = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    image: z\n";
    assert_eq!(same_verdicts(&text, &[two, POD_TAGGED]), ["fail", "pass"]);
    // Against any other key a digit string may be a quantity: refused.
    let other = text.replace(
        "length(request.object.spec.containers)",
        "request.object.spec.priority",
    );
    assert!(migrate(&other).unconverted[0].reason.contains("quantities"));
}

#[test]
fn mutate_list_element_conditions_select_by_name() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          containers:\n          - (name): \"*\"\n            imagePullPolicy: Always\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let e = &m.policies[0]["spec"]["mutations"][0]["applyConfiguration"]["expression"];
    assert!(
        e.as_str()
            .unwrap_or_default()
            .contains(".map(x, Object.spec.containers{name: x.name, imagePullPolicy: 'Always'})"),
        "{e}"
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    let engine = Engine::new(load(&yaml));
    let out = engine
        .mutated(&resource(POD_LATEST), &Request::default())
        .map(|r| r.root.to_json());
    assert_eq!(
        out.as_ref()
            .and_then(|v| v["spec"]["containers"][0]["imagePullPolicy"].as_str()),
        Some("Always"),
        "{out:?}"
    );
    // A condition on another key than the merge key is refused.
    let other = text.replace("(name)", "(image)");
    assert!(migrate(&other).unconverted[0].reason.contains("merge key"));
}

#[test]
fn pattern_substitutions_resolve_before_the_walk() {
    // Kyverno substitutes `{{ }}` before walking the pattern: a missing path is an error even
    // where the walk would fail earlier.
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      foreach:\n      - list: request.object.spec.containers\n        pattern:\n          resources:\n            requests:\n              cpu: \"?*\"\n            limits:\n              cpu: \"{{ element.resources.requests.cpu }}\"\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(
        e.contains(".all(element, size([element.resources.requests.cpu]) >= 0 ? "),
        "{e}"
    );
    let equal = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n    resources:\n      requests:\n        cpu: 1\n      limits:\n        cpu: 1\n";
    assert_eq!(
        same_verdicts(&text, &[equal, POD_LATEST]),
        ["pass", "error"]
    );
}

#[test]
fn split_sort_and_join_functions() {
    // split by a literal, then an index (null where it is out of range).
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.metadata.name | split(@, '-') | [1] }}\"\n            operator: Equals\n            value: bad\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(e.contains(".split('-')"), "{e}");
    let named = |n: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {n}\nspec:\n  containers:\n  - name: c\n    image: x\n"
        )
    };
    let (bad, good, short) = (named("a-bad-1"), named("a-ok"), named("a"));
    assert_eq!(
        same_verdicts(&text, &[&bad, &good, &short]),
        ["fail", "pass", "pass"]
    );

    // sort of a flattened list (through flatten()), compared as lists.
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.spec.containers[].args[] | sort(@) }}\"\n            operator: NotEquals\n            value: [a, b]\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(e.contains(".flatten().sort()"), "{e}");
    let args = |a: &str, b: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x\n    args: [{a}]\n  - name: d\n    image: x\n    args: [{b}]\n"
        )
    };
    assert_eq!(
        same_verdicts(&text, &[&args("b", "a"), &args("a", "c")]),
        ["pass", "fail"]
    );

    // join of a projection by a literal.
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ join(',', request.object.spec.containers[].name) }}\"\n            operator: Equals\n            value: c,d\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(e.contains(".join(',')"), "{e}");
    assert_eq!(
        same_verdicts(&text, &[&args("b", "a"), &bad]),
        ["fail", "pass"]
    );

    // A separator that is not a literal is refused.
    let m = migrate(&policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ split(request.object.metadata.name, request.object.metadata.namespace) }}\"\n            operator: Equals\n            value: x\n",
    ));
    assert!(
        m.unconverted[0]
            .reason
            .contains("`split` has no translation"),
        "{:?}",
        m.unconverted
    );
}

/// The resource `res` as the only policy of `policies` leaves it, as JSON.
fn mutated_json(policies: Vec<crate::policy::Policy>, res: &str) -> serde_json::Value {
    let engine = Engine::new(policies);
    let r = resource(res);
    match engine.mutated(&r, &Request::default()) {
        Some(m) => m.root.to_json(),
        None => r.root.to_json(),
    }
}

#[test]
fn json6902_patches_become_json_patch_mutations() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchesJson6902: |-\n        - op: remove\n          path: /spec/priority\n        - op: add\n          path: /spec/tolerations/-\n          value: {key: k, effect: NoSchedule}\n        - op: add\n          path: /metadata/annotations/a~1b\n          value: x\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let muts = m.policies[0]["spec"]["mutations"].clone();
    assert_eq!(muts.as_array().map(Vec::len), Some(3), "{muts}");
    assert_eq!(muts[0]["patchType"], "JSONPatch");
    let e = muts[2]["jsonPatch"]["expression"]
        .as_str()
        .unwrap_or_default();
    // The escaped step stays as written in the path, unescaped in a built map.
    assert!(e.contains("path: '/metadata/annotations/a~1b'"), "{e}");
    assert!(e.contains("value: {'a/b': 'x'}"), "{e}");
    let yaml = to_yaml(&m, "t.yaml", 1);
    let pods = [
        // No tolerations, no annotations, no priority: parents are created, remove is a no-op.
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n",
        // Everything there: appended, set, removed.
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    z: y\nspec:\n  priority: 3\n  tolerations:\n  - key: t\n  containers:\n  - name: c\n    image: x\n",
    ];
    for p in pods {
        let a = mutated_json(load(&text), p);
        let b = mutated_json(load(&yaml), p);
        assert_eq!(a, b, "on {p}\nconverted:\n{yaml}");
        assert_eq!(
            b["spec"]["tolerations"]
                .as_array()
                .map(|t| t.last().cloned()),
            Some(Some(
                serde_json::json!({"key": "k", "effect": "NoSchedule"})
            ))
        );
        assert_eq!(b["metadata"]["annotations"]["a/b"], "x");
        assert!(b["spec"].get("priority").is_none());
    }

    // `-` above the last step, `move`, and variables are refused.
    for (op, why) in [
        (
            "- op: add\n          path: /spec/containers/-/args/-\n          value: a",
            "only map keys and list indexes",
        ),
        (
            "- op: move\n          from: /a\n          path: /b",
            "`move` is not translated",
        ),
        (
            "- op: add\n          path: /a\n          value: \"{{ request.object.x }}\"",
            "variables",
        ),
    ] {
        let m = migrate(&policy(&format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchesJson6902: |-\n        {op}\n"
        )));
        assert!(
            m.unconverted
                .first()
                .is_some_and(|u| u.reason.contains(why)),
            "{op}: {:?}",
            m.unconverted
        );
    }
}

/// List indexes above the last step of a JSON patch path: the index is read in the list (a
/// key in a map), and where the list is shorter or missing the value Kyverno builds is added
/// (missing lists padded with nulls up to the index, as `EnsurePathExistsOnAdd` does).
#[test]
fn json6902_paths_with_list_indexes_above_the_last_step() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    mutate:\n      patchesJson6902: |-\n        - op: add\n          path: /data/items/0/mounts/-\n          value: {name: v}\n        - op: add\n          path: /data/more/2/args/-\n          value: a\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let cm = |data: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n{data}");
    let cases = [
        cm(""),
        cm("data:\n  items:\n  - mounts:\n    - name: w\n  more:\n  - {}\n  - {}\n  - args: [b]\n"),
        cm("data:\n  items:\n  - {}\n  more: []\n"),
        cm("data:\n  items: []\n  more:\n  - {}\n"),
    ];
    for r in &cases {
        let a = mutated_json(load(&text), r);
        let b = mutated_json(load(&yaml), r);
        assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
    }
    let full = mutated_json(load(&yaml), &cases[1]);
    assert_eq!(
        full["data"]["items"][0]["mounts"],
        serde_json::json!([{"name": "w"}, {"name": "v"}])
    );
    assert_eq!(
        full["data"]["more"][2]["args"],
        serde_json::json!(["b", "a"])
    );
    // A null element at the index: the built value is inserted before it (the Kyverno v1.19.0
    // CLI's output for this patch).
    let nulls = mutated_json(
        load(&yaml),
        &cm("data:\n  items:\n  - null\n  more:\n  - {}\n  - {}\n  - null\n"),
    );
    assert_eq!(
        nulls["data"],
        serde_json::json!({
            "items": [{"mounts": [{"name": "v"}]}, null],
            "more": [{}, {}, {"args": ["a"]}, null]
        })
    );
}

#[test]
fn atomic_fields_become_json_patches_with_strategic_merge_semantics() {
    let with_autogen = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          labels:\n            team: a\n        spec:\n          priorityClassName: high\n          nodeSelector:\n            foo: bar\n            color: orange\n          dnsConfig:\n            options:\n            - name: ndots\n              value: \"1\"\n",
    );
    // With pod-controller autogen the JSON patches need the controller copies written out.
    let verdicts = same_mutations(&with_autogen, &pod_and_controllers(""));
    assert_eq!(verdicts, ["pass", "pass", "pass"]);
    let text = with_autogen.replace(
        "    a: b\n",
        "    pod-policies.kyverno.io/autogen-controllers: none\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let muts = m.policies[0]["spec"]["mutations"].clone();
    let arr = muts.as_array().cloned().unwrap_or_default();
    // One ApplyConfiguration for the granular fields, one JSONPatch per atomic-map key and one
    // for the replaced list.
    assert_eq!(arr.len(), 4, "{muts}");
    assert_eq!(arr[0]["patchType"], "ApplyConfiguration");
    let apply = arr[0]["applyConfiguration"]["expression"]
        .as_str()
        .unwrap_or_default();
    // A map of free keys is a map literal even when its keys look like identifiers.
    assert!(apply.contains("labels: {'team': 'a'}"), "{apply}");
    assert!(!apply.contains("nodeSelector"), "{apply}");
    assert!(
        arr[1..].iter().all(|m| m["patchType"] == "JSONPatch"),
        "{muts}"
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    let pods = [
        // No spec fields at all: the parents are created.
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n",
        // A node selector with another key and an overlapping one; options to replace.
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels:\n    k: w\nspec:\n  nodeSelector:\n    zone: z1\n    color: blue\n  dnsConfig:\n    nameservers: [1.1.1.1]\n    options:\n    - name: timeout\n      value: \"2\"\n  containers:\n  - name: c\n    image: x\n",
    ];
    for p in pods {
        let a = mutated_json(load(&text), p);
        let b = mutated_json(load(&yaml), p);
        assert_eq!(a, b, "on {p}\nconverted:\n{yaml}");
        assert_eq!(b["spec"]["nodeSelector"]["color"], "orange");
        assert_eq!(b["spec"]["nodeSelector"]["foo"], "bar");
        assert_eq!(
            b["spec"]["dnsConfig"]["options"],
            serde_json::json!([{"name": "ndots", "value": "1"}])
        );
    }
    let kept = mutated_json(load(&yaml), pods[1]);
    assert_eq!(kept["spec"]["nodeSelector"]["zone"], "z1");
    assert_eq!(kept["metadata"]["labels"]["k"], "w");

    // Atomic fields inside list elements, and deletions in an atomic map, are refused.
    for (overlay, why) in [
        (
            "spec:\n          containers:\n          - name: c\n            envFrom:\n            - configMapRef:\n                name: m",
            "inside a list element",
        ),
        (
            "spec:\n          nodeSelector:\n            foo: null",
            "a `null` (a deletion)",
        ),
        (
            "spec:\n          +(nodeSelector):\n            foo: \"{{request.object.metadata.name}}\"",
            "under `+()`",
        ),
    ] {
        let m = migrate(&policy(&format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        {overlay}\n"
        )));
        assert!(
            m.unconverted
                .first()
                .is_some_and(|u| u.reason.contains(why)),
            "{overlay}: {:?}",
            m.unconverted
        );
    }
}

#[test]
fn add_if_missing_atomic_subtree_becomes_a_guarded_json_patch() {
    // `labelSelector` inside the list is atomic: the whole list is added where it is missing.
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Deployment]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          labels:\n            team: core\n        spec:\n          template:\n            spec:\n              +(topologySpreadConstraints):\n              - maxSkew: 1\n                topologyKey: zone\n                whenUnsatisfiable: DoNotSchedule\n                labelSelector:\n                  matchLabels:\n                    app: a\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let muts = m.policies[0]["spec"]["mutations"].clone();
    assert_eq!(muts[1]["patchType"], "JSONPatch", "{muts}");
    let yaml = to_yaml(&m, "t.yaml", 1);
    let deploy = |meta: &str, spec: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n{meta}spec:\n  selector: {{}}\n{spec}"
        )
    };
    let tsc = "      topologySpreadConstraints:\n      - maxSkew: 2\n        topologyKey: host\n        whenUnsatisfiable: ScheduleAnyway\n";
    let cases = [
        // No template at all: the parents are created.
        (deploy("", ""), "pass"),
        (
            deploy(
                "",
                "  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n",
            ),
            "pass",
        ),
        // Constraints there: left as they are; the label still changes.
        (
            deploy("", &format!("  template:\n    spec:\n{tsc}")),
            "pass",
        ),
        // Nothing to change: Kyverno skips, and so does the conversion.
        (
            deploy(
                "  labels:\n    team: core\n",
                &format!("  template:\n    spec:\n{tsc}"),
            ),
            "skip",
        ),
    ];
    for (d, want) in &cases {
        let a = mutate_outcome(load(&text), d);
        let b = mutate_outcome(load(&yaml), d);
        assert_eq!(a, b, "on {d}\nconverted:\n{yaml}");
        assert_eq!(a.0, *want, "on {d}");
    }
    let added = mutate_outcome(load(&yaml), &cases[0].0).1;
    assert_eq!(
        added["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["labelSelector"],
        serde_json::json!({"matchLabels": {"app": "a"}})
    );
}

#[test]
fn generate_data_becomes_a_generating_policy() {
    let text = policy(
        "  - name: g\n    match:\n      any:\n      - resources:\n          kinds: [Namespace]\n    generate:\n      apiVersion: v1\n      kind: ConfigMap\n      name: \"{{request.object.metadata.name}}-cm\"\n      namespace: \"{{request.object.metadata.name}}\"\n      synchronize: true\n      data:\n        metadata:\n          labels:\n            team: core\n        data:\n          owner: \"{{request.object.metadata.labels.owner}}\"\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let p = &m.policies[0];
    assert_eq!(p["kind"], "GeneratingPolicy");
    assert_eq!(p["spec"]["evaluation"]["synchronize"]["enabled"], true);
    let e = p["spec"]["generate"][0]["expression"]
        .as_str()
        .expect("expression");
    assert!(
        e.starts_with("generator.Apply((has(object.metadata)"),
        "{e}"
    );
    // Text around a variable: a null piece is Kyverno's text `null`.
    assert!(e.contains("== null ? 'null' : string("), "{e}");
    assert!(e.contains("'labels': {'team': 'core'}"), "{e}");
    assert!(e.contains("'kind': 'ConfigMap'"), "{e}");
    assert!(
        !p["spec"]
            .as_object()
            .is_some_and(|s| s.contains_key("validationActions"))
    );
    load(&to_yaml(&m, "t.yaml", 1));

    let clone = policy(
        "  - name: g\n    match:\n      any:\n      - resources:\n          kinds: [Namespace]\n    generate:\n      apiVersion: v1\n      kind: Secret\n      name: s\n      namespace: x\n      clone:\n        namespace: default\n        name: s\n",
    );
    let m = migrate(&clone);
    assert!(m.policies.is_empty());
    assert_eq!(m.unconverted.len(), 1);
    assert!(
        m.unconverted[0].reason.contains("generate.clone"),
        "{:?}",
        m.unconverted
    );
    let at = SourceFile::new("t", clone.clone()).line_col(m.unconverted[0].span.start);
    assert_eq!((at.line, at.column), (20, 7));
}

#[test]
fn foreach_json_patches_bind_element_and_index() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      foreach:\n      - list: request.object.spec.containers[]\n        preconditions:\n          all:\n          - key: \"{{ element.name }}\"\n            operator: NotEquals\n            value: skip\n        patchesJson6902: |-\n          - op: add\n            path: /spec/containers/{{elementIndex}}/env/-\n            value:\n              name: IMAGE\n              value: \"img-{{ element.image }}\"\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let p = &m.policies[0];
    assert_eq!(p["kind"], "MutatingPolicy");
    // A patchesJson6902 turns Kyverno's autogen off.
    assert_eq!(
        p["spec"]["autogen"]["podControllers"]["controllers"],
        serde_json::json!([])
    );
    let policies = load(&to_yaml(&m, "t.yaml", 1));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: a\n    image: x\n    env:\n    - name: K\n      value: v\n  - name: skip\n    image: y\n  - name: c\n    image: z\n";
    let out = mutated_json(policies, pod);
    let cs = &out["spec"]["containers"];
    assert_eq!(
        cs[0]["env"],
        serde_json::json!([{"name": "K", "value": "v"}, {"name": "IMAGE", "value": "img-x"}])
    );
    assert!(cs[1].get("env").is_none(), "{out}");
    assert_eq!(
        cs[2]["env"],
        serde_json::json!([{"name": "IMAGE", "value": "img-z"}])
    );
    // The same patch on the ClusterPolicy gives the same resource.
    assert_eq!(mutated_json(load(&text), pod), out);

    // A path that does not patch the element's own subtree is refused.
    let other = text.replace("/spec/containers/{{elementIndex}}/env/-", "/spec/volumes/-");
    let m = migrate(&other);
    assert!(
        m.unconverted[0].reason.contains("the list's own path"),
        "{:?}",
        m.unconverted
    );
}

#[test]
fn pod_policies_get_a_replication_controller_copy() {
    let text = pattern_rule("        spec:\n          =(hostNetwork): false\n");
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    assert_eq!(m.policies.len(), 2);
    let rc = &m.policies[1];
    assert_eq!(rc["metadata"]["name"], "p-replicationcontrollers");
    assert_eq!(
        rc["spec"]["matchConstraints"]["resourceRules"][0]["resources"],
        serde_json::json!(["replicationcontrollers"])
    );
    let e = rc["spec"]["validations"][0]["expression"]
        .as_str()
        .unwrap_or_default();
    assert!(e.contains("object.spec.template.spec"), "{e}");
    let bad = "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: r\nspec:\n  template:\n    spec:\n      hostNetwork: true\n      containers:\n      - name: a\n        image: x\n";
    let good = bad.replace("hostNetwork: true", "hostNetwork: false");
    assert_eq!(same_verdicts(&text, &[bad, &good]), ["fail", "pass"]);
    // With autogen limited to Deployments there is no copy.
    let limited = text.replace(
        "    a: b\n",
        "    a: b\n    pod-policies.kyverno.io/autogen-controllers: Deployment\n",
    );
    assert_eq!(migrate(&limited).policies.len(), 1);
}

/// The mutate-phase verdict of `policies` on `res` (rules folded: pass, else error, else
/// skip) and the resource as the phase leaves it.
fn mutate_outcome(
    policies: Vec<crate::policy::Policy>,
    res: &str,
) -> (&'static str, serde_json::Value) {
    let engine = Engine::new(policies);
    let r = resource(res);
    let (patched, responses) = engine.mutate_responses(&r, &Request::default());
    let statuses: Vec<Status> = responses
        .iter()
        .flat_map(|m| m.response.rules.iter().map(|x| x.status))
        .collect();
    let v = if statuses.contains(&Status::Pass) {
        "pass"
    } else if statuses.contains(&Status::Error) {
        "error"
    } else {
        "skip"
    };
    (
        v,
        patched.map_or_else(|| r.root.to_json(), |p| p.root.to_json()),
    )
}

#[test]
fn mutate_skips_where_the_patch_changes_nothing() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Job]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          labels:\n            team: core\n        spec:\n          +(ttlSecondsAfterFinished): 900\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let conds = &m.policies[0]["spec"]["matchConditions"];
    assert_eq!(
        conds[0]["expression"],
        "(!(has(object.metadata) && has(object.metadata.labels) && has(object.metadata.labels.team) && (object.metadata.labels.team == 'core'))) || (!(has(object.spec) && has(object.spec.ttlSecondsAfterFinished)))",
        "{conds}"
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    let job = |meta: &str, spec: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n{meta}spec:\n{spec}  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n"
        )
    };
    let cases = [
        (job("", ""), "pass"),
        (job("  labels:\n    team: core\n", ""), "pass"),
        (job("", "  ttlSecondsAfterFinished: 5\n"), "pass"),
        (
            job(
                "  labels:\n    team: ops\n",
                "  ttlSecondsAfterFinished: 5\n",
            ),
            "pass",
        ),
        // Nothing to change: Kyverno skips ("no patches applied"), and so does the conversion.
        (
            job(
                "  labels:\n    team: core\n",
                "  ttlSecondsAfterFinished: 5\n",
            ),
            "skip",
        ),
    ];
    for (j, want) in cases {
        let a = mutate_outcome(load(&text), &j);
        let b = mutate_outcome(load(&yaml), &j);
        assert_eq!(a, b, "on {j}\nconverted:\n{yaml}");
        assert_eq!(a.0, want, "on {j}");
    }
}

#[test]
fn validate_rules_of_disjoint_kinds_become_one_policy() {
    // A Pod rule (which the ClusterPolicy's autogen copies for controllers) and two
    // ConfigMap rules: one ValidatingPolicy, each rule's validation guarded by its kinds,
    // the controller copies written out and the policy's own autogen off.
    let text = policy(
        "  - name: pods\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: pods need app\n      pattern:\n        metadata:\n          labels:\n            app: \"?*\"\n  - name: cm-team\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    validate:\n      message: cm need team\n      pattern:\n        metadata:\n          labels:\n            team: \"?*\"\n  - name: cm-data\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    preconditions:\n      all:\n      - key: \"{{ request.object.metadata.labels.team || '' }}\"\n        operator: Equals\n        value: core\n    validate:\n      message: core cm need data\n      pattern:\n        data:\n          k: \"?*\"\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    assert_eq!(m.policies.len(), 1, "{:?}", m.policies);
    let p = &m.policies[0];
    assert_eq!(p["metadata"]["name"], "p");
    assert_eq!(
        p["spec"]["autogen"]["podControllers"]["controllers"],
        json!([])
    );
    let kinds = p["spec"]["matchConstraints"]["resourceRules"].to_string();
    for k in [
        "pods",
        "deployments",
        "cronjobs",
        "replicationcontrollers",
        "configmaps",
    ] {
        assert!(kinds.contains(k), "{k} in {kinds}");
    }
    let pod = |labels: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n{labels}spec:\n  containers:\n  - name: c\n    image: x\n"
        )
    };
    let deploy = |labels: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector: {{}}\n  template:\n    metadata:\n      name: t\n{labels}    spec:\n      containers:\n      - name: c\n        image: x\n"
        )
    };
    let cm = |labels: &str, data: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n{labels}{data}")
    };
    let resources = [
        pod("  labels:\n    app: x\n"),
        pod(""),
        deploy("      labels:\n        app: x\n"),
        deploy(""),
        cm("  labels:\n    team: dev\n", ""),
        cm("  labels:\n    team: core\n", ""),
        cm("  labels:\n    team: core\n", "data:\n  k: v\n"),
        cm("", "data:\n  k: v\n"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n".to_owned(),
    ];
    let refs: Vec<&str> = resources.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&text, &refs),
        [
            "pass", "fail", "pass", "fail", "pass", "fail", "pass", "fail", "skip"
        ]
    );
}

#[test]
fn mutate_rules_of_disjoint_kinds_become_one_policy() {
    let text = policy(
        "  - name: jobs\n    match:\n      any:\n      - resources:\n          kinds: [Job]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          template:\n            metadata:\n              labels:\n                keep: \"true\"\n  - name: cronjobs\n    match:\n      any:\n      - resources:\n          kinds: [CronJob]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          jobTemplate:\n            spec:\n              template:\n                metadata:\n                  labels:\n                    keep: \"true\"\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    assert_eq!(m.policies.len(), 1);
    let p = &m.policies[0];
    assert_eq!(p["metadata"]["name"], "p");
    assert_eq!(
        p["spec"]["matchConstraints"]["resourceRules"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    let resources = [
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n".to_owned(),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    metadata:\n      labels:\n        keep: \"true\"\n    spec:\n      containers:\n      - name: c\n        image: x\n".to_owned(),
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - name: c\n            image: x\n".to_owned(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".to_owned(),
    ];
    let mut verdicts = Vec::new();
    for r in &resources {
        let a = mutate_outcome(load(&text), r);
        let b = mutate_outcome(load(&yaml), r);
        assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
        verdicts.push(a.0);
    }
    assert_eq!(verdicts, ["pass", "skip", "pass", "skip"]);
}

#[test]
fn foreach_strategic_merge_of_map_leaves_becomes_json_patches() {
    let text = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n  annotations:\n    pod-policies.kyverno.io/autogen-controllers: none\nspec:\n  rules:\n  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      foreach:\n      - list: request.object.spec.[initContainers, containers][]\n        patchStrategicMerge:\n          metadata:\n            annotations:\n              example.com/{{element.name}}: \"on\"\n";
    let m = migrate(text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let pods = [
        // No annotations: the map is created, one key per container of both lists.
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  initContainers:\n  - name: i\n    image: x\n  containers:\n  - name: c\n    image: x\n",
            "pass",
        ),
        // One key there already, the other added.
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    example.com/c: \"on\"\n    z: y\nspec:\n  initContainers:\n  - name: i\n    image: x\n  containers:\n  - name: c\n    image: x\n",
            "pass",
        ),
        // Everything there: Kyverno applies no patch and skips; so does the conversion.
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    example.com/c: \"on\"\nspec:\n  containers:\n  - name: c\n    image: x\n",
            "skip",
        ),
    ];
    for (p, want) in pods {
        let a = mutate_outcome(load(text), p);
        let b = mutate_outcome(load(&yaml), p);
        assert_eq!(a, b, "on {p}\nconverted:\n{yaml}");
        assert_eq!(a.0, want, "on {p}");
    }
    // The ClusterPolicy's autogen copies the rule for controllers: the copies are written.
    let auto = text.replace(
        "  annotations:\n    pod-policies.kyverno.io/autogen-controllers: none\n",
        "",
    );
    assert_eq!(
        same_mutations(&auto, &pod_and_controllers("")),
        ["pass", "pass", "pass"]
    );
    // A value with variables is refused at its line.
    let var = text.replace("\"on\"", "\"{{element.image}}\"");
    let m = migrate(&var);
    assert!(
        m.unconverted[0].reason.contains("a value with variables"),
        "{:?}",
        m.unconverted
    );
}

#[test]
fn mutate_condition_anchor_on_a_map_path_gates_the_whole_patch() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Deployment]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          template:\n            metadata:\n              annotations:\n                (inject): \"true\"\n              labels:\n                injected: \"yes\"\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let deploy = |ann: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n    matchLabels:\n      a: b\n  template:\n    metadata:\n{ann}      labels:\n        a: b\n    spec:\n      containers:\n      - name: c\n        image: x\n"
        )
    };
    let cases = [
        (
            deploy("      annotations:\n        inject: \"true\"\n"),
            "pass",
        ),
        (
            deploy("      annotations:\n        inject: \"false\"\n"),
            "skip",
        ),
        (deploy(""), "skip"),
    ];
    for (d, want) in cases {
        let a = mutate_outcome(load(&text), &d);
        let b = mutate_outcome(load(&yaml), &d);
        assert_eq!(a, b, "on {d}\nconverted:\n{yaml}");
        assert_eq!(a.0, want, "on {d}");
    }
}

/// The mutate outcomes of `original` and its conversion agree on each resource; returns
/// the verdicts.
fn same_mutations(original: &str, resources: &[String]) -> Vec<&'static str> {
    let m = migrate(original);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let mut out = Vec::new();
    for r in resources {
        let a = mutate_outcome(load(original), r);
        let b = mutate_outcome(load(&yaml), r);
        assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
        out.push(a.0);
    }
    out
}

/// A Pod, a Deployment and a CronJob, each with one container `c` and the template
/// metadata `meta` (indented as under `metadata:` of a Pod).
fn pod_and_controllers(meta: &str) -> Vec<String> {
    let indent = |n: usize| {
        meta.lines()
            .map(|l| format!("{}{l}\n", " ".repeat(n)))
            .collect::<String>()
    };
    vec![
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n{}spec:\n  volumes:\n  - name: v\n    persistentVolumeClaim:\n      claimName: c\n  containers:\n  - name: c\n    image: x\n",
            indent(0)
        ),
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector: {{}}\n  template:\n    metadata:\n      labels:\n        app: d\n{}    spec:\n      volumes:\n      - name: w\n        persistentVolumeClaim:\n          claimName: c\n      containers:\n      - name: c\n        image: x\n",
            indent(4)
        ),
        format!(
            "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: j\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        metadata:\n          labels:\n            app: j\n{}        spec:\n          containers:\n          - name: c\n            image: x\n",
            indent(8)
        ),
    ]
}

#[test]
fn pod_controller_copies_are_written_where_mutating_policy_autogen_would_not_rewrite() {
    // A variable reading the Pod spec: a MutatingPolicy's autogen would leave it reading
    // `object.spec.volumes` on a Deployment.
    let vars = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    context:\n    - name: vols\n      variable:\n        jmesPath: join(',', request.object.spec.volumes[].name)\n        default: ''\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          annotations:\n            vols: \"{{ vols }}\"\n",
    );
    let m = migrate(&vars);
    let p = &m.policies[0]["spec"];
    assert_eq!(
        p["autogen"]["podControllers"]["controllers"],
        serde_json::json!([]),
        "{p}"
    );
    let names: Vec<&str> = p["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(names, ["vols", "vols_1", "vols_2"]);
    assert_eq!(
        same_mutations(&vars, &pod_and_controllers("")),
        ["pass", "pass", "pass"]
    );
    // A foreach of map leaves becomes JSON patches, which that autogen does not rewrite.
    let foreach = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      foreach:\n      - list: request.object.spec.containers\n        patchStrategicMerge:\n          metadata:\n            labels:\n              a: b\n",
    );
    assert_eq!(
        same_mutations(&foreach, &pod_and_controllers("")),
        ["pass", "pass", "pass"]
    );
    assert_eq!(
        same_mutations(&foreach, &pod_and_controllers("  labels:\n    a: b\n")[..1]),
        ["skip"]
    );
    // A policy whose autogen makes no copies (a rule selects by name): nothing to write.
    let named = foreach.replace("kinds: [Pod]\n", "kinds: [Pod]\n          names: [p]\n");
    let m = migrate(&named);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let p = &m.policies[0]["spec"];
    assert_eq!(
        p["autogen"]["podControllers"]["controllers"],
        serde_json::json!([]),
        "{p}"
    );
    assert!(!to_yaml(&m, "t.yaml", 1).contains("deployments"));
}

/// Kyverno's autogen (`CanAutoGen`, read from the loaded policy) makes no pod-controller
/// rules of a policy with a generate rule or a `patchesJson6902` mutate rule, nor of one that
/// names no Pod or controller kind exactly (`v1/Pod` is not `Pod`): a Pod mutate rule whose
/// conversion needs JSON patches (an atomic `nodeSelector`) then gets no controller copies,
/// and the MutatingPolicy's own autogen is off, so a Deployment is left alone on both sides.
#[test]
fn no_controller_copies_where_kyverno_autogen_makes_none() {
    let node_selector = "  - name: m\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          nodeSelector:\n            disk: ssd\n";
    let generate = "  - name: gen\n    match:\n      any:\n      - resources:\n          kinds: [Namespace]\n    generate:\n      apiVersion: v1\n      kind: ConfigMap\n      name: cm\n      namespace: \"{{request.object.metadata.name}}\"\n      data:\n        data:\n          a: b\n";
    let json6902 = "  - name: j\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    mutate:\n      patchesJson6902: |-\n        - op: add\n          path: /metadata/labels\n          value: {a: b}\n";
    let cases = [
        policy(&format!("{generate}{node_selector}")),
        policy(&format!("{json6902}{node_selector}")),
        policy(&node_selector.replace("kinds: [Pod]", "kinds: [v1/Pod]")),
    ];
    for text in &cases {
        let m = migrate(text);
        assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
        let pods: Vec<&J> = m
            .policies
            .iter()
            .filter(|p| {
                p["kind"] == "MutatingPolicy"
                    && p["spec"]["matchConstraints"]["resourceRules"][0]["resources"]
                        == serde_json::json!(["pods"])
            })
            .collect();
        assert_eq!(pods.len(), 1, "{:?}", m.policies);
        let spec = &pods[0]["spec"];
        assert_eq!(
            spec["autogen"]["podControllers"]["controllers"],
            serde_json::json!([]),
            "{spec}"
        );
        let yaml = to_yaml(&m, "t.yaml", 1);
        assert!(!yaml.contains("deployments"), "{yaml}");
        assert!(!yaml.contains("pod-controller copies"), "{yaml}");
        // The Pod gets the node selector; the Deployment and CronJob are not mutated.
        let converted = emit(pods[0]);
        for (r, want) in pod_and_controllers("").iter().zip(["pass", "skip", "skip"]) {
            let a = mutate_outcome(load(text), r);
            let b = mutate_outcome(load(&converted), r);
            assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
            assert_eq!(a.0, want, "on {r}");
        }
    }
    // With nothing keeping autogen off, the same rule gets Kyverno's copies written out.
    let m = migrate(&policy(node_selector));
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert!(yaml.contains("deployments"), "{yaml}");
}

/// Overlay list elements made of global anchors (`- <(emptyDir): {}`, `- hostPath: {<(path):
/// "*"}`) are conditions on the resource's list, removed from the patch: Kyverno skips the
/// patch where the list is missing or no element meets them (an empty list meets them: the
/// Kyverno v1.19.0 CLI patches a Pod with `volumes: []` and skips one without). Two
/// rules with different conditions: the policy is skipped where neither rule applies.
#[test]
fn global_anchors_in_list_elements_are_conditions() {
    let rule = |name: &str, element: &str| {
        format!(
            "  - name: {name}\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          annotations:\n            +(evict): \"true\"\n        spec:\n          volumes:\n{element}"
        )
    };
    let text = policy(&format!(
        "{}{}",
        rule("empty-dir", "          - <(emptyDir): {}\n"),
        rule(
            "host-path",
            "          - hostPath:\n              <(path): \"/data/*\"\n"
        )
    ));
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert!(!yaml.contains("volumes: ["), "{yaml}");
    let pod = |annotations: &str, volumes: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n{annotations}spec:\n  containers:\n  - name: c\n    image: x\n{volumes}"
        )
    };
    let cases = [
        (
            pod("", "  volumes:\n  - name: v\n    emptyDir: {}\n"),
            "pass",
        ),
        (
            pod(
                "",
                "  volumes:\n  - name: v\n    hostPath:\n      path: /data/x\n",
            ),
            "pass",
        ),
        (
            pod(
                "",
                "  volumes:\n  - name: v\n    hostPath:\n      path: /etc\n",
            ),
            "skip",
        ),
        (
            pod(
                "",
                "  volumes:\n  - name: v\n    configMap:\n      name: c\n",
            ),
            "skip",
        ),
        (pod("", ""), "skip"),
        (pod("", "  volumes: []\n"), "pass"),
        (
            pod(
                "  annotations:\n    evict: \"false\"\n",
                "  volumes:\n  - name: v\n    emptyDir: {}\n",
            ),
            "skip",
        ),
    ];
    for (r, want) in &cases {
        let a = mutate_outcome(load(&text), r);
        let b = mutate_outcome(load(&yaml), r);
        assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
        assert_eq!(a.0, *want, "on {r}");
    }
}

/// A Pod rule whose ApplyConfiguration is guarded (`+(k)`: `… ? Object{} : Object{…}`) or
/// sets a typed `Object.metadata{…}`: a MutatingPolicy's autogen would not move it under the
/// pod template (or would leave a type name Kubernetes rejects there), so Kyverno's
/// pod-controller copies are written out and every controller is patched as Kyverno does.
#[test]
fn pod_metadata_patches_get_controller_copies() {
    let add = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        metadata:\n          annotations:\n            +(evict): \"true\"\n",
    );
    let m = migrate(&add);
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert!(yaml.contains("deployments"), "{yaml}");
    assert_eq!(
        same_mutations(&add, &pod_and_controllers("")),
        ["pass", "pass", "pass"]
    );
    assert_eq!(
        same_mutations(&add, &pod_and_controllers("  annotations:\n    evict: x\n")),
        ["skip", "skip", "skip"]
    );
}

/// Atomic lists in the elements a `(name)` condition selects (`envFrom`,
/// `securityContext.capabilities.drop`): the strategic merge replaces them, so each selected
/// element gets a `JSONPatch` `add` of the whole list (missing parents created), next to the
/// ApplyConfiguration of the rest of the element.
#[test]
fn atomic_lists_in_selected_list_elements_become_json_patches() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          containers:\n          - (name): \"?*\"\n            envFrom:\n            - configMapRef:\n                name: env\n            securityContext:\n              privileged: false\n              capabilities:\n                drop: [ALL]\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert!(yaml.contains("JSONPatch"), "{yaml}");
    let pod = |containers: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n{containers}"
        )
    };
    let cases = [
        pod("  - name: a\n    image: x\n"),
        pod(
            "  - name: a\n    image: x\n    envFrom:\n    - secretRef:\n        name: s\n    securityContext:\n      capabilities:\n        add: [NET_ADMIN]\n        drop: [NET_RAW]\n  - name: b\n    image: z\n    securityContext:\n      runAsUser: 1\n",
        ),
    ];
    for r in &cases {
        let a = mutated_json(load(&text), r);
        let b = mutated_json(load(&yaml), r);
        assert_eq!(a, b, "on {r}\nconverted:\n{yaml}");
        for c in b["spec"]["containers"].as_array().into_iter().flatten() {
            assert_eq!(
                c["envFrom"],
                serde_json::json!([{"configMapRef": {"name": "env"}}])
            );
            assert_eq!(
                c["securityContext"]["capabilities"]["drop"],
                serde_json::json!(["ALL"])
            );
        }
    }
    // Controllers: the copies Kyverno's autogen makes are written out and agree too.
    assert_eq!(
        same_mutations(&text, &pod_and_controllers("")),
        ["pass", "pass", "pass"]
    );
}

fn pull_secrets_pod(secrets: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x\n{secrets}"
    )
}

/// List elements the schema marks atomic (`imagePullSecrets` holds atomic references), merged
/// by key: an ApplyConfiguration may not set them, so the whole merged list is one JSON patch
/// `add`, as kyaml's merge builds it (overlay keys first, then the resource's other keys, each
/// key once), with Kyverno's skip where it equals the resource's list.
#[test]
fn atomic_list_elements_merged_by_key_become_one_json_patch() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          imagePullSecrets:\n          - name: regcred\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let muts = m.policies[0]["spec"]["mutations"].to_string();
    assert!(
        muts.contains("path: '/spec/imagePullSecrets', value: r"),
        "{muts}"
    );
    let conds = m.policies[0]["spec"]["matchConditions"].to_string();
    assert!(conds.contains("!= ds"), "{conds}");
    let pods: Vec<String> = [
        "",
        "  imagePullSecrets: null\n",
        "  imagePullSecrets:\n  - name: other\n",
        "  imagePullSecrets:\n  - name: other\n  - name: regcred\n",
        "  imagePullSecrets:\n  - name: regcred\n  - name: other\n",
    ]
    .iter()
    .map(|s| pull_secrets_pod(s))
    .collect();
    assert_eq!(
        same_mutations(&text, &pods),
        ["pass", "pass", "pass", "pass", "skip"]
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    let (v, out) = mutate_outcome(load(&yaml), &pods[3]);
    assert_eq!(v, "pass");
    assert_eq!(
        out["spec"]["imagePullSecrets"],
        serde_json::json!([{"name": "regcred"}, {"name": "other"}])
    );
    // A key the resource repeats is left once (the Kyverno v1.19.0 CLI's result).
    let repeated = pull_secrets_pod(
        "  imagePullSecrets:\n  - name: regcred\n  - name: other\n  - name: regcred\n",
    );
    let (v, out) = mutate_outcome(load(&yaml), &repeated);
    assert_eq!(v, "pass");
    assert_eq!(
        out["spec"]["imagePullSecrets"],
        serde_json::json!([{"name": "regcred"}, {"name": "other"}])
    );
    // An element without a name, which the merge would take as the overlay's match: an error.
    let nameless = pull_secrets_pod("  imagePullSecrets:\n  - {}\n");
    assert_eq!(mutate_outcome(load(&yaml), &nameless).0, "error");
    // Controllers: the copies Kyverno's autogen makes are written out and agree too.
    assert_eq!(
        same_mutations(&text, &pod_and_controllers("")),
        ["pass", "pass", "pass"]
    );
}

/// Elements with more than the merge key, or a key twice, are refused at the element.
#[test]
fn atomic_list_elements_beyond_the_merge_key_are_refused() {
    for overlay in [
        "          - name: regcred\n            extra: x\n",
        "          - name: a\n          - name: a\n",
        "          - name: \"{{ request.object.metadata.name }}\"\n",
    ] {
        let m = migrate(&policy(&format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      patchStrategicMerge:\n        spec:\n          imagePullSecrets:\n{overlay}"
        )));
        assert!(m.policies.is_empty(), "{overlay}");
        assert!(
            m.unconverted[0]
                .reason
                .contains("the elements of `spec.imagePullSecrets` are atomic"),
            "{:?}",
            m.unconverted
        );
    }
}

/// A Pod mutate rule whose copies are written out, with preconditions reading `images`:
/// the MutatingPolicy's match condition `applies` reads it, so the policy is skipped where
/// Kyverno skips the rule.
#[test]
fn merged_mutate_rule_with_variable_preconditions_is_matched_where_it_applies() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    preconditions:\n      all:\n      - key: docker.io\n        operator: AnyIn\n        value: \"{{ images.containers.*.registry }}\"\n    mutate:\n      patchStrategicMerge:\n        spec:\n          imagePullSecrets:\n          - name: regcred\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let conds = &m.policies[0]["spec"]["matchConditions"];
    let applies = conds
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "applies"))
        .expect("an `applies` match condition");
    assert!(
        applies["expression"]
            .as_str()
            .is_some_and(|e| e.contains("variables.images.containers")),
        "{applies}"
    );
    let other = pull_secrets_pod("").replace("image: x", "image: reg.io/x");
    assert_eq!(
        same_mutations(&text, &[pull_secrets_pod(""), other]),
        ["pass", "skip"]
    );
}

#[test]
fn variables_are_renamed_as_whole_references_outside_strings() {
    let r = [("a".to_owned(), "a_1".to_owned())];
    assert_eq!(
        cel_text::rename_variables(
            "variables.a + variables.ab + 'variables.a' + x.variables.a + \"\\\"variables.a\"",
            &r
        ),
        "variables.a_1 + variables.ab + 'variables.a' + x.variables.a + \"\\\"variables.a\""
    );
}

#[test]
fn foreach_strategic_merge_into_the_element_of_its_name() {
    // Each element merges into the list's element of its name: `+(k)` where missing, plain
    // leaves set, a null value (both fields missing) creating nothing.
    let text = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n  annotations:\n    pod-policies.kyverno.io/autogen-controllers: none\nspec:\n  rules:\n  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      foreach:\n      - list: request.object.spec.containers\n        patchStrategicMerge:\n          spec:\n            containers:\n            - (name): \"{{element.name}}\"\n              resources:\n                limits:\n                  +(memory): \"{{element.resources.limits.memory || element.resources.requests.memory}}\"\n                requests:\n                  +(cpu): 100m\n";
    let m = migrate(text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    // Kyverno v1.19.0 compiles a JSONPatch expression only when its type is exactly
    // `list(JSONPatch)`: the branch for elements without a name is such a list, never `dyn`.
    assert!(
        yaml.contains("[JSONPatch{op: string(int(") && !yaml.contains("? dyn(int("),
        "{yaml}"
    );
    let pod = |resources: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    image: y\n{resources}"
        )
    };
    for r in [
        pod(""),
        pod("    resources:\n      requests:\n        memory: 1Gi\n"),
        pod(
            "    resources:\n      limits:\n        memory: 2Gi\n      requests:\n        cpu: 1\n",
        ),
    ] {
        assert_eq!(
            mutated_json(load(text), &r),
            mutated_json(load(&yaml), &r),
            "on {r}\nconverted:\n{yaml}"
        );
    }
    // Ascending order would reorder the list (each merge moves its element first).
    let asc = text.replace(
        "        patchStrategicMerge:",
        "        order: Ascending\n        patchStrategicMerge:",
    );
    assert!(migrate(&asc).unconverted[0].reason.contains("descending"));
    // With the ClusterPolicy's autogen on, its pod-controller copies are converted too.
    let auto = text.replace(
        "  annotations:\n    pod-policies.kyverno.io/autogen-controllers: none\n",
        "",
    );
    let m = migrate(&auto);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n      - name: b\n        image: y\n        resources:\n          requests:\n            memory: 1Gi\n";
    assert_ne!(
        mutated_json(load(&auto), deployment),
        resource(deployment).root.to_json()
    );
    assert_eq!(
        mutated_json(load(&auto), deployment),
        mutated_json(load(&yaml), deployment),
        "converted:\n{yaml}"
    );
}

#[test]
fn foreach_strategic_merge_with_pod_autogen_reports_the_overlay_first() {
    // A list in the overlay: reported as the list, which copies alone would not convert.
    let list = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      foreach:\n      - list: request.object.spec.containers\n        patchStrategicMerge:\n          spec:\n            containers:\n            - (name): x\n              image: x\n",
    );
    let m = migrate(&list);
    assert_eq!(m.unconverted.len(), 1, "{:?}", m.unconverted);
    let u = &m.unconverted[0];
    assert!(u.reason.contains("no lists"), "{}", u.reason);
    let at = list.find("(name)").expect("the list") as u32;
    assert_eq!(u.span.start, at, "{}", u.reason);
}

fn drop_rule(value: &str, key: &str) -> String {
    policy(&format!(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      foreach:\n      - list: request.object.spec.containers\n        deny:\n          conditions:\n            all:\n            - key: {key}\n              operator: AnyNotIn\n              value: \"{value}\"\n"
    ))
}

fn pod_dropping(drop: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n    securityContext:\n      capabilities:\n        drop: {drop}\n"
    )
}

#[test]
fn to_upper_compared_with_ascii_literals_is_folded_as_go_does() {
    let p = drop_rule(
        "{{ element.securityContext.capabilities.drop[].to_upper(@) || `[]` }}",
        "ALL",
    );
    let e = only_expression(&migrate(&p));
    assert!(e.contains(".upperAscii()"), "{e}");
    // `ı` and `ſ` are the runes Go's ToUpper maps into ASCII besides the letters (`ſ` →
    // `S`); wildcards in the resource's entries match the key.
    let pods: Vec<String> = [
        "[all]", "[aLl]", "[none]", "['ALſ']", "['A*']", "['?LL']", "[]",
    ]
    .iter()
    .map(|d| pod_dropping(d))
    .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&p, &refs),
        ["pass", "pass", "fail", "fail", "pass", "pass", "fail"]
    );
    let s = drop_rule(
        "{{ element.securityContext.capabilities.drop[].to_upper(@) || `[]` }}",
        "SYS",
    );
    let pods: Vec<String> = ["['ſyſ']", "['sys']", "['ſyx']"]
        .iter()
        .map(|d| pod_dropping(d))
        .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(same_verdicts(&s, &refs), ["pass", "pass", "fail"]);
}

#[test]
fn to_upper_elsewhere_is_refused() {
    // Compared with another value from the resource, or computed on: refused.
    for (value, key) in [
        (
            "{{ element.securityContext.capabilities.drop[].to_upper(@) }}",
            "\"{{ element.name }}\"",
        ),
        ("{{ [to_upper(element.name)] }}", "ALL"),
        (
            "{{ element.securityContext.capabilities.drop[].to_upper(@) }}",
            "Ä",
        ),
    ] {
        let m = migrate(&drop_rule(value, key));
        assert_eq!(m.unconverted.len(), 1, "{value} {key}");
        assert!(
            m.unconverted[0].reason.contains("to_upper"),
            "{:?}",
            m.unconverted[0].reason
        );
    }
}

#[test]
fn membership_in_a_list_from_the_resource_matches_its_wildcards() {
    let p = drop_rule(
        "{{ element.securityContext.capabilities.drop[] || `[]` }}",
        "ALL",
    );
    let pods: Vec<String> = ["['*']", "['AL?']", "['A.L']", "['AL']", "[ALL]", "['a*']"]
        .iter()
        .map(|d| pod_dropping(d))
        .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&p, &refs),
        ["pass", "pass", "fail", "fail", "pass", "fail"]
    );
}

fn api_call_rule(call: &str) -> String {
    policy(&format!(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Deployment]\n    context:\n    - name: hpas\n      apiCall:\n{call}\n    validate:\n      message: m\n      deny:\n        conditions:\n          all:\n          - key: \"{{{{ request.object.metadata.name }}}}\"\n            operator: AnyNotIn\n            value: \"{{{{ hpas }}}}\"\n"
    ))
}

#[test]
fn api_call_get_and_list_become_resource_library_calls() {
    let list = api_call_rule(
        "        urlPath: \"/apis/autoscaling/v1/namespaces/{{ request.namespace }}/horizontalpodautoscalers\"\n        jmesPath: \"items[].spec.scaleTargetRef.name\"",
    );
    let m = migrate(&list);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let vars = &m.policies[0]["spec"]["variables"];
    assert_eq!(vars[0]["name"], "hpasResponse");
    let call = vars[0]["expression"].as_str().unwrap_or_default();
    assert!(
        call.contains("resource.List('autoscaling/v1', 'horizontalpodautoscalers', ")
            && call.contains("== '' ? dyn(int("),
        "{call}"
    );
    assert!(
        vars[1]["expression"]
            .as_str()
            .unwrap_or_default()
            .contains("variables.hpasResponse.items.filter("),
        "{vars}"
    );
    // The variable is known to be a list: membership is tested, not refused.
    assert!(only_expression(&m).contains("in variables.hpas"));
    load(&to_yaml(&m, "t.yaml", 1));

    let get = api_call_rule(
        "        urlPath: /api/v1/namespaces/kube-system/configmaps/cfg\n        jmesPath: \"data.names\"",
    )
    .replace("AnyNotIn", "Equals");
    let m = migrate(&get);
    let call = m.policies[0]["spec"]["variables"][0]["expression"].clone();
    assert_eq!(
        call, "resource.Get('v1', 'configmaps', 'kube-system', 'cfg')",
        "{call}"
    );
}

#[test]
fn api_call_refusals() {
    for (call, why) in [
        (
            "        urlPath: /api/v1/pods\n        method: POST",
            "method POST",
        ),
        (
            "        urlPath: /api/v1/pods\n        jmesPath: items\n        default: []",
            "`default`",
        ),
        (
            "        urlPath: \"/api/v1/pods?labelSelector=a\"\n        jmesPath: items",
            "query",
        ),
        (
            "        urlPath: /api/v1/pods\n        jmesPath: \"items[].kind\"",
            "`items`",
        ),
        ("        urlPath: /api/v1/pods", "without `jmesPath`"),
        (
            "        urlPath: /api/v1/namespaces/a/pods/b/status",
            "subresource",
        ),
        (
            "        urlPath: \"/api/v1/namespaces/x-{{ request.namespace }}/pods\"\n        jmesPath: items",
            "mixing",
        ),
        ("        service:\n          url: http://x", "`service`"),
    ] {
        let m = migrate(&api_call_rule(call));
        assert_eq!(m.unconverted.len(), 1, "{call}");
        assert!(
            m.unconverted[0].reason.contains(why),
            "{call}: {}",
            m.unconverted[0].reason
        );
    }
}

#[test]
fn list_variables_take_membership_and_a_null_one_is_an_error() {
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    context:\n    - name: names\n      variable:\n        jmesPath: request.object.spec.volumes[].name\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.metadata.name }}\"\n            operator: AnyIn\n            value: \"{{ names }}\"\n          - key: \"{{ request.object.metadata.name }}\"\n            operator: AnyNotIn\n            value: \"{{ names }}\"\n",
    );
    let bare = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n";
    let with = format!("{bare}  volumes:\n  - name: a\n");
    assert_eq!(same_verdicts(&p, &[bare, &with]), ["error", "fail"]);
}

#[test]
fn conversions_type_check_as_kubernetes_cel_does() {
    // Kyverno v1.19.0's CLI compiles with Kubernetes' type checker: a string-typed key
    // (`request.operation`) cannot be a comprehension's range, a typed list or string cannot
    // be compared with null, literals must be homogeneous, and a match condition cannot read
    // the policy's variables.
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n    context:\n    - name: names\n      variable:\n        jmesPath: \"request.object.data.keys(@)\"\n    preconditions:\n      all:\n      - key: \"{{ request.operation }}\"\n        operator: AnyIn\n        value: [CREATE]\n      - key: \"{{ length(names) }}\"\n        operator: GreaterThan\n        value: 0\n    validate:\n      message: m\n      deny: {}\n",
    );
    let m = migrate(&text);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let conds = m.policies[0]["spec"]["matchConditions"].to_string();
    assert!(conds.contains("dyn(request.operation).exists("), "{conds}");
    assert!(!conds.contains("variables."), "{conds}");
    assert_eq!(
        jmes::literal(&serde_json::json!({"a": "x", "b": {"c": "d"}, "l": [1, 2]})),
        "{'a': dyn('x'), 'b': dyn({'c': 'd'}), 'l': dyn([1, 2])}"
    );
    assert_eq!(
        jmes::literal(&serde_json::json!([{"c": "d"}, {"e": "f"}])),
        "[{'c': 'd'}, {'e': 'f'}]"
    );
    assert_eq!(cel_text::nullable("object.spec.x"), "object.spec.x");
    assert_eq!(
        cel_text::nullable("object['a-b'].c[0]"),
        "object['a-b'].c[0]"
    );
    assert_eq!(
        cel_text::nullable("request.namespace"),
        "dyn(request.namespace)"
    );
    assert_eq!(
        cel_text::nullable("(a.filter(x, x))"),
        "dyn(a.filter(x, x))"
    );
    assert_eq!(
        cel_text::inline_variables(
            "variables.b > 0",
            &[
                ("a".to_owned(), "object.x".to_owned()),
                ("b".to_owned(), "size(variables.a)".to_owned())
            ]
        ),
        "(size((object.x))) > 0"
    );
    // The variable read without a default errors where null, with a text that is no
    // constant (Kyverno's compiler folds constants and would reject `int('…')` on load).
    let vars = m.policies[0]["spec"]["variables"].to_string();
    assert!(
        vars.contains("int('failed to add context entry for variable names since it evaluated to nil' + string(request.operation))"),
        "{vars}"
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    load(&yaml);
}

#[test]
fn deny_quantity_comparisons_keep_the_cluster_policys_verdicts() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.metadata.annotations.mem }}\"\n            operator: GreaterThan\n            value: 2Gi\n          - key: \"{{ request.object.metadata.annotations.low }}\"\n            operator: LessThanOrEquals\n            value: 100Mi\n",
    );
    let e = only_expression(&migrate(&text));
    assert!(
        e.contains("quantity(object.metadata.annotations.mem).compareTo(quantity('2Gi')) > 0"),
        "{e}"
    );
    let pods: Vec<String> = ["1Gi", "2049Mi", "2048Mi", "lots", "5m", "3e9", "1.2.3"]
        .iter()
        .map(|m| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    mem: \"{m}\"\n    low: \"{m}\"\nspec:\n  containers:\n  - name: c\n    image: nginx:1.2\n"
            )
        })
        .collect();
    let pods: Vec<&str> = pods.iter().map(String::as_str).collect();
    // The Kyverno v1.19.0 CLI's verdicts on these pods (`5m` is 5 milli as a quantity: at
    // most 100Mi; `3e9` is more than 2Gi; text and versions meet no quantity operator).
    assert_eq!(
        same_verdicts(&text, &pods),
        ["pass", "fail", "pass", "pass", "fail", "fail", "pass"]
    );
}

#[test]
fn deny_duration_comparisons_keep_the_cluster_policys_verdicts() {
    let text = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.metadata.annotations.mem }}\"\n            operator: GreaterThan\n            value: 8h\n          - key: \"{{ request.object.metadata.annotations.low }}\"\n            operator: LessThanOrEquals\n            value: 90s\n",
    );
    let pods: Vec<String> = [
        "\"1h\"", "\"9h\"", "\"8h\"", "lots", "\"5m\"", "\"3e4\"", "1.2.3", "\"0\"", "\"100\"",
        "100", "100.7", "\"28801\"", "\"1h30m\"", "\"-1h\"",
    ]
    .iter()
    .map(|m| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    mem: {m}\n    low: {m}\nspec:\n  containers:\n  - name: c\n    image: nginx:1.2\n"
        )
    })
    .collect();
    let pods: Vec<&str> = pods.iter().map(String::as_str).collect();
    // The Kyverno v1.19.0 CLI's verdicts on these pods: a duration string is a duration, a
    // float string (`3e4`, `28801`) or number seconds, other text meets no operator.
    let (f, p) = ("fail", "pass");
    assert_eq!(
        same_verdicts(&text, &pods),
        [p, f, p, p, p, f, p, f, p, p, p, f, p, f]
    );
}

fn pod_labelled(labels: &str, volumes: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels:\n{labels}\nspec:\n  containers:\n  - name: c\n    image: x\n    volumeMounts:\n    - name: h\n      mountPath: /h\n{volumes}"
    )
}

#[test]
fn nested_substitutions_splice_text_into_literals_and_quoted_names() {
    // Kyverno substitutes the inner `{{ }}` first, as text, then reads the outer one.
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ regex_match('^v[0-9]$', '{{request.object.metadata.labels.v || 'empty'}}') }}\"\n            operator: Equals\n            value: false\n          - key: \"{{ request.object.metadata.labels.\\\"{{request.object.metadata.labels.k || 'none'}}\\\" || 'x' }}\"\n            operator: Equals\n            value: bad\n",
    );
    let pods: Vec<String> = [
        "    v: v1",
        "    v: v12",
        "    w: v1",
        "    v: v1\n    k: z\n    z: bad",
        "    v: v1\n    k: z\n    z: good",
    ]
    .iter()
    .map(|l| pod_labelled(l, ""))
    .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&p, &refs),
        ["pass", "fail", "fail", "fail", "pass"]
    );
    // Outside a literal or a quoted name the nested text would be read as JMESPath.
    let bare = p.replace(
        "labels.\\\"{{request.object.metadata.labels.k || 'none'}}\\\"",
        "{{request.object.metadata.labels.k}}",
    );
    let m = migrate(&bare);
    assert!(
        m.unconverted[0].reason.contains("outside a string literal"),
        "{:?}",
        m.unconverted
    );
}

#[test]
fn flattened_filter_keeps_elements_that_are_not_lists() {
    // `volumes[?hostPath][]`: the maps themselves (JMESPath's flatten keeps a non-list).
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      foreach:\n      - list: \"request.object.spec.volumes[?hostPath][]\"\n        deny:\n          conditions:\n            any:\n            - key: \"{{ request.object.spec.containers[].volumeMounts[?name == '{{element.name}}' && readOnly][] | length(@) }}\"\n              operator: Equals\n              value: 0\n",
    );
    let pods: Vec<String> = [
        "  volumes:\n  - name: h\n    hostPath:\n      path: /h\n",
        "  volumes:\n  - name: g\n    hostPath:\n      path: /g\n",
        "  volumes:\n  - name: h\n    emptyDir: {}\n",
    ]
    .iter()
    .map(|v| pod_labelled("    a: b", v))
    .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    let ro = pods[0].replace("mountPath: /h\n", "mountPath: /h\n      readOnly: true\n");
    let mut all = refs.clone();
    all.push(&ro);
    assert_eq!(same_verdicts(&p, &all), ["fail", "fail", "skip", "pass"]);
}

#[test]
fn config_map_context_reads_data_and_metadata_through_resource_get() {
    let rule = "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    context:\n    - name: cm\n      configMap:\n        name: \"{{request.object.metadata.labels.cm}}\"\n        namespace: \"team-{{request.namespace}}\"\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ cm.data.k || '' }}\"\n            operator: Equals\n            value: x\n";
    let m = migrate(&policy(rule));
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert!(
        yaml.contains("resource.Get('v1', 'configmaps', cel.bind(v, 'team-' + "),
        "{yaml}"
    );
    assert!(yaml.contains("type(v) == string ? v"), "{yaml}");
    assert!(
        yaml.contains("{'data': dyn('data' in variables.cmResponse ? variables.cmResponse.data : null), 'metadata': dyn(variables.cmResponse.metadata)}"),
        "{yaml}"
    );
    assert!(!load(&yaml).is_empty());
    // A namespaced Policy's ConfigMap in another namespace is an error in Kyverno.
    let namespaced = policy(rule)
        .replace("kind: ClusterPolicy", "kind: Policy")
        .replace(
            "metadata:\n  name: p\n",
            "metadata:\n  name: p\n  namespace: n\n",
        );
    let m = migrate(&namespaced);
    assert!(
        m.unconverted[0].reason.contains("namespaced Policy"),
        "{:?}",
        m.unconverted
    );
}

#[test]
fn empty_quoted_name_is_null() {
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ request.object.metadata.labels.a || \\\"\\\" }}\"\n            operator: Equals\n            value: x\n",
    );
    let pods: Vec<String> = ["    a: x", "    a: y", "    b: x"]
        .iter()
        .map(|l| pod_labelled(l, ""))
        .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(same_verdicts(&p, &refs), ["fail", "pass", "pass"]);
}

#[test]
fn regex_replace_all_takes_go_templates() {
    // `$N`, `${N}`, `$$`, a group past the count (empty in Go), a malformed `$`, a backslash.
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ regex_replace_all('^(a+)(b*)$', request.object.metadata.labels.v, 'x$2${1}$$$3$-') }}\"\n            operator: Equals\n            value: \"xbba$$-\"\n",
    );
    let pods: Vec<String> = ["    v: abb", "    v: aab", "    v: c"]
        .iter()
        .map(|l| pod_labelled(l, ""))
        .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(same_verdicts(&p, &refs), ["fail", "pass", "pass"]);
    let named = p.replace("${1}", "${first}");
    assert!(
        migrate(&named).unconverted[0]
            .reason
            .contains("names a group"),
        "{:?}",
        migrate(&named).unconverted
    );
}

#[test]
fn projection_over_a_flattened_list_of_lists() {
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: [true]\n            operator: AnyIn\n            value: \"{{ request.object.spec.containers[].args[].starts_with(@, 'x') }}\"\n",
    );
    let pod = |args: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: i\n{args}  - name: d\n    image: i\n    args: [a]\n"
        )
    };
    let pods: Vec<String> = ["    args: [b, xy]\n", "    args: [b]\n", ""]
        .iter()
        .map(|a| pod(a))
        .collect();
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(same_verdicts(&p, &refs), ["fail", "pass", "pass"]);
    // The list's entries are bools here, so a wildcard entry's pattern is read as `string(y)`:
    // Kyverno v1.19.0's type checker refuses `replace` on a bool.
    let m = migrate(&p);
    let yaml = to_yaml(&m, "t.yaml", 1);
    assert!(
        yaml.contains("string(y).replace(") && !yaml.contains(" y.replace("),
        "{yaml}"
    );
}

#[test]
fn subjects_filter_by_the_requests_user() {
    let p = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [ConfigMap]\n        subjects:\n        - kind: ServiceAccount\n          name: dev\n          namespace: ns\n        - kind: Group\n          name: team-*\n    validate:\n      message: m\n      deny: {}\n",
    )
    .replace("spec:\n", "spec:\n  background: false\n");
    let m = migrate(&p);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let yaml = to_yaml(&m, "t.yaml", 1);
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n";
    let run = |text: &str, user: Option<(&str, &[&str])>| {
        let engine = Engine::new(load(text));
        let req = Request {
            user_info: user.map(|(u, g)| crate::request::UserInfo {
                username: u.to_owned(),
                groups: g.iter().map(|s| (*s).to_owned()).collect(),
                ..Default::default()
            }),
            ..Request::default()
        };
        let rs = engine.validate(&resource(cm), &req);
        rs.iter()
            .flat_map(|r| r.rules.iter().map(|x| x.status))
            .collect::<Vec<_>>()
    };
    let mut fails = Vec::new();
    for user in [
        None,
        Some(("system:serviceaccount:ns:dev", &[][..])),
        Some(("system:serviceaccount:ns:other", &[][..])),
        Some(("alice", &["team-a"][..])),
        Some(("alice", &["ops"][..])),
    ] {
        // A filter that keeps the resource out: no row from the ClusterPolicy, a skip from
        // the ValidatingPolicy's matchCondition.
        let a = run(&p, user);
        let b = run(&yaml, user);
        assert_eq!(
            a.contains(&Status::Fail),
            b.contains(&Status::Fail),
            "{user:?}: {a:?} / {b:?}\n{yaml}"
        );
        assert!(a.contains(&Status::Fail) || a.is_empty(), "{a:?}");
        fails.push(a.contains(&Status::Fail));
    }
    // No user information (a background scan): not filtered, as in Kyverno.
    assert_eq!(fails, [true, true, false, true, false]);
}

fn pod_images(containers: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n{containers}")
}

#[test]
fn images_variable_reads_the_parsed_images_by_group() {
    let original = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ images.[containers, initContainers][].*.registry[] }}\"\n            operator: AnyNotIn\n            value: [docker.io, ghcr.io]\n",
    );
    let m = migrate(&original);
    let names: Vec<&str> = m.policies[0]["spec"]["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["imagesPodSpec", "imagesRefs", "imagesInfos", "images"]
    );
    let e = only_expression(&m);
    assert!(e.contains("(x0.map(v1, x0[v1]))"), "{e}");
    let pods = [
        pod_images("  containers:\n  - name: c\n    image: nginx\n"),
        pod_images(
            "  containers:\n  - name: c\n    image: ghcr.io/a/b:1\n  initContainers:\n  - name: i\n    image: quay.io/x\n",
        ),
        pod_images("  containers:\n  - name: c\n    image: localhost:5000/a:1\n"),
        pod_images("  containers:\n  - name: c\n    image: '  '\n"),
        pod_images("  containers:\n  - name: c\n    image: Nginx\n"),
    ];
    let refs: Vec<&str> = pods.iter().map(String::as_str).collect();
    assert_eq!(
        same_verdicts(&original, &refs),
        ["pass", "fail", "fail", "pass", "error"]
    );
}

#[test]
fn images_fields_are_kyvernos_reading_of_the_reference() {
    let fields = [
        ("registry", "ghcr.io"),
        ("path", "org/app"),
        ("name", "app"),
        ("tag", "1.2"),
        ("reference", "ghcr.io/org/app:1.2"),
        ("referenceWithTag", "ghcr.io/org/app:1.2"),
        ("jsonPointer", "/spec/containers/1/image"),
    ];
    let conds: String = fields
        .iter()
        .map(|(f, v)| {
            format!(
                "          - key: \"{{{{ images.containers.app.{f} }}}}\"\n            operator: NotEquals\n            value: \"{v}\"\n"
            )
        })
        .collect();
    let original = policy(&format!(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n{conds}"
    ));
    let good = pod_images(
        "  containers:\n  - name: side\n    image: busybox\n  - name: app\n    image: ghcr.io/org/app:1.2\n",
    );
    let digest = format!(
        "  containers:\n  - name: side\n    image: busybox\n  - name: app\n    image: ghcr.io/org/app@sha256:{}\n",
        "a".repeat(64)
    );
    let other = pod_images(
        "  containers:\n  - name: x\n    image: busybox\n  - name: app\n    image: docker.io/library/app:1.2\n",
    );
    assert_eq!(
        same_verdicts(&original, &[&good, &pod_images(&digest), &other]),
        // Digest only: no `tag`, and a missing key in a deny condition is an error.
        ["pass", "error", "fail"]
    );
}

#[test]
fn images_in_a_mutate_foreach_are_read_before_any_mutation() {
    let original = policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    mutate:\n      foreach:\n      - list: request.object.spec.containers\n        patchStrategicMerge:\n          spec:\n            containers:\n            - name: \"{{ element.name }}\"\n              image: registry.io/{{ images.containers.\"{{element.name}}\".path }}:{{ images.containers.\"{{element.name}}\".tag }}\n",
    );
    let m = migrate(&original);
    assert!(m.unconverted.is_empty(), "{:?}", m.unconverted);
    let conds = m.policies[0]["spec"]["matchConditions"]
        .as_array()
        .expect("conditions");
    let forced = conds
        .iter()
        .find(|c| c["name"] == "images")
        .expect("the images condition");
    assert_eq!(
        forced["expression"],
        "size(variables.images) >= 0 && size(variables.images_1) >= 0 && size(variables.images_2) >= 0"
    );
    let yaml = to_yaml(&m, "t.yaml", 1);
    let pod = pod_images(
        "  containers:\n  - name: a\n    image: kyverno/kyverno:1.2.3\n  - name: b\n    image: redis\n",
    );
    let out = mutated_json(load(&yaml), &pod);
    assert_eq!(
        out["spec"]["containers"],
        serde_json::json!([
            {"name": "a", "image": "registry.io/kyverno/kyverno:1.2.3"},
            {"name": "b", "image": "registry.io/redis:latest"}
        ])
    );
    assert_eq!(out, mutated_json(load(&original), &pod));
}

#[test]
fn images_shadowed_or_over_mixed_kinds() {
    // A context entry named `images` is that entry, not Kyverno's map.
    let m = migrate(&policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    context:\n    - name: images\n      variable:\n        value: {containers: {}}\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ images.containers.a || '' }}\"\n            operator: Equals\n            value: x\n",
    ));
    let names: Vec<String> = m.policies[0]["spec"]["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .filter_map(|v| v["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, ["images"]);
    let m = migrate(&policy(
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod, ConfigMap]\n    validate:\n      message: m\n      deny:\n        conditions:\n          any:\n          - key: \"{{ images.containers.a.tag || '' }}\"\n            operator: Equals\n            value: x\n",
    ));
    assert_eq!(m.unconverted.len(), 1);
    assert!(
        m.unconverted[0]
            .reason
            .contains("with and without an image extractor"),
        "{}",
        m.unconverted[0].reason
    );
}

//! Policy validation tests: each §1.4 check, with the line:column it points at.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::policy::load::tests::load;

fn invalid(text: &str) -> (String, u32, u32) {
    let l = load(text);
    assert!(l.policies.is_empty(), "expected invalid:\n{text}");
    let i = &l.invalid[0];
    let lc = i.location.as_ref().unwrap().start.unwrap();
    assert_eq!(
        l.diagnostics[0].code,
        crate::diagnostic::Code::InvalidPolicy
    );
    (i.reason.clone(), lc.line, lc.column)
}

fn pol(meta: &str, spec: &str, rules: &str) -> String {
    format!(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n{meta}spec:\n{spec}  rules:\n{rules}"
    )
}

const RULE: &str = "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      pattern:\n        metadata: {name: x}\n";

#[test]
fn valid_baseline() {
    assert_eq!(load(&pol("", "", RULE)).policies.len(), 1);
}

#[test]
fn cluster_policy_namespace_and_name_length_and_autogen_all() {
    let (r, l, c) = invalid(&pol("  namespace: x\n", "", RULE));
    assert_eq!(r, "A clusterpolicy should not have the namespace defined");
    assert_eq!((l, c), (5, 14));
    let long = pol("", "", RULE).replace("name: p\n", &format!("name: {}\n", "p".repeat(64)));
    assert!(invalid(&long).0.contains("Too long"));
    let (r, l, _) = invalid(&pol(
        "  annotations:\n    pod-policies.kyverno.io/autogen-controllers: all\n",
        "",
        RULE,
    ));
    assert!(r.contains("does not support 'all'"));
    assert_eq!(l, 6);
}

#[test]
fn duplicate_names_and_rule_types() {
    let (r, l, c) = invalid(&pol("", "", &format!("{RULE}{RULE}")));
    assert!(r.contains("Duplicate rule name: 'r'"), "{r}");
    assert_eq!((l, c), (15, 11));
    let two =
        RULE.to_owned() + "    mutate:\n      patchStrategicMerge: {metadata: {labels: {a: b}}}\n";
    assert!(
        invalid(&pol("", "", &two))
            .0
            .contains("Multiple operations")
    );
    let none = "  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n";
    assert!(
        invalid(&pol("", "", none))
            .0
            .contains("No operation defined")
    );
}

#[test]
fn match_shape_checks() {
    let any_all = RULE.replace(
        "          kinds: [Pod]\n",
        "          kinds: [Pod]\n      all:\n      - resources:\n          kinds: [Pod]\n",
    );
    let (r, l, _) = invalid(&pol("", "", &any_all));
    assert!(r.contains("Can't specify any and all together"), "{r}");
    assert_eq!(l, 9); // the block's first key
    let no_kinds = RULE.replace("          kinds: [Pod]\n", "          namespaces: [x]\n");
    let (r, l, c) = invalid(&pol("", "", &no_kinds));
    assert!(r.contains("kind attribute is mandatory"), "{r}");
    assert_eq!((l, c), (11, 11));
    let name_names = RULE.replace(
        "kinds: [Pod]\n",
        "kinds: [Pod]\n          name: a\n          names: [b]\n",
    );
    assert!(
        invalid(&pol("", "", &name_names))
            .0
            .contains("Both name and names")
    );
    let empty_sel = RULE.replace("kinds: [Pod]\n", "kinds: [Pod]\n          selector: {}\n");
    assert!(
        invalid(&pol("", "", &empty_sel))
            .0
            .contains("requirements are not specified")
    );
    let wild_sel = RULE.replace(
        "kinds: [Pod]\n",
        "kinds: [Pod]\n          selector: {matchLabels: {a: '*'}}\n",
    );
    assert_eq!(load(&pol("", "", &wild_sel)).policies.len(), 1);
}

#[test]
fn namespaced_policy_checks() {
    let ns = pol(
        "",
        "",
        &RULE.replace(
            "kinds: [Pod]\n",
            "kinds: [Pod]\n          namespaces: [a]\n",
        ),
    )
    .replace("kind: ClusterPolicy", "kind: Policy");
    assert!(invalid(&ns).0.contains("Filtering namespaces not allowed"));
    let ov = pol(
        "",
        "  validationFailureActionOverrides:\n  - action: Enforce\n    namespaces: [a]\n",
        RULE,
    )
    .replace("kind: ClusterPolicy", "kind: Policy");
    assert!(invalid(&ov).0.contains("supported only with ClusterPolicy"));
}

#[test]
fn empty_set_and_user_info() {
    let conflict = RULE.replace(
        "    validate:",
        "    exclude:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:",
    );
    assert!(
        invalid(&pol("", "", &conflict))
            .0
            .contains("matching an empty set")
    );
    let flat = "  - name: r\n    match:\n      resources:\n        kinds: [Pod]\n    exclude:\n      resources:\n        kinds: [Pod, Service]\n    validate:\n      pattern: {metadata: {name: x}}\n";
    assert!(
        invalid(&pol("", "", flat))
            .0
            .contains("matching an empty set")
    );
    // Quirk: a flat match with an exclude.any is always "an empty set" upstream
    // (ValidateMatchExcludeConflict compares the empty flat exclude with the flat match).
    let flat_any = flat.replace(
        "      resources:\n        kinds: [Pod, Service]\n",
        "      any:\n      - resources:\n          namespaces: [x]\n",
    );
    assert!(
        invalid(&pol("", "", &flat_any))
            .0
            .contains("matching an empty set")
    );
    let narrowed = flat.replace(
        "kinds: [Pod, Service]\n",
        "kinds: [Pod]\n        namespaces: [x]\n",
    );
    assert_eq!(load(&pol("", "", &narrowed)).policies.len(), 1);

    let roles = RULE.replace(
        "      - resources:",
        "      - clusterRoles: [admin]\n        resources:",
    );
    assert!(
        invalid(&pol("", "", &roles))
            .0
            .contains("invalid variable used at path: spec/rules[0]/match/any[0]/clusterRoles")
    );
    assert_eq!(
        load(&pol("", "  background: false\n", &roles))
            .policies
            .len(),
        1
    );
    let bad_subject = RULE.replace(
        "      - resources:",
        "      - subjects: [{kind: ServiceAccount, name: x}]\n        resources:",
    );
    assert!(
        invalid(&pol("", "  background: false\n", &bad_subject))
            .0
            .contains("namespace is required")
    );
    let bad_role = RULE.replace(
        "      - resources:",
        "      - roles: [admin]\n        resources:",
    );
    assert!(
        invalid(&pol("", "  background: false\n", &bad_role))
            .0
            .contains("namespace:name")
    );
    let var = RULE.replace("{name: x}", "{name: '{{ request.userInfo.username }}'}");
    assert!(
        invalid(&pol("", "", &var))
            .0
            .contains("variable {{ request.userInfo.username }} is not allowed")
    );
    assert_eq!(
        load(&pol("", "  background: false\n", &var)).policies.len(),
        1
    );
}

#[test]
fn wildcard_kinds_and_admission() {
    let star = RULE.replace("kinds: [Pod]", "kinds: ['*']");
    assert!(
        invalid(&pol("", "", &star))
            .0
            .contains("not allowed in background mode")
    );
    assert_eq!(
        load(&pol("", "  background: false\n", &star))
            .policies
            .len(),
        1
    );
    let star2 = RULE.replace("kinds: [Pod]", "kinds: ['*', Pod]");
    assert!(
        invalid(&pol("", "  background: false\n", &star2))
            .0
            .contains("more than one kind")
    );
    let spec_pat = star.replace("metadata: {name: x}", "spec: {x: 1}");
    assert!(
        invalid(&pol("", "  background: false\n", &spec_pat))
            .0
            .contains("metadata field")
    );
    let both = pol("", "  background: false\n  admission: false\n", RULE);
    assert!(
        invalid(&both)
            .0
            .contains("disabling both admission and background")
    );
}

#[test]
fn mutate_and_label_checks() {
    let m = |body: &str| {
        format!(
            "  - name: r\n    match: {{any: [{{resources: {{kinds: [Service]}}}}]}}\n    mutate:\n{body}"
        )
    };
    let bad_path = m(
        "      patchesJson6902: |-\n        - op: add\n          path: spec/x\n          value: 1\n",
    );
    assert!(invalid(&pol("", "", &bad_path)).0.contains("forward slash"));
    let bad_op = m("      patchesJson6902: |-\n        - op: merge\n          path: /spec/x\n");
    assert!(invalid(&pol("", "", &bad_op)).0.contains("unexpected kind"));
    let both =
        m("      patchesJson6902: '[]'\n      patchStrategicMerge: {metadata: {labels: {a: b}}}\n");
    assert!(invalid(&pol("", "", &both)).0.contains("only one of"));
    let nested = m(
        "      foreach:\n      - list: x\n        context: []\n        foreach:\n        - list: y\n          patchStrategicMerge: {a: b}\n",
    );
    assert!(
        invalid(&pol("", "", &nested))
            .0
            .contains("nested foreach cannot contain")
    );
    let no_targets = m(
        "      mutateExistingOnPolicyUpdate: true\n      patchStrategicMerge: {metadata: {labels: {a: b}}}\n",
    );
    assert!(
        invalid(&pol("", "", &no_targets))
            .0
            .contains("targets has to be specified")
    );
    let int_label = RULE.replace("metadata: {name: x}", "metadata: {labels: {a: 1}}");
    assert!(
        invalid(&pol("", "", &int_label))
            .0
            .contains("labels and annotations supports only string values")
    );
}

/// validateResources' condition checks: missing fields, `{{request.operation}}` values and
/// operator spelling, with upstream's paths (`all` entries named `any[j]` by the operator check).
#[test]
fn condition_checks() {
    let deny = |conds: &str| {
        pol(
            "",
            "",
            &format!(
                "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      deny:\n        conditions:\n{conds}"
            ),
        )
    };
    let (reason, line, col) = invalid(&deny(
        "          all:\n          - key: a\n            operator: Equals\n            value: a\n          - key: b\n            operator: equals\n            value: b\n",
    ));
    assert!(
        reason.starts_with(
            "path: spec.rules[0].validate.deny.conditions.any[1].: entered value of `operator` is invalid. valid values: [\"Equal\" \"Equals\""
        ),
        "{reason}"
    );
    assert_eq!((line, col), (20, 23));
    let (reason, _, _) = invalid(&deny(
        "          any:\n          - key: a\n            operator: Equals\n",
    ));
    assert_eq!(
        reason,
        "path: spec.rules[0].validate.deny.conditions.any[0].: entered value of `key`, `value` or `operator` is missing or misspelled"
    );
    // A missing value is found before a misspelled operator of an earlier entry.
    let (reason, _, _) = invalid(&deny(
        "          any:\n          - key: a\n            operator: Nope\n            value: a\n          - key: b\n            operator: Equals\n",
    ));
    assert!(
        reason.contains("conditions.any[1].: entered value of `key`"),
        "{reason}"
    );
    // Legacy list form, rule preconditions (prefixed `validate.` as upstream does).
    let (reason, _, _) = invalid(&pol(
        "",
        "",
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    preconditions:\n    - key: \"{{ request.operation }}\"\n      operator: Equals\n      value: PATCH\n    validate:\n      pattern:\n        metadata: {name: x}\n",
    ));
    assert_eq!(
        reason,
        "path: spec.rules[0].validate.preconditions[0].value: PATCH: unknown value 'PATCH' found under the 'value' field. Only the following values are allowed: [CREATE, UPDATE, DELETE, CONNECT]"
    );
    // Templated and listed operations are fine; a number is not.
    for (value, ok) in [
        ("\"{{ request.object.metadata.labels.op }}\"", true),
        ("[CREATE, UPDATE]", true),
        ("3", false),
    ] {
        let text = deny(&format!(
            "          any:\n          - key: \"{{{{request.operation}}}}\"\n            operator: AnyIn\n            value: {value}\n"
        ));
        assert_eq!(load(&text).policies.len() == 1, ok, "{value}");
    }
    // foreach entries: operators only, in preconditions and deny.
    let (reason, _, _) = invalid(&pol(
        "",
        "",
        "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n    validate:\n      foreach:\n      - list: request.object.spec.containers\n        deny:\n          conditions:\n            any:\n            - key: a\n              operator: Bigger\n              value: b\n",
    ));
    assert!(
        reason.starts_with("path: spec.rules[0].validate.foreach.deny.conditions.any[0].: entered value of `operator` is invalid"),
        "{reason}"
    );
}

#[test]
fn forbidden_user_variables_match_as_kyvernos_regexes_do() {
    use super::{FORBIDDEN, mentions_forbidden};
    let inputs = [
        "{{serviceAccountName}}",
        "{{ serviceAccountName }}",
        "{{request.object.serviceAccountName}}",
        "{{ serviceAccountNameX }}",
        "{{ serviceAccountName_x }}",
        "{{ serviceAccountName-x }}",
        "{{ serviceAccountNameé }}",
        "serviceAccountName",
        "xserviceAccountName",
        "{{ request.userInfo.username }}",
        "{{ requestXuserInfo }}",
        "{{ request\nuserInfo }}",
        "{{ request.roles }}",
        "{{ request.clusterRoles[0] }}",
        "{{ a.request.roles }}",
        "é request.roles",
        "{{ serviceAccountNamespace }}",
        "",
    ];
    for name in FORBIDDEN {
        let re = regex::Regex::new(&format!(r"[^\.]({name})(?-u:\b)")).unwrap();
        for s in inputs {
            assert_eq!(
                mentions_forbidden(s, name),
                re.is_match(s),
                "{name} in {s:?}"
            );
        }
    }
}

/// Independent failures of the checks on compiled rules are each reported: a user variable
/// in background mode in one rule, a Policy filtering namespaces in another, a duplicate
/// name; sorted by position, the reason still the first one in Kyverno's order.
#[test]
fn independent_rule_failures_are_each_reported() {
    let rule = |name: &str, extra: &str| {
        format!(
            "  - name: {name}\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n{extra}    validate:\n      message: '{{{{ request.userInfo.username }}}}'\n      pattern:\n        metadata: {{name: x}}\n"
        )
    };
    let text = pol(
        "",
        "",
        &format!(
            "{}{}{}",
            rule("a", ""),
            rule("b", "          namespaces: [x]\n"),
            rule("a", "")
        ),
    )
    .replace("kind: ClusterPolicy", "kind: Policy");
    let l = load(&text);
    assert!(l.policies.is_empty());
    let d: Vec<String> = l
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.position(), d.message))
        .collect();
    // The duplicate name, three user variables, the namespaces filter.
    assert_eq!(d.len(), 5, "{d:#?}");
    assert_eq!(
        d.iter()
            .filter(|d| d.contains("variable {{ request.userInfo.username }} is not allowed"))
            .count(),
        3,
        "{d:#?}"
    );
    assert!(
        d.iter().any(|d| d.contains("Duplicate rule name: 'a'")),
        "{d:#?}"
    );
    assert!(
        d.iter()
            .any(|d| d.contains("spec.rules[1].match.any[0].namespaces: Forbidden")),
        "{d:#?}"
    );
    assert!(
        l.invalid[0].reason.contains("Duplicate rule name"),
        "{:?}",
        l.invalid
    );
}

/// The condition blocks of one rule are checked independently: a bad precondition and a bad
/// deny condition are both reported, and a mandatory-kinds failure after them too.
#[test]
fn condition_blocks_of_one_rule_are_each_reported() {
    let text = pol(
        "",
        "",
        "  - name: r\n    match:\n      any:\n      - resources:\n          names: [x]\n    preconditions:\n      all:\n      - key: a\n        operator: Same\n        value: a\n    validate:\n      deny:\n        conditions:\n          any:\n          - key: b\n            operator: Is\n            value: b\n",
    );
    let l = load(&text);
    let d: Vec<String> = l
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.position(), d.message))
        .collect();
    assert_eq!(d.len(), 3, "{d:#?}");
    assert!(
        d[0].starts_with("pol.yaml:11:11 ") && d[0].contains("the kind attribute is mandatory"),
        "{d:#?}"
    );
    assert!(
        d[1].starts_with("pol.yaml:15:19 ") && d[1].contains("preconditions.any[0]"),
        "{d:#?}"
    );
    assert!(
        d[2].starts_with("pol.yaml:22:23 ") && d[2].contains("deny.conditions.any[0]"),
        "{d:#?}"
    );
}

#[test]
fn verify_images_mutate_digest_needs_enforce() {
    let vi = |entry: &str| {
        format!(
            "  - name: r\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    verifyImages:\n    - imageReferences: [\"*\"]\n{entry}"
        )
    };
    // mutateDigest defaults to true; the policy's action defaults to Audit.
    let (r, l, _) = invalid(&pol("", "", &vi("      verifyDigest: false\n")));
    assert_eq!(
        r,
        "spec.rules[0].verifyImages[0].mutateDigest: Invalid value: true: mutateDigest must be set to false for \u{2018}Audit\u{2019} failure action"
    );
    assert_eq!(l, 10, "at the entry when mutateDigest is not written");
    let (_, l, c) = invalid(&pol("", "", &vi("      mutateDigest: true\n")));
    assert_eq!((l, c), (11, 21), "at the value when it is written");
    // Enforce (the policy's or the entry's) allows it; mutateDigest: false is valid under Audit.
    let enforce = "  validationFailureAction: Enforce\n";
    assert_eq!(load(&pol("", enforce, &vi(""))).policies.len(), 1);
    assert_eq!(
        load(&pol("", "", &vi("      failureAction: Enforce\n")))
            .policies
            .len(),
        1
    );
    assert_eq!(
        load(&pol("", "", &vi("      mutateDigest: false\n")))
            .policies
            .len(),
        1
    );
    // An entry's Audit under an Enforce policy is refused.
    assert!(
        invalid(&pol("", enforce, &vi("      failureAction: Audit\n")))
            .0
            .contains("for \u{2018}Audit\u{2019} failure action")
    );
}

/// hasInvalidVariables: a rule reads only what Kyverno's mock context knows.
#[test]
fn undeclared_variables_make_the_policy_invalid() {
    let deny = |ctx: &str, msg: &str| {
        format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n{ctx}    validate:\n      message: \"{msg}\"\n      deny: {{}}\n"
        )
    };
    // Not declared anywhere: the policy is invalid, at the string.
    let (r, l, c) = invalid(&pol("", "", &deny("", "{{ team }}")));
    assert_eq!(
        r,
        "policy contains invalid variables: variable substitution failed for rule r: variable team must match regex \"request\\.|element|elementIndex|@|images|images\\.|image\\.|([a-z_0-9]+\\()[^{}]\" or patterns []"
    );
    assert_eq!((l, c), (13, 16));
    // Declared by a context entry (NAME*), or allowed by the regex: valid.
    let ctx = "    context:\n    - name: team\n      variable: {value: a}\n    - name: cm\n      configMap: {name: x, namespace: y}\n";
    for msg in [
        "{{ team }}",
        "{{ team.lead }}",
        "{{ cm.data.k }}",
        "{{ \\\"cm\\\".data.k }}",
        "{{ request.object.metadata.name }}",
        "{{ to_upper('x') }}",
        "{{ request.object.metadata.{{ team }} }}",
        "\\\\{{ not.a.variable }}",
    ] {
        assert_eq!(
            load(&pol("", "", &deny(ctx, msg))).policies.len(),
            1,
            "{msg}"
        );
    }
    // A configMap entry declares .data and .metadata only; a nested variable is read after
    // its inner one became null.
    for msg in ["{{ cm }}", "{{ unknown.{{ team }} }}"] {
        assert!(
            invalid(&pol("", "", &deny(ctx, msg)))
                .0
                .contains("must match regex"),
            "{msg}"
        );
    }
    // serviceAccountName is allowed outside background mode only (there it is refused anyway).
    let sa = deny("", "{{ serviceAccountName }}");
    assert_eq!(
        load(&pol("", "  background: false\n", &sa)).policies.len(),
        1
    );
    // `target.` is for a rule with mutate targets, and only where a target is read: not in
    // the rule's context.
    let targets = |ctx: &str| {
        format!(
            "  - name: r\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n{ctx}    mutate:\n      targets:\n      - {{apiVersion: v1, kind: ConfigMap, name: x, namespace: y}}\n      patchStrategicMerge:\n        metadata: {{labels: {{a: \"{{{{ target.metadata.name }}}}\"}}}}\n"
        )
    };
    assert_eq!(load(&pol("", "", &targets(""))).policies.len(), 1);
    let in_context = targets(
        "    context:\n    - name: o\n      variable: {value: \"{{ target.metadata.name }}\"}\n",
    );
    assert!(
        invalid(&pol("", "", &in_context))
            .0
            .starts_with("policy contains invalid variables: invalid variables defined at mutate.targets[0]: variable target.metadata.name must match regex")
    );
    assert!(
        invalid(&pol("", "", &deny("", "{{ target.metadata.name }}")))
            .0
            .contains("must match regex")
    );
    // Variables are refused outright in match blocks.
    let in_match = RULE.replace(
        "kinds: [Pod]",
        "kinds: [Pod]\n          names: [\"{{ request.object.x }}\"]",
    );
    assert_eq!(
        invalid(&pol("", "", &in_match)).0,
        "policy contains invalid variables: rule \"r\" should not have variables in match section"
    );
}

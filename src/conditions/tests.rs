//! Condition operator and block tests (validate-cases.md §G, §H; validate.md §8, §14).

use serde_json::{Value as J, json};

use super::*;
use crate::variables::Context;

fn node(v: J) -> Node {
    Node::from_json(&v)
}

/// One condition with literal key and value (as policies give them, after YAML).
fn cond(key: J, op: &str, val: J) -> bool {
    let c = node(json!({"key": key, "operator": op, "value": val}));
    let mut ctx = Context::from_root(node(json!({})));
    evaluate_condition(&c, &mut ctx).unwrap().0
}

#[test]
fn g_cases_equality() {
    assert!(cond(json!("abc-1"), "Equals", json!("abc-*")), "G1");
    assert!(!cond(json!("abc-*"), "Equals", json!("abc-1")), "G2");
    assert!(!cond(json!("10"), "Equals", json!("1*")), "G3");
    assert!(cond(json!("1Gi"), "Equals", json!("1024Mi")), "G4");
    assert!(cond(json!("1h"), "Equals", json!(3600)), "G5");
    assert!(cond(json!("60m"), "Equals", json!("1h")), "G6");
    assert!(cond(json!(1), "Equals", json!("1")), "G7");
    assert!(!cond(json!("1"), "Equals", json!(1)), "G8");
    assert!(!cond(json!(false), "Equals", json!("true")), "G9");
    assert!(!cond(J::Null, "Equals", json!("")), "G10");
    assert!(!cond(J::Null, "NotEquals", json!("")), "G10 not");
    assert!(!cond(json!(["a", "b"]), "Equals", json!(["b", "a"])), "G11");
    assert!(cond(json!(["a", "b"]), "Equals", json!(["a", "b"])));
    assert!(!cond(json!("1.5.2"), "NotEquals", json!("1.5.*")), "G12");
    assert!(cond(json!("0"), "NotEquals", json!("")), "G13");
    assert!(cond(json!("2h"), "NotEquals", json!(3600)), "G37");
    assert!(
        cond(json!("1Gi"), "NotEquals", json!("x")),
        "quantity key, unparsable value"
    );
    assert!(!cond(json!("1Gi"), "Equals", json!("x")));
    assert!(
        cond(json!({"a": 1}), "Equal", json!({"a": 1})),
        "deprecated alias"
    );
    assert!(cond(json!(true), "NotEqual", json!("true")));
}

#[test]
fn g_cases_numeric() {
    assert!(cond(json!("100m"), "GreaterThan", json!(1)), "G14");
    assert!(!cond(json!("100m"), "GreaterThan", json!("1")), "G15");
    assert!(cond(json!("1.5.5"), "GreaterThan", json!("1.5.0")), "G16");
    assert!(cond(json!("1"), "LessThan", json!("10")), "G17");
    assert!(
        cond(json!("1Ki"), "GreaterThanOrEquals", json!("1024")),
        "G18"
    );
    assert!(!cond(json!(3600), "GreaterThan", json!("1h")), "G19");
    assert!(!cond(json!("abc"), "GreaterThan", json!(1)), "G20");
    assert!(cond(json!(5), "LessThanOrEquals", json!(5)));
    assert!(!cond(json!(true), "GreaterThan", json!(1)));
    assert!(!cond(json!("1.5.5"), "GreaterThan", json!(1)));
}

#[test]
fn g_cases_sets() {
    assert!(
        cond(
            json!(["1.1.1.1", "5.5.5.5"]),
            "AnyIn",
            json!(["1.1.1.1", "2.2.2.2"])
        ),
        "G21"
    );
    assert!(
        !cond(
            json!(["1.1.1.1", "5.5.5.5"]),
            "AllIn",
            json!(["1.1.1.1", "2.2.2.2"])
        ),
        "G22"
    );
    assert!(cond(json!("1.1.1.1"), "AnyIn", json!(["1*"])), "G23");
    assert!(
        cond(json!(["1*"]), "AnyIn", json!(["1.1.1.1", "2.2.2.2"])),
        "G24"
    );
    assert!(cond(json!(5), "AnyIn", json!("1-10")), "G25");
    assert!(cond(json!([1, 5, 11]), "AnyNotIn", json!("0-10")), "G26");
    assert!(!cond(json!([2, 6]), "AllNotIn", json!("5-10")), "G27");
    assert!(!cond(json!("5"), "AnyIn", json!(5)), "G28");
    assert!(cond(json!([1]), "AnyIn", json!(1)), "G29 any");
    assert!(!cond(json!([1]), "AllIn", json!(1)), "G29 all");
    assert!(
        cond(
            json!(["7*", "6*", "5*"]),
            "AllNotIn",
            json!(["1.1.1.1", "2.2.2.2", "3.3.3.3"])
        ),
        "G30"
    );
    assert!(
        cond(json!(["1.1.1.1", "5.5.5.5"]), "AnyIn", json!("1.1.1.1")),
        "G31"
    );
    assert!(cond(json!("a"), "AnyIn", json!("[\"a\",\"b\"]")), "G32");
    assert!(!cond(json!("a"), "In", json!("b")), "G33 In");
    assert!(!cond(json!("a"), "NotIn", json!("b")), "G33 NotIn");
    assert!(cond(json!("1"), "In", json!(["1", "2", "3"])), "G34");
    assert!(cond(json!("x"), "NotIn", json!(["1", "2"])));
    assert!(
        cond(json!(["a"]), "NotIn", json!("a")),
        "single-key shortcut answers found for NotIn"
    );
    assert!(cond(json!(["a", "b"]), "In", json!(["a", "b", "c"])));
    assert!(cond(json!(["a", "z"]), "NotIn", json!(["a", "b"])));
    assert!(!cond(json!([]), "AnyIn", json!(["a"])), "empty key list");
    assert!(cond(json!([]), "AllIn", json!(["a"])));
    assert!(!cond(json!([]), "AnyNotIn", json!(["a"])));
    assert!(cond(json!([]), "AllNotIn", json!(["a"])));
    assert!(
        cond(json!(1_000_000.0), "AnyIn", json!(["1e+06"])),
        "fmt.Sprint of a float"
    );
    assert!(
        !cond(json!("a"), "AnyIn", json!("123")),
        "JSON that is not a string array"
    );
    assert!(cond(json!("a"), "AnyNotIn", json!(["b"])));
    assert!(cond(json!("x"), "AllNotIn", json!("y")));
    assert!(
        cond(json!("-3"), "AnyIn", json!("-5-5")),
        "negative range bound"
    );
    // AnyNotIn with a negative lower bound turns into an inequality (quirk).
    assert!(cond(json!(["1"]), "AnyNotIn", json!("-5-5")));
    assert!(!cond(json!({"a": 1}), "AnyIn", json!(["a"])));
    let c = node(json!({"key": [1], "operator": "In", "value": ["1"]}));
    assert!(evaluate_condition(&c, &mut Context::from_root(node(json!({})))).is_err());
}

#[test]
fn g_cases_durations() {
    assert!(
        cond(json!("61m"), "DurationGreaterThan", json!("1h")),
        "G35"
    );
    assert!(cond(json!(120), "DurationGreaterThan", json!("1m")), "G36");
    assert!(cond(json!("1h"), "DurationLessThanOrEquals", json!(3600)));
    assert!(!cond(json!("x"), "DurationLessThan", json!("1h")));
    assert!(!cond(json!(true), "DurationLessThan", json!("1h")));
    assert!(
        cond(json!(1.9), "DurationGreaterThanOrEquals", json!(1)),
        "whole seconds"
    );
}

#[test]
fn operator_names() {
    let c = node(json!({"key": 1, "operator": "Bogus", "value": 1}));
    let e = evaluate_condition(&c, &mut Context::from_root(node(json!({})))).unwrap_err();
    assert!(
        e.message
            .starts_with("failed to create handler for condition operator")
    );
    // Engine matches names case-insensitively; numeric ones then compare exact spellings.
    assert!(cond(json!(1), "equals", json!(1)));
    assert!(!cond(json!(2), "greaterthan", json!(1)));
    assert_eq!(OPERATORS.len(), 18);
}

fn resource_ctx() -> Context<'static> {
    Context::from_root(node(json!({"request": {"object": {
        "metadata": {"name": "temp", "labels": {"animal": "cow", "version": "1.4.9"}},
        "spec": {"foo": "bar", "type": "ClusterIP"}
    }}})))
}

fn deny(conditions: J, message: Option<&str>) -> (Status, String) {
    deny_verdict(
        "r",
        message,
        &node(json!({"conditions": conditions})),
        &mut resource_ctx(),
    )
}

#[test]
fn blocks_and_messages() {
    // G39: any, no condition holds → pass; false messages collected.
    let any = json!({"any": [
        {"key": "{{ request.object.metadata.name }}", "operator": "Equals", "value": "temp2", "message": "invalid name"},
        {"key": "{{ request.object.spec.foo }}", "operator": "Equals", "value": "bar2", "message": "invalid foo"}]});
    let r = evaluate_block(&node(any.clone()), &mut resource_ctx()).unwrap();
    assert_eq!(
        (r.holds, r.message.as_str()),
        (false, "invalid name; invalid foo")
    );
    assert_eq!(
        deny(any, None),
        (Status::Pass, "validation rule 'r' passed.".to_owned())
    );
    // G40.
    assert_eq!(deny(json!({"any": []}), None).0, Status::Pass);
    assert_eq!(
        deny_verdict("r", None, &node(json!({})), &mut resource_ctx()),
        (Status::Fail, "validation error: rule r failed".to_owned())
    );
    // G41: short-circuit hides the error; swapped → error.
    let ok_first = json!({"all": [
        {"key": "{{ request.object.metadata.name }}", "operator": "Equals", "value": "other"},
        {"key": "{{ request.object.spec.missing }}", "operator": "Equals", "value": "x"}]});
    assert_eq!(deny(ok_first, None).0, Status::Pass);
    let err_first = json!({"all": [
        {"key": "{{ request.object.spec.missing }}", "operator": "Equals", "value": "x"},
        {"key": "{{ request.object.metadata.name }}", "operator": "Equals", "value": "other"}]});
    assert_eq!(
        deny(err_first, None),
        (
            Status::Error,
            "failed to check deny conditions: failed to substitute variables in condition key: failed to resolve request.object.spec.missing at path : JMESPath query failed: Unknown key \"missing\" in path".to_owned()
        )
    );
    // G42: legacy list, message substituted, no prefix.
    let legacy = json!([{"key": "{{ request.object.metadata.labels.animal }}", "operator": "NotIn", "value": ["snake", "bear", "cat", "dog"]}]);
    assert_eq!(
        deny(
            legacy,
            Some(
                "The animal {{ request.object.metadata.labels.animal }} is not in the allowed list of animals."
            )
        ),
        (
            Status::Fail,
            "The animal cow is not in the allowed list of animals.".to_owned()
        )
    );
    // True-condition messages are appended on deny.
    let msgs = json!({"all": [
        {"key": "a", "operator": "Equals", "value": "a", "message": "first"},
        {"key": "b", "operator": "Equals", "value": "b", "message": "second {{ request.object.metadata.name }}"}]});
    assert_eq!(
        deny(msgs.clone(), Some("rule msg")),
        (Status::Fail, "rule msg; first; second temp".to_owned())
    );
    assert_eq!(
        deny(msgs, None),
        (Status::Fail, "first; second temp".to_owned())
    );
    // Message substitution failure → only the condition messages.
    let one = json!({"any": [{"key": "a", "operator": "Equals", "value": "a", "message": "m"}]});
    assert_eq!(
        deny(one.clone(), Some("{{ nope }}")),
        (Status::Fail, "m".to_owned())
    );
    // A message that is exactly one non-string variable.
    assert_eq!(
        deny(
            json!({"any": [{"key": "a", "operator": "Equals", "value": "a"}]}),
            Some("{{ request.object.metadata.labels }}")
        )
        .1,
        "the produced message didn't resolve to a string, check your policy definition."
    );
    // Both any and all must hold.
    let both = json!({"any": [{"key": "a", "operator": "Equals", "value": "a"}], "all": [{"key": "a", "operator": "Equals", "value": "b", "message": "all failed"}]});
    let r = evaluate_block(&node(both), &mut resource_ctx()).unwrap();
    assert_eq!((r.holds, r.message.as_str()), (false, "all failed"));
    // Missing preconditions hold.
    assert!(
        evaluate_block(&Node::null(), &mut resource_ctx())
            .unwrap()
            .holds
    );
}

#[test]
fn h_cases() {
    let pre = |c: J| evaluate_block(&node(c), &mut resource_ctx());
    // H1.
    assert!(!pre(json!({"all": [{"key": "{{ request.object.spec.type }}", "operator": "Equals", "value": "NodePort"}]})).unwrap().holds);
    // H2.
    let e = pre(json!({"all": [{"key": "{{ request.object.spec.duration }}", "operator": "NotEquals", "value": ""}]})).unwrap_err();
    assert!(
        e.message
            .starts_with("failed to substitute variables in condition key: ")
    );
    assert!(e.message.ends_with("Unknown key \"duration\" in path"));
    // H3.
    assert!(!pre(json!({"all": [{"key": "{{ request.object.spec.duration || '' }}", "operator": "NotEquals", "value": ""}]})).unwrap().holds);
    // H10: projection over a missing list is null; Equals with a null key is false.
    assert!(!pre(json!({"all": [{"key": "{{ request.object.spec.initContainers[*].image }}", "operator": "Equals", "value": ""}]})).unwrap().holds);
    assert!(pre(json!({"all": [{"key": "{{ request.object.spec.initContainers[0].image }}", "operator": "Equals", "value": ""}]})).is_err());
    // H11.
    assert!(pre(json!({"any": [{"key": "{{ semver_compare('{{request.object.metadata.labels.version}}', '<1.5.0') }}", "operator": "Equals", "value": true}]})).unwrap().holds);
    // Value-side error message.
    let e = pre(json!({"all": [{"key": "a", "operator": "Equals", "value": "{{ nope }}"}]}))
        .unwrap_err();
    assert!(
        e.message
            .starts_with("failed to substitute variables in condition value: ")
    );
    // H15: userInfo absent without a user.
    assert!(pre(json!({"any": [{"key": "{{ request.userInfo.username }}", "operator": "Equals", "value": "admin"}]})).unwrap_err().message.contains("Unknown key \"userInfo\""));
}

/// Decimal quantities too large for nano units (an RSA modulus, a 40-digit count) compare
/// exactly, as Kubernetes' `Quantity.Cmp` on its exact decimals does; before, both sides
/// saturated and compared equal.
#[test]
fn huge_decimal_quantities_compare_exactly() {
    let a = format!("2649{}", "1".repeat(600));
    let b = format!("2562{}", "7".repeat(600));
    assert!(cond(json!(a), "NotEquals", json!(b)));
    assert!(!cond(json!(a), "Equals", json!(b)));
    assert!(cond(json!(a), "Equals", json!(a.clone())));
    assert!(cond(json!(a), "GreaterThan", json!(b)));
    assert!(cond(json!(b), "LessThan", json!(a)));
    let big = "1".to_owned() + &"0".repeat(40);
    assert!(cond(
        json!(big),
        "Equals",
        json!("10000000000000000000000000000000000000e3")
    ));
    assert!(cond(
        json!(big),
        "GreaterThan",
        json!("9999999999999999999999999999999999999999")
    ));
    assert!(cond(json!(format!("-{big}")), "LessThan", json!("1")));
    assert!(cond(json!(format!("{big}.5")), "GreaterThan", json!(big)));
    // Binary suffixes stay capped as Kubernetes caps them.
    assert!(cond(
        json!("100000000000000000000Ei"),
        "Equals",
        json!("200000000000000000000Ei")
    ));
}

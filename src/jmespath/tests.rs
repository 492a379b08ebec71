//! JMESPath dialect tests: the fork's error rules and every function, each with its error
//! case (validate.md §12, validate-cases.md §H).

use serde_json::{Value as J, json};

use super::{Error, Expr};
use crate::yaml::Node;

fn data() -> Node {
    Node::from_json(&json!({
        "a": {"b": "x", "n": null, "list": [{"c": 1.5}, {"c": 2.5}, {"d": 0}], "num": 3.0},
        "labels": {"app": "web", "tier": "fe"},
        "nums": [3.0, 1.0, 2.0],
        "strs": ["b", "a"],
        "idx": 2
    }))
}

fn q(expr: &str) -> Result<J, Error> {
    let d = data();
    Expr::compile(expr)?.search(&d).map(|v| v.to_json())
}

fn ok(expr: &str) -> J {
    match q(expr) {
        Ok(v) => v,
        Err(e) => panic!("{expr}: {e}"),
    }
}

fn err(expr: &str) -> String {
    match q(expr) {
        Ok(v) => panic!("{expr}: expected an error, got {v}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn missing_keys_are_errors_where_the_fork_propagates_them() {
    assert_eq!(err("a.missing"), "Unknown key \"missing\" in path");
    assert_eq!(err("missing.b"), "Unknown key \"missing\" in path");
    assert_eq!(err("a.missing[0]"), "Unknown key \"missing\" in path");
    assert_eq!(ok("a.n"), J::Null);
    assert_eq!(ok("a.b.c"), J::Null, "field on a string is null");
    // Swallowed: ||, projections, comparisons, functions, pipes, multi-selects, filters.
    assert_eq!(ok("a.missing || 'd'"), json!("d"));
    assert_eq!(ok("a.missing[*].c"), J::Null);
    assert_eq!(ok("a.list[*].c"), json!([1.5, 2.5]));
    assert_eq!(ok("a.list[].c"), json!([1.5, 2.5]));
    assert_eq!(ok("a.missing == null"), json!(true));
    assert_eq!(ok("not_null(a.missing, 'z')"), json!("z"));
    assert_eq!(ok("a.missing | 'p'"), json!("p"));
    assert_eq!(ok("[a.missing, a.b]"), json!([null, "x"]));
    assert_eq!(ok("{m: a.missing}"), json!({"m": null}));
    assert_eq!(ok("a.list[?c > `2`].c"), json!([2.5]));
    assert_eq!(ok("missing[?x]"), J::Null);
    assert_eq!(ok("!(a.missing)"), json!(true));
    assert_eq!(
        ok("!a.missing"),
        J::Null,
        "(!a).missing: `!` binds tighter than `.`"
    );
    // Projections drop null results.
    assert_eq!(
        ok("a.*"),
        J::Array(vec![
            json!("x"),
            data().get("a").unwrap().get("list").unwrap().to_json(),
            json!(3.0)
        ])
    );
    assert_eq!(ok("nums[0:2]"), json!([3.0, 1.0]));
    assert_eq!(ok("nums[::-1]"), json!([2.0, 1.0, 3.0]));
    assert_eq!(ok("nums[-1]"), json!(2.0));
}

#[test]
fn comparisons_follow_go_types() {
    assert_eq!(ok("a.num == `3`"), json!(true));
    // Int (int64) never equals a float64; ordering needs two floats.
    assert_eq!(ok("idx == `2`"), json!(false));
    assert_eq!(ok("idx > `1`"), J::Null);
    assert_eq!(ok("a.num > `1`"), json!(true));
    assert_eq!(ok("a.b < `1`"), J::Null);
}

#[test]
fn compile_errors() {
    assert!(matches!(Expr::compile("a.["), Err(Error::Syntax { .. })));
    assert_eq!(
        Expr::compile("nope(a)").unwrap_err(),
        Error::UnknownFunction("nope".to_owned())
    );
    let deep = format!("{}a{}", "(".repeat(500), ")".repeat(500));
    assert!(Expr::compile(&deep).is_err());
    let nots = format!("{}a", "!".repeat(5000));
    assert!(Expr::compile(&nots).is_err());
    let chain = vec!["a"; 3000].join(".");
    let _ = Expr::compile(&chain).map(|e| e.search(&data()).is_err());
}

/// A syntax error names the byte where the parser stopped; the end of the text when the
/// expression stops short.
#[test]
fn syntax_errors_name_their_offset() {
    let at = |t: &str| Expr::compile(t).unwrap_err().offset();
    assert_eq!(at("a.["), Some(3));
    assert_eq!(at("a.b || ]"), Some(7));
    assert_eq!(at("\"é\".b ]"), Some(7));
    assert_eq!(at("a[?x == `1`"), Some(11));
    // Errors found before parsing name no place.
    assert_eq!(at(&"(".repeat(500)), None);
    assert_eq!(Expr::compile("nope(a)").unwrap_err().offset(), None);
}

#[test]
fn argument_checks() {
    assert_eq!(
        err("to_upper(`1`)"),
        "Invalid type for: 1, expected: []jmespath.JpType{\"string\"}"
    );
    assert_eq!(err("to_upper('a', 'b')"), "incorrect number of args");
    assert_eq!(err("merge()"), "Invalid arity.");
    assert_eq!(
        err("length(idx)"),
        "Invalid type for: 2, expected: []jmespath.JpType{\"string\", \"array\", \"object\"}"
    );
    assert_eq!(
        err("abs(idx)"),
        "Invalid type for: 2, expected: []jmespath.JpType{\"number\"}"
    );
}

#[test]
fn standard_functions() {
    assert_eq!(ok("abs(`-2`)"), json!(2.0));
    assert_eq!(ok("avg(nums)"), json!(2.0));
    assert_eq!(ok("ceil(`1.2`)"), json!(2.0));
    assert_eq!(ok("floor(`1.8`)"), json!(1.0));
    assert_eq!(ok("contains(strs, 'a')"), json!(true));
    assert_eq!(ok("contains('abc', 'bc')"), json!(true));
    assert_eq!(ok("ends_with('abc', 'bc')"), json!(true));
    assert_eq!(ok("starts_with('abc', 'ab')"), json!(true));
    assert_eq!(ok("join(',', strs)"), json!("b,a"));
    assert_eq!(ok("keys(labels)"), json!(["app", "tier"]));
    assert_eq!(ok("values(labels)"), json!(["web", "fe"]));
    assert_eq!(ok("length('héllo')"), json!(5.0));
    assert_eq!(ok("map(&c, a.list[0:2])"), json!([1.5, 2.5]));
    assert_eq!(ok("map(&not_null(c, `0`), a.list)"), json!([1.5, 2.5, 0.0]));
    assert_eq!(ok("max(nums)"), json!(3.0));
    assert_eq!(ok("min(strs)"), json!("a"));
    assert_eq!(ok("max_by(a.list[0:2], &c)"), json!({"c": 2.5}));
    assert_eq!(ok("min_by(a.list[0:2], &c)"), json!({"c": 1.5}));
    assert_eq!(
        ok("merge(labels, {app: 'api'})"),
        json!({"app": "api", "tier": "fe"})
    );
    assert_eq!(ok("not_null(a.n, 'x')"), json!("x"));
    assert_eq!(ok("reverse(strs)"), json!(["a", "b"]));
    assert_eq!(ok("reverse('ab')"), json!("ba"));
    assert_eq!(ok("sort(nums)"), json!([1.0, 2.0, 3.0]));
    assert_eq!(ok("sort_by(a.list[0:2], &c)[0].c"), json!(1.5));
    assert_eq!(ok("to_array('a')"), json!(["a"]));
    assert_eq!(ok("to_number('1.5')"), json!(1.5));
    assert_eq!(ok("to_number('x')"), J::Null);
    assert_eq!(
        ok("to_string(labels)"),
        json!("{\"app\":\"web\",\"tier\":\"fe\"}")
    );
    assert_eq!(ok("type(a.n)"), json!("null"));
    assert_eq!(err("type(idx)"), "unknown type");
    assert_eq!(err("sort_by(a.list, &c)"), "error in sort_by comparison");
    assert_eq!(err("sort_by(a.list, &d)"), "Unknown key \"d\" in path");
    assert_eq!(
        err("sort_by(a.list[0:2], &to_string(c) == 'x')"),
        "invalid type, must be number of string"
    );
    assert_eq!(
        err("map(&missing, a.list)"),
        "Unknown key \"missing\" in path"
    );
    assert_eq!(err("max_by(a.list, &c)"), "Unknown key \"c\" in path");
}

#[test]
fn string_functions() {
    assert_eq!(ok("compare('a', 'b')"), json!(-1));
    assert_eq!(
        ok("compare('a', 'b') == `-1`"),
        json!(false),
        "Go int vs float64"
    );
    assert_eq!(ok("equal_fold('Go', 'GO')"), json!(true));
    assert_eq!(ok("replace('aaa', 'a', 'b', `2`)"), json!("bba"));
    assert_eq!(ok("replace('aaa', 'a', 'b', `-1`)"), json!("bbb"));
    assert_eq!(ok("replace_all('aaa', 'a', 'b')"), json!("bbb"));
    assert_eq!(ok("to_upper('ab')"), json!("AB"));
    assert_eq!(ok("to_lower('AB')"), json!("ab"));
    assert_eq!(ok("trim('--a--', '-')"), json!("a"));
    assert_eq!(ok("trim_prefix('abc', 'ab')"), json!("c"));
    assert_eq!(ok("split('a,b', ',')"), json!(["a", "b"]));
    assert_eq!(ok("split('', ',')"), json!([""]));
    assert_eq!(ok("split('ab', '')"), json!(["a", "b"]));
    assert_eq!(
        ok("regex_replace_all('([a-z]+)-(\\d+)', 'abc-12', '$2-$1')"),
        json!("12-abc")
    );
    assert_eq!(
        ok("regex_replace_all('1', `16777217`, 'x')"),
        json!("x67772x6"),
        "32-bit float formatting"
    );
    assert_eq!(
        ok("regex_replace_all_literal('a', 'aa', '$1')"),
        json!("$1$1")
    );
    assert_eq!(ok("regex_match('12.*', `123`)"), json!(true));
    assert_eq!(ok("regex_match('^b', 'abc')"), json!(false));
    assert_eq!(ok("pattern_match('ng*', 'nginx')"), json!(true));
    assert_eq!(ok("to_boolean('TRUE')"), json!(true));
    assert_eq!(ok("base64_encode('hello')"), json!("aGVsbG8="));
    assert_eq!(ok("base64_decode('aGVsbG8=')"), json!("hello"));
    assert_eq!(ok("path_canonicalize('///')"), json!("/"));
    assert_eq!(ok("path_canonicalize('/a/../b//c/')"), json!("/b/c"));
    assert_eq!(ok("truncate('héllo', `2`)"), json!("hé"));
    assert_eq!(ok("truncate('abc', `-1`)"), json!(""));
    assert_eq!(ok("semver_compare('1.4.9', '<1.5.0')"), json!(true));
    assert_eq!(
        ok("semver_compare('v1.4.9', '<1.5.0')"),
        json!(true),
        "parse errors compare 0.0.0"
    );
    assert_eq!(
        ok("semver_compare('2.1.0', '<2.0.0 || >=3.0.0')"),
        json!(false)
    );
    assert_eq!(
        ok("sha256('a')"),
        json!("ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb")
    );
    assert_eq!(
        ok("sha1('a')"),
        json!("86f7e437faa5a7fce15d1ddcb9eaeaea377667b8")
    );
    assert_eq!(ok("md5('a')"), json!("0cc175b9c0f1b6a831c399e269772661"));
    assert_eq!(
        ok("image_normalize('nginx')"),
        json!("docker.io/nginx:latest")
    );
    assert_eq!(
        ok("image_normalize('ghcr.io/a/b:1')"),
        json!("ghcr.io/a/b:1")
    );
    assert_eq!(ok("is_external_url('http://10.1.2.3/x')"), json!(false));
    assert_eq!(ok("is_external_url('https://8.8.8.8')"), json!(true));
    // Errors.
    assert_eq!(
        err("compare('a', `1`)"),
        "Invalid type for: 1, expected: []jmespath.JpType{\"string\"}"
    );
    assert!(
        err("regex_replace_all('(', 'a', 'b')")
            .starts_with("JMESPath function 'regex_replace_all': ")
    );
    assert!(err("regex_match('(', 'a')").contains("regex parse error"));
    assert_eq!(
        err("to_boolean('yes')"),
        "JMESPath function 'to_boolean': lowercase argument must be 'true' or 'false' (provided: 'yes')"
    );
    assert_eq!(
        err("base64_decode('a')"),
        "illegal base64 data at input byte 0"
    );
    assert_eq!(
        err("base64_decode('aGVsbG8')"),
        "illegal base64 data at input byte 7"
    );
    assert!(err("semver_compare('1.0.0', 'abc')").contains("Could not get version"));
    assert!(
        err("image_normalize('')").starts_with("JMESPath function 'image_normalize': bad image")
    );
    assert!(err("is_external_url('https://example.com')").contains("offline"));
    assert!(err("random('[a-z]{5}')").starts_with("JMESPath function 'random'"));
    assert_eq!(err("x509_decode('x')"), "failed to decode PEM block");
    assert_eq!(
        err("trim('a', `1`)"),
        "Invalid type for: 1, expected: []jmespath.JpType{\"string\"}"
    );
    assert_eq!(
        err("split(`1`, ',')"),
        "Invalid type for: 1, expected: []jmespath.JpType{\"string\"}"
    );
    assert_eq!(
        err("pattern_match('a', labels)"),
        "Invalid type for: map[app:web tier:fe], expected: []jmespath.JpType{\"string\", \"number\"}"
    );
}

#[test]
fn data_functions() {
    assert_eq!(ok("label_match({app: 'web'}, labels)"), json!(true));
    assert_eq!(ok("label_match({app: 'api'}, labels)"), json!(false));
    assert_eq!(ok("parse_json('{\"a\": [1]}')"), json!({"a": [1.0]}));
    assert_eq!(
        ok("parse_yaml('a: 1\nb: [x]')"),
        json!({"a": 1.0, "b": ["x"]})
    );
    assert_eq!(ok("lookup(labels, 'app')"), json!("web"));
    assert_eq!(ok("lookup(labels, 'x')"), J::Null);
    assert_eq!(ok("lookup(strs, `1`)"), json!("a"));
    assert_eq!(ok("lookup(strs, `5`)"), J::Null);
    assert_eq!(
        ok("items(labels, 'k', 'v')"),
        json!([{"k": "app", "v": "web"}, {"k": "tier", "v": "fe"}])
    );
    assert_eq!(
        ok("items(strs, 'i', 'v')"),
        json!([{"i": 0.0, "v": "b"}, {"i": 1.0, "v": "a"}])
    );
    assert_eq!(
        ok("object_from_lists(['a', 'b'], [`1`])"),
        json!({"a": 1.0, "b": null})
    );
    assert!(err("parse_json('{')").contains("EOF"));
    assert!(err("parse_yaml('a: [')").starts_with("error converting YAML to JSON"));
    assert_eq!(
        err("lookup(labels, `1`)"),
        "JMESPath function 'lookup': argument #2 is not of type String"
    );
    assert_eq!(
        err("lookup(strs, `1.5`)"),
        "JMESPath function 'lookup': argument #2: expected an integer number but got: 1.5"
    );
    assert_eq!(
        err("items('a', 'k', 'v')"),
        "Invalid type for: a, expected: []jmespath.JpType{\"object\", \"array\"}"
    );
    assert_eq!(
        err("object_from_lists([labels], [`1`])"),
        "JMESPath function 'object_from_lists': argument #1 is not of type StringArray"
    );
    assert_eq!(
        err("label_match('a', labels)"),
        "Invalid type for: a, expected: []jmespath.JpType{\"object\"}"
    );
}

#[test]
fn arithmetic() {
    assert_eq!(ok("add(`1`, `2`)"), json!(3.0));
    assert_eq!(ok("add('12Ki', '13Ki')"), json!("25Ki"));
    assert_eq!(ok("add('12Ki', '13')"), json!("12301"));
    assert_eq!(ok("add('1h', '30s')"), json!("1h0m30s"));
    assert_eq!(ok("subtract('2Gi', '1Gi')"), json!("1Gi"));
    assert_eq!(ok("subtract('1s', '2s')"), json!("-1s"));
    assert_eq!(ok("multiply('12Ki', `2`)"), json!("24Ki"));
    assert_eq!(ok("multiply(`2.5`, '12Ki')"), json!("30Ki"));
    assert_eq!(ok("multiply('12s', `2`)"), json!("24s"));
    assert_eq!(ok("multiply(`2.5`, '40s')"), json!("1m40s"));
    assert_eq!(ok("multiply('250m', `3`)"), json!("750m"));
    assert_eq!(ok("divide('12s', '5s')"), json!(2.4));
    assert_eq!(ok("divide('512M', '256M')"), json!(2.0));
    assert_eq!(ok("divide('12Ki', `3`)"), json!("4Ki"));
    assert_eq!(ok("divide('10', `3`)"), json!("3"));
    assert_eq!(
        ok("divide('1m', `2`)"),
        json!("0"),
        "'1m' is a quantity (milli): rounded down at scale 3"
    );
    assert_eq!(ok("divide('2m', `2`)"), json!("1m"));
    assert_eq!(ok("divide('1h', `2`)"), json!("30m0s"));
    assert_eq!(ok("modulo(`7`, `3`)"), json!(1.0));
    assert_eq!(ok("modulo('7', '3')"), json!("1"));
    assert_eq!(ok("modulo('70s', '60s')"), json!("10s"));
    assert_eq!(ok("sum(['1Gi', '1Gi'])"), json!("2Gi"));
    assert_eq!(ok("sum([`1`, `2`])"), json!(3.0));
    assert_eq!(ok("round(`1.2345`, `2`)"), json!(1.23));
    assert_eq!(ok("round(`2.5`, `0`)"), json!(3.0));
    // Errors.
    assert_eq!(
        err("add('1h', '30m')"),
        "JMESPath function 'add': Types mismatch"
    );
    assert_eq!(
        err("add('x', `1`)"),
        "JMESPath function 'add': invalid operand"
    );
    assert_eq!(
        err("add(idx, `1`)"),
        "JMESPath function 'add': invalid operand"
    );
    assert_eq!(
        err("sum(`[]`)"),
        "JMESPath function 'sum': at least one element in the array is required"
    );
    assert_eq!(
        err("sum(['1h', `1`])"),
        "JMESPath function 'sum': Types mismatch"
    );
    assert_eq!(
        err("divide(`1`, `0`)"),
        "JMESPath function 'divide': Zero divisor passed"
    );
    assert_eq!(
        err("divide(`1`, '1s')"),
        "JMESPath function 'divide': Types mismatch"
    );
    assert_eq!(
        err("modulo(`14`, `1.5`)"),
        "JMESPath function 'modulo': Non-integer argument(s) passed for modulo"
    );
    assert_eq!(
        err("modulo(`1`, `0`)"),
        "JMESPath function 'modulo': Zero divisor passed"
    );
    assert_eq!(
        err("multiply('1s', '1s')"),
        "JMESPath function 'multiply': Types mismatch"
    );
    assert_eq!(
        err("subtract('1Ki', `1`)"),
        "JMESPath function 'subtract': Types mismatch"
    );
    assert_eq!(
        err("round(`1.5`, `0.5`)"),
        "JMESPath function 'round': Non-integer argument(s) passed for round off"
    );
    assert!(err("round(`1.5`, `-1`)").contains("out of bounds"));
}

#[test]
fn time_functions() {
    assert_eq!(
        ok("time_since('', '2021-01-01T00:00:00Z', '2021-01-08T12:10:00Z')"),
        json!("180h10m0s")
    );
    assert_eq!(
        ok("time_add('2021-01-01T00:00:00Z', '1h30m')"),
        json!("2021-01-01T01:30:00Z")
    );
    assert_eq!(
        ok("time_parse('2006-01-02T15:04:05Z07:00', '2021-01-01T00:00:00+01:00')"),
        json!("2021-01-01T00:00:00+01:00")
    );
    assert_eq!(
        ok("time_parse('1', '1700000000')"),
        json!("2023-11-14T22:13:20Z")
    );
    assert_eq!(
        ok("time_utc('2021-01-01T01:00:00+01:00')"),
        json!("2021-01-01T00:00:00Z")
    );
    assert_eq!(
        ok("time_diff('2021-01-01T00:00:00Z', '2021-01-01T00:00:01Z')"),
        json!("1s")
    );
    assert_eq!(
        ok("time_before('2021-01-01T00:00:00Z', '2021-01-02T00:00:00Z')"),
        json!(true)
    );
    assert_eq!(
        ok("time_after('2021-01-01T00:00:00Z', '2021-01-02T00:00:00Z')"),
        json!(false)
    );
    assert_eq!(
        ok("time_between('2021-01-02T00:00:00Z', '2021-01-01T00:00:00Z', '2021-01-03T00:00:00Z')"),
        json!(true)
    );
    assert_eq!(
        ok("time_truncate('2021-01-01T10:35:00Z', '1h')"),
        json!("2021-01-01T10:00:00Z")
    );
    assert_eq!(
        ok("time_to_cron('2021-01-03T10:35:00Z')"),
        json!("35 10 3 1 0")
    );
    assert!(
        ok("time_now_utc()")
            .as_str()
            .is_some_and(|s| s.ends_with('Z'))
    );
    assert!(ok("time_now()").is_string());
    // Errors.
    assert!(err("time_add('yesterday', '1h')").starts_with("parsing time"));
    assert_eq!(
        err("time_add('2021-01-01T00:00:00Z', '1d')"),
        "time: invalid duration \"1d\""
    );
    assert!(err("time_parse('Jan 2 2006', 'Feb 3 2021')").contains("layout"));
    assert!(err("time_parse('1', 'abc')").contains("invalid syntax"));
    assert!(err("time_since('', 'x', '')").starts_with("parsing time"));
    assert!(err("time_to_cron('x')").starts_with("parsing time"));
    assert!(err("time_utc('x')").starts_with("parsing time"));
    assert!(err("time_diff('x', 'y')").starts_with("parsing time"));
    assert!(err("time_before('x', 'y')").starts_with("parsing time"));
    assert!(err("time_after('x', 'y')").starts_with("parsing time"));
    assert!(err("time_between('x', 'y', 'z')").starts_with("parsing time"));
    assert!(
        err("time_truncate('2021-01-01T00:00:00Z', 'x')").starts_with("time: invalid duration")
    );
}

#[test]
fn every_function_is_covered_here() {
    let src = include_str!("tests.rs");
    for name in super::function_names() {
        assert!(src.contains(&format!("{name}(")), "no test mentions {name}");
    }
}

#[test]
fn exposes_tells_lookups_from_whole_values() {
    let exposes = |e: &str| Expr::compile(e).unwrap().exposes("request");
    for e in [
        "request.object.metadata.name",
        "length(request.object.spec.containers)",
        "request.object.spec.containers[?name == 'a'].image",
        "request.object.spec.containers[*].image | [0]",
        "request.operation == 'CREATE' && request.object.kind",
        "sort_by(request.object.spec.containers, &name)",
        "{a: request.namespace, b: [request.object.kind]}",
        "images.containers.*.tag",
        "element.image",
        "request[0]",
        "request.[object]",
        "request.{o: object, n: namespace}",
    ] {
        assert!(!exposes(e), "{e}");
    }
    for e in [
        "request",
        "@",
        "@.request.object",
        "request.*",
        "request | object",
        "keys(request)",
        "to_string(request)",
        "[request][0].object",
        "request[*]",
        "request == `{}`",
        "*.object",
        "request.[@][0].object",
        "request.object || request",
    ] {
        assert!(exposes(e), "{e}");
    }
}

#[test]
fn lent_fields_are_found_on_their_map_only() {
    use super::Lent;
    let data = Node::from_json(&json!({"request": {"operation": "CREATE"}, "other": {}}));
    let object = Node::from_json(&json!({"kind": "Pod"}));
    let element = Node::from_json(&json!({"image": "nginx"}));
    let top = [("element".to_owned(), &element)];
    let lent = Lent {
        parent: data.get("request"),
        fields: [("object", Some(&object)), ("oldObject", None)],
        root: Some(&data),
        top: &top,
    };
    let search = |e: &str| {
        Expr::compile(e)
            .unwrap()
            .search_lent(&data, &lent)
            .map(|v| v.to_json())
    };
    assert_eq!(search("request.object.kind").unwrap(), json!("Pod"));
    assert_eq!(search("length(request.object)").unwrap(), json!(1.0));
    assert!(search("request.oldObject").unwrap_err().is_not_found());
    assert!(search("other.object").unwrap_err().is_not_found());
    assert!(search("object").unwrap_err().is_not_found());
    assert_eq!(search("element.image").unwrap(), json!("nginx"));
    assert_eq!(
        search("[element.image, other.x || 'y']").unwrap(),
        json!(["nginx", "y"])
    );
    assert!(search("request.element").unwrap_err().is_not_found());
    assert!(search("other.element").unwrap_err().is_not_found());
}

#[test]
fn lists_built_from_parts_flatten_and_project() {
    // `[x, y][]`, `x.*` and projections over them, borrowed or computed.
    assert_eq!(
        ok("[a.list, nums][]"),
        json!([{"c": 1.5}, {"c": 2.5}, {"d": 0}, 3.0, 1.0, 2.0])
    );
    assert_eq!(ok("[a.list, nums][].c"), json!([1.5, 2.5]));
    assert_eq!(
        ok("[a.list, a.b, a.n][]"),
        json!([{"c": 1.5}, {"c": 2.5}, {"d": 0}, "x"])
    );
    assert_eq!(
        ok("[[nums, strs], idx][][]"),
        json!([3.0, 1.0, 2.0, "b", "a", 2])
    );
    assert_eq!(ok("a.[list, nums][][0]"), json!([]));
    assert_eq!(ok("a.[list, nums][*][0]"), json!([{"c": 1.5}]));
    assert_eq!(ok("a.[list][].c"), json!([1.5, 2.5]));
    assert_eq!(ok("[sort(nums), strs][]"), json!([1.0, 2.0, 3.0, "b", "a"]));
    assert_eq!(ok("[a.missing, nums][]"), json!([3.0, 1.0, 2.0]));
    assert_eq!(ok("labels.*"), json!(["web", "fe"]));
    assert_eq!(ok("merge(labels, `{}`).*"), json!(["web", "fe"]));
    assert_eq!(ok("a.list[?c > `2`].c"), json!([2.5]));
    assert_eq!(
        ok("[a.list, a.list][] | [?c].c"),
        json!([1.5, 2.5, 1.5, 2.5])
    );
    // Not a list: null. A missing key on the left of a projection: null; of a flatten: null.
    assert_eq!(ok("a.b[*]"), json!(null));
    assert_eq!(ok("a.b[]"), json!(null));
    assert_eq!(ok("a.missing[*].c"), json!(null));
    assert_eq!(ok("a.missing[]"), json!(null));
    assert_eq!(ok("a.n.[x, y]"), json!(null));
    assert_eq!(ok("labels.app.*"), json!(null));
    // Errors other than a missing key still come out of a projection's left side.
    assert!(err("[abs('x')][*]").starts_with("Invalid type for: x"));
}

#[test]
fn whatever_compiles_is_not_too_deep_to_evaluate() {
    // Each nesting level counts once against the evaluation depth, as in the compiled tree:
    // the deepest expressions that compile still evaluate.
    let deepest = [
        format!("{}nums{}", "[".repeat(128), "]".repeat(128)),
        format!("nums{}", "[]".repeat(64)),
        format!("labels{}", ".*".repeat(127)),
    ];
    for e in deepest {
        let x = Expr::compile(&e).unwrap();
        assert!(x.search(&data()).is_ok(), "{e}");
    }
}

#[test]
fn long_chains_are_refused_before_parsing() {
    let e = Expr::compile(&format!("a{}", ".a".repeat(5_000))).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
    let e = Expr::compile(&vec!["a"; 5_000].join(" || ")).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
    // Long lists are not chains.
    assert!(Expr::compile(&format!("[{}]", vec!["a.b"; 2_000].join(", "))).is_ok());
}

#[test]
fn growing_values_hit_the_evaluation_budget() {
    let data = Node::from_json(&serde_json::json!({}));
    let mut e = "'aa'".to_owned();
    for _ in 0..40 {
        e = format!("replace_all({e}, 'a', 'aa')");
    }
    let err = Expr::compile(&e).unwrap().search(&data).unwrap_err();
    assert!(
        err.to_string().contains("evaluation budget exceeded"),
        "{err}"
    );
    // Copies made by multi-selects double per pipe stage.
    let e = format!("`\"{}\"`{}", "x".repeat(1000), " | [@, @]".repeat(40));
    let err = Expr::compile(&e).unwrap().search(&data).unwrap_err();
    assert!(err.to_string().contains("MiB built"), "{err}");
}

// kyverno/go-jmespath `parseMultiSelectHash` needs no comma between pairs.
#[test]
fn multi_select_hash_pairs_need_no_comma() {
    assert_eq!(
        ok("`{\"a\": 1, \"b\": 2}` | {x: a y: b}"),
        json!({"x": 1.0, "y": 2.0})
    );
    assert_eq!(
        ok("`{\"a\": 1}` | {x: a, \"y z\": a w: {v: a u: a}}"),
        json!({"x": 1.0, "y z": 1.0, "w": {"v": 1.0, "u": 1.0}})
    );
    // Still errors where go-jmespath errors: a trailing comma, a key without a colon,
    // a missing brace.
    for bad in ["{x: a,}", "{x: a y}", "{x: a", "{x: a 1: b}"] {
        assert!(Expr::compile(bad).is_err(), "{bad}");
    }
}

//! What the Kubernetes CEL environment lacks. ClusterPolicy `validate.cel` rules are compiled by
//! Kyverno v1.19.0 in Kubernetes' base environment (`pkg/admissionpolicy/compiler.go`
//! `NewCompiler`: `environment.MustBaseEnvSet` plus the `orValue` compatibility), without
//! Kyverno's libraries and without cel-go's `math`, `base64`, `regex` extensions. kpol
//! evaluates every expression in one shared environment, so this module finds, in a parsed
//! expression, the references that environment would not declare and words them as cel-go's
//! checker does (checked against the v1.19.0 CLI: `undeclared reference to 'image' (in
//! container '')`, each error with its line and a caret under the column).

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, SourceInfo};

/// The identifiers that environment declares besides the optional `params` and `authorizer`:
/// its variables, type names, and the namespaces of its qualified functions.
const DECLARED: &[&str] = &[
    "object",
    "oldObject",
    "request",
    "namespaceObject",
    "variables",
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "type",
    "null_type",
    "dyn",
    "google",
    "format",
    "lists",
    "optional",
    "sets",
    "strings",
];

/// The variables an expression is compiled with beyond the fixed ones (Kubernetes'
/// `OptionalVariableDeclarations`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Optional {
    /// `params`: a `validate.cel` rule with `paramKind` and `paramRef`, a VAP with `paramKind`.
    pub params: bool,
    /// `authorizer`: `validate.cel` validations (not a VAP's).
    pub authorizer: bool,
}

/// The macros of cel-go's two-variable comprehensions.
const TWO_VAR: &[&str] = &[
    "all",
    "exists",
    "existsOne",
    "exists_one",
    "transformList",
    "transformMap",
    "transformMapEntry",
];

/// Global functions that are not there.
const FUNCTIONS: &[&str] = &[
    "extractPayload",
    "getImageData",
    "image",
    "isImage",
    "parseImageReference",
    "parseServiceAccount",
    "random",
    "verifyAttestationSignatures",
    "verifyImageSignatures",
];

/// Receiver functions no library of that environment declares (Kyverno's image values).
const METHODS: &[&str] = &[
    "containsDigest",
    "digest",
    "identifier",
    "registry",
    "repository",
    "tag",
];

/// `p` as Kyverno compiles a `validate.cel` or ValidatingAdmissionPolicy expression, in
/// Kubernetes' base environment: a reference to a library that environment lacks (Kyverno's
/// `image`, `resource`, `json`, …, which kpol's shared environment has) makes it a program that
/// does not compile (its error is [`undeclared_in_kubernetes_env`]'s).
pub fn in_kubernetes_env(p: &mut super::Program, optional: Optional) {
    match &mut p.expr {
        Ok(expr) => {
            if declares_all(expr, &p.text, optional) {
                return;
            }
            if let Some(e) = undeclared_in_kubernetes_env(&p.text, optional) {
                p.expr = Err(e);
            }
        }
        // A syntax error gets cel-go's source line and caret too.
        Err(e) => {
            if let Some(caret) = syntax_caret(&p.text, e) {
                e.push_str(&caret);
            }
        }
    }
}

/// Whether kpol's own parse `expr` of `text` shows that the Kubernetes environment declares
/// everything `text` references (perf: start-up, docs/PERFORMANCE.md: the answer otherwise
/// parses `text` again with the standard macros). The two parses differ only in what kpol's
/// macros expand: `orValue`, `lists.range` and the two-variable comprehensions keep every name
/// of their operands free or bound as the standard parse does (a free name found in one is
/// found in the other; the two-variable ones bind their two names in the same operands), and
/// kpol's instrumentation adds only global calls [`FUNCTIONS`] does not list (and binds only
/// names no identifier can spell: `#unused`, `@kpol_pair`, `@result`). The macros whose
/// expansion hides a name the standard parse reports ([`HIDING_MACROS`]) send the text to the
/// full check, as does any name found: `false` means "not known", not "undeclared".
fn declares_all(expr: &IdedExpr, text: &str, optional: Optional) -> bool {
    if HIDING_MACROS.iter().any(|m| text.contains(m)) {
        return false;
    }
    let mut found = Vec::new();
    walk(
        expr,
        &mut scope(optional),
        &SourceInfo::default(),
        &mut found,
    );
    found.is_empty()
}

/// The macros of kpol's environment, absent from the standard parse, that bind or drop a name
/// the standard parse leaves a free identifier: `cel.bind(x, …)`, `sortBy(e, …)`,
/// `math.greatest`/`least` (`math` is not declared) and the optional library's
/// `optMap(v, …)`/`optFlatMap(v, …)`. A text that contains one anywhere skips the shortcut.
const HIDING_MACROS: &[&str] = &[
    "bind",
    "sortBy",
    "greatest",
    "least",
    "optMap",
    "optFlatMap",
];

/// The source line and caret under a syntax error `compilation failed: ERROR: <input>:L:C: …`
/// (one error, as kpol's parser reports it).
fn syntax_caret(text: &str, error: &str) -> Option<String> {
    let at = error.strip_prefix("compilation failed: ERROR: <input>:")?;
    if error.contains("\n |") {
        return None;
    }
    let mut parts = at.splitn(3, ':');
    let line: usize = parts.next()?.parse().ok()?;
    let column: usize = parts.next()?.parse().ok()?;
    let source_line = text.split('\n').nth(line.checked_sub(1)?)?;
    Some(format!(
        "\n | {source_line}\n | {}^",
        ".".repeat(column.checked_sub(1)?)
    ))
}

/// cel-go's compile error for `text` in Kubernetes' base environment, when it references what
/// that environment lacks: `compilation failed: ERROR: <input>:L:C: undeclared reference to
/// 'x' (in container '')`, the line and a caret after each. `None`: nothing undeclared found
/// (or the text does not parse here; its syntax error is reported elsewhere).
pub fn undeclared_in_kubernetes_env(text: &str, optional: Optional) -> Option<String> {
    // perf: start-up (docs/PERFORMANCE.md): this parses `text` a second time, with the
    // standard macros; autogen repeats texts, and the answer depends on the text and
    // `optional` alone.
    static MEMO: super::compile::Memo<(String, bool, bool), Option<String>> =
        super::compile::Memo::new();
    if text.len() > super::compile::MEMO_TEXT {
        return undeclared_uncached(text, optional);
    }
    MEMO.get_or(
        (text.to_owned(), optional.params, optional.authorizer),
        || undeclared_uncached(text, optional),
    )
}

fn undeclared_uncached(text: &str, optional: Optional) -> Option<String> {
    let found = if super::compile::chain(text) < 12 {
        undeclared(text, optional)
    } else {
        // A long expression is parsed on a large stack, as compiling it was.
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(super::compile::PARSER_STACK)
                .spawn_scoped(s, || undeclared(text, optional))
                .ok()
                .and_then(|h| h.join().ok())
                .unwrap_or_default()
        })
    };
    if found.is_empty() {
        return None;
    }
    let errors: Vec<String> = found
        .iter()
        .map(|(offset, name)| caret_error(text, *offset, name))
        .collect();
    Some(format!("compilation failed: {}", errors.join("\n")))
}

/// The undeclared names of `text` with their character offsets (none when it does not parse,
/// or nests beyond what kpol compiles).
fn undeclared(text: &str, optional: Optional) -> Vec<(u32, String)> {
    // The standard macros only: `cel.bind` and `math.greatest`/`least`, which kpol's
    // environment expands, stay the calls that environment cannot resolve.
    let parser = cel::parser::Parser::new().enable_optional_syntax(true);
    let Ok((expr, info)) = parser.parse_with_source_info(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if super::compile::depth(&expr) <= super::compile::MAX_DEPTH {
        walk(&expr, &mut scope(optional), &info, &mut found);
    }
    // cel-go lists its errors in source order.
    found.sort_by_key(|(offset, _)| *offset);
    found
}

/// The environment's names: [`DECLARED`] and the optional variables.
fn scope(optional: Optional) -> Scope {
    let mut scope = Scope::default();
    scope.bound.extend(DECLARED.iter().map(|d| (*d).to_owned()));
    if optional.params {
        scope.bound.push("params".to_owned());
    }
    if optional.authorizer {
        scope.bound.push("authorizer".to_owned());
    }
    scope
}

/// The names in scope while walking: the environment's and the comprehension variables.
#[derive(Default)]
struct Scope {
    bound: Vec<String>,
}

/// The undeclared names under `e`, with their character offsets.
fn walk(e: &IdedExpr, scope: &mut Scope, info: &SourceInfo, out: &mut Vec<(u32, String)>) {
    let at = |id: u64| info.offset_for(id).map_or(0, |(start, _)| start);
    let free = |name: &str, scope: &Scope| !scope.bound.iter().any(|b| b == name);
    match &e.expr {
        Expr::Ident(name) if free(name, scope) => out.push((at(e.id), name.clone())),
        Expr::Call(c) => {
            let undeclared_fn = match c.target.as_deref() {
                None => FUNCTIONS.contains(&c.func_name.as_str()) && free(&c.func_name, scope),
                Some(target) => {
                    walk(target, scope, info, out);
                    METHODS.contains(&c.func_name.as_str())
                        || matches!(&target.expr, Expr::Ident(n) if free(n, scope))
                }
            };
            // A two-variable comprehension (`l.all(i, v, …)`, Kubernetes' environment has them;
            // the `cel` crate parses them as calls): its two names are bound in the rest.
            let depth = scope.bound.len();
            let mut args = &c.args[..];
            if c.target.is_some()
                && TWO_VAR.contains(&c.func_name.as_str())
                && let [first, second, rest @ ..] = args
                && !rest.is_empty()
                && let (Expr::Ident(a), Expr::Ident(b)) = (&first.expr, &second.expr)
            {
                scope.bound.extend([a.clone(), b.clone()]);
                args = rest;
            }
            for a in args {
                walk(a, scope, info, out);
            }
            scope.bound.truncate(depth);
            if undeclared_fn {
                out.push((at(e.id), c.func_name.clone()));
            }
        }
        Expr::Select(s) => walk(&s.operand, scope, info, out),
        Expr::List(l) => {
            for x in &l.elements {
                walk(x, scope, info, out);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    walk(&me.key, scope, info, out);
                    walk(&me.value, scope, info, out);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value, scope, info, out);
                }
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, scope, info, out);
            walk(&c.accu_init, scope, info, out);
            let depth = scope.bound.len();
            scope.bound.push(c.iter_var.clone());
            scope.bound.extend(c.iter_var2.clone());
            scope.bound.push(c.accu_var.clone());
            for x in [&c.loop_cond, &c.loop_step, &c.result] {
                walk(x, scope, info, out);
            }
            scope.bound.truncate(depth);
        }
        _ => {}
    }
}

/// One cel-go error: `ERROR: <input>:L:C: …`, the source line, and dots up to a caret.
fn caret_error(text: &str, offset: u32, name: &str) -> String {
    let offset = usize::try_from(offset).unwrap_or(0);
    let (mut line, mut start) = (1, 0);
    for (i, ch) in text.chars().enumerate().take(offset) {
        if ch == '\n' {
            line += 1;
            start = i + 1;
        }
    }
    let column = offset - start + 1;
    let source_line: String = text
        .chars()
        .skip(start)
        .take_while(|c| *c != '\n')
        .collect();
    format!(
        "ERROR: <input>:{line}:{column}: undeclared reference to '{name}' (in container '')\n | \
         {source_line}\n | {}^",
        ".".repeat(column - 1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undeclared_in_kubernetes_env(text: &str) -> Option<String> {
        super::undeclared_in_kubernetes_env(text, Optional::default())
    }

    // The memo keeps the answer per text and declared variables: `params` is undeclared
    // without `Optional::params` and declared with it, whichever was asked first.
    #[test]
    fn the_memo_keys_on_the_declared_variables() {
        let text = "params.x == object.metadata.name";
        let with = Optional {
            params: true,
            authorizer: false,
        };
        for _ in 0..2 {
            let none = super::undeclared_in_kubernetes_env(text, Optional::default());
            assert!(none.is_some_and(|e| e.contains("undeclared reference to 'params'")));
            assert_eq!(super::undeclared_in_kubernetes_env(text, with), None);
            assert_eq!(
                super::undeclared_in_kubernetes_env(text, with),
                undeclared_uncached(text, with)
            );
        }
    }

    // The shortcut over kpol's own parse never says "all declared" where the full check finds
    // an undeclared name, and says it for the common case.
    #[test]
    fn the_shortcut_agrees_with_the_standard_parse() {
        let all = Optional {
            params: true,
            authorizer: true,
        };
        for (text, declared) in [
            ("object.spec.containers.all(c, c.image != '')", true),
            ("object.metadata.?labels.tag.orValue('') == ''", true),
            ("foo.orValue(1) == 1", false),
            (
                "lists.range(3).size() == 3 && [1].all(i, v, v == i + 1)",
                true,
            ),
            ("{'a': 1}.transformMap(k, v, v + 1).size() == 1", true),
            ("[1].exists(i, v, w == 1)", false),
            ("[1].exists_one(i, v, v == 1)", true),
            ("cel.bind(x, 1, x == 1)", false),
            ("math.greatest(1, 2) == 2", false),
            ("[2, 1].sortBy(e, e)[0] == 1", false),
            ("optional.of(1).optMap(v, v + 1).hasValue()", false),
            (
                "optional.of(1).optFlatMap(v, optional.of(v)).hasValue()",
                false,
            ),
            (
                "object.?spec.replicas.orValue(1) > 0 && lists.range(2).all(i, i >= 0)",
                true,
            ),
            ("image('nginx').registry() == 'docker.io'", false),
            ("object.spec.containers.all(c, c.tag() == '')", false),
            ("params.x == object.metadata.name + 'a' + 'b'", true),
        ] {
            let p = crate::cel::compile(text, crate::source::Span::default()).0;
            let expr = p.expr.as_ref().expect(text);
            assert_eq!(undeclared_uncached(text, all).is_none(), declared, "{text}");
            assert!(
                !declares_all(expr, text, all) || declared,
                "{text}: the shortcut says declared"
            );
            if !HIDING_MACROS.iter().any(|m| text.contains(m)) {
                assert_eq!(declares_all(expr, text, all), declared, "{text}");
            }
        }
    }

    // Messages as the Kyverno v1.19.0 CLI gives them for validate.cel rules.
    #[test]
    fn kyverno_libraries_are_undeclared() {
        let e = undeclared_in_kubernetes_env(
            "object.spec.containers.all(c, image.GetMetadata(c.image).config.architecture == 'amd64')",
        );
        assert_eq!(
            e.as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:31: undeclared reference to 'image' (in container '')\n \
                 | object.spec.containers.all(c, image.GetMetadata(c.image).config.architecture == 'amd64')\n \
                 | ..............................^\n\
                 ERROR: <input>:1:48: undeclared reference to 'GetMetadata' (in container '')\n \
                 | object.spec.containers.all(c, image.GetMetadata(c.image).config.architecture == 'amd64')\n \
                 | ...............................................^"
            )
        );
        let e = undeclared_in_kubernetes_env(
            "image('nginx').registry() == 'docker.io' && image('nginx').tag() == 'latest'",
        )
        .unwrap();
        let heads: Vec<&str> = e.lines().filter(|l| l.contains("ERROR")).collect();
        assert_eq!(
            heads,
            [
                "compilation failed: ERROR: <input>:1:6: undeclared reference to 'image' (in container '')",
                "ERROR: <input>:1:24: undeclared reference to 'registry' (in container '')",
                "ERROR: <input>:1:50: undeclared reference to 'image' (in container '')",
                "ERROR: <input>:1:63: undeclared reference to 'tag' (in container '')",
            ]
        );
        let e = undeclared_in_kubernetes_env("isImage('nginx')").unwrap();
        assert!(
            e.starts_with(
                "compilation failed: ERROR: <input>:1:8: undeclared reference to 'isImage'"
            ),
            "{e}"
        );
        let e = undeclared_in_kubernetes_env("yaml.parse('a: 1') != null").unwrap();
        assert!(
            e.contains("<input>:1:11: undeclared reference to 'parse'"),
            "{e}"
        );
    }

    // As the Kyverno v1.19.0 CLI words a validate.cel syntax error.
    #[test]
    fn syntax_errors_get_the_line_and_caret() {
        let text = "object.spec.containers.all(c, c.image ==)";
        let mut p = crate::cel::compile(text, crate::source::Span::default()).0;
        in_kubernetes_env(&mut p, Optional::default());
        let e = p.expr.err().unwrap_or_default();
        assert!(
            e.starts_with(
                "compilation failed: ERROR: <input>:1:41: Syntax error: mismatched input ')'"
            ),
            "{e}"
        );
        assert!(
            e.ends_with(&format!("\n | {text}\n | {}^", ".".repeat(40))),
            "{e}"
        );
    }

    // Macros kpol's environment expands stay calls here, as in Kubernetes' environment.
    #[test]
    fn unexpanded_macros_are_undeclared() {
        let heads = |text: &str| -> Vec<String> {
            undeclared_in_kubernetes_env(text)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains("ERROR"))
                .map(|l| l.split("ERROR: ").nth(1).unwrap_or("").to_owned())
                .collect()
        };
        assert_eq!(
            heads("cel.bind(x, 1, x == 1)"),
            [
                "<input>:1:1: undeclared reference to 'cel' (in container '')",
                "<input>:1:9: undeclared reference to 'bind' (in container '')",
                "<input>:1:10: undeclared reference to 'x' (in container '')",
                "<input>:1:16: undeclared reference to 'x' (in container '')",
            ]
        );
        assert_eq!(
            heads("math.greatest(1, 2) == 2"),
            [
                "<input>:1:1: undeclared reference to 'math' (in container '')",
                "<input>:1:14: undeclared reference to 'greatest' (in container '')",
            ]
        );
    }

    #[test]
    fn bound_names_and_kubernetes_libraries_are_declared() {
        for ok in [
            "object.spec.containers.all(image, image.image.startsWith('nginx'))",
            "'abc'.findAll('[a-z]').size() == 3",
            "quantity('1Gi').isGreaterThan(quantity('1Mi'))",
            "object.metadata.?labels.tag.orValue('') == ''",
            "[1].all(i, v, v == 1)",
            "type(duration('1s')) == google.protobuf.Duration && type(1) == int",
            "optional.of(1).hasValue() && sets.equivalent([1], [1]) && lists.range(3).size() == 3",
            "strings.quote('a') != '' && format.named('dns1123Label').hasValue()",
            "request.operation == 'CREATE' && oldObject == null && namespaceObject != null",
            "variables.x == authorizer",
        ] {
            let all = Optional {
                params: true,
                authorizer: true,
            };
            assert_eq!(super::undeclared_in_kubernetes_env(ok, all), None, "{ok}");
        }
    }

    // Other names are undeclared too; `params` is declared only with a paramKind (and, for
    // validate.cel, a paramRef), `authorizer` only in validate.cel (the v1.19.0 CLI says so).
    #[test]
    fn other_names_are_undeclared() {
        let first = |text: &str, o: Optional| {
            super::undeclared_in_kubernetes_env(text, o)
                .and_then(|e| e.lines().next().map(str::to_owned))
        };
        assert_eq!(
            first("foo.bar == 1", Optional::default()).as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"
            )
        );
        assert!(first("params == null", Optional::default()).is_some());
        let with_params = Optional {
            params: true,
            authorizer: false,
        };
        assert_eq!(first("params == null", with_params), None);
        assert!(first("authorizer != null", with_params).is_some());
    }
}

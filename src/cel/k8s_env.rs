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

/// Library namespaces that are not there: `name.function(…)` is undeclared (both names).
const NAMESPACES: &[&str] = &[
    "base64",
    "cel",
    "envoy",
    "generator",
    "globalContext",
    "gzip",
    "http",
    "image",
    "imagedata",
    "json",
    "jsonpatch",
    "jwks",
    "jwt",
    "math",
    "random",
    "regex",
    "resource",
    "time",
    "transform",
    "user",
    "x509",
    "yaml",
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
pub fn in_kubernetes_env(p: &mut super::Program) {
    if p.expr.is_ok()
        && let Some(e) = undeclared_in_kubernetes_env(&p.text)
    {
        p.expr = Err(e);
    }
}

/// cel-go's compile error for `text` in Kubernetes' base environment, when it references what
/// that environment lacks: `compilation failed: ERROR: <input>:L:C: undeclared reference to
/// 'x' (in container '')`, the line and a caret after each. `None`: nothing undeclared found
/// (or the text does not parse here; its syntax error is reported elsewhere).
pub fn undeclared_in_kubernetes_env(text: &str) -> Option<String> {
    let found = if super::compile::chain(text) < 12 {
        undeclared(text)
    } else {
        // A long expression is parsed on a large stack, as compiling it was.
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(super::compile::PARSER_STACK)
                .spawn_scoped(s, || undeclared(text))
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
fn undeclared(text: &str) -> Vec<(u32, String)> {
    // The standard macros only: `cel.bind` and `math.greatest`/`least`, which kpol's
    // environment expands, stay the calls that environment cannot resolve.
    let parser = cel::parser::Parser::new().enable_optional_syntax(true);
    let Ok((expr, info)) = parser.parse_with_source_info(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if super::compile::depth(&expr) <= super::compile::MAX_DEPTH {
        let mut scope = Scope::default();
        walk(&expr, &mut scope, &info, &mut found);
    }
    // cel-go lists its errors in source order.
    found.sort_by_key(|(offset, _)| *offset);
    found
}

/// The names in scope while walking: comprehension variables (declared), and the variables
/// of an undeclared `cel.bind` (undeclared, as cel-go reports them).
#[derive(Default)]
struct Scope {
    bound: Vec<String>,
    unbound: Vec<String>,
}

/// The undeclared names under `e`, with their character offsets.
fn walk(e: &IdedExpr, scope: &mut Scope, info: &SourceInfo, out: &mut Vec<(u32, String)>) {
    let at = |id: u64| info.offset_for(id).map_or(0, |(start, _)| start);
    let free = |name: &str, scope: &Scope| !scope.bound.iter().any(|b| b == name);
    match &e.expr {
        Expr::Ident(name)
            if (NAMESPACES.contains(&name.as_str()) || scope.unbound.contains(name))
                && free(name, scope) =>
        {
            out.push((at(e.id), name.clone()));
        }
        Expr::Call(c) => {
            let undeclared_fn = match c.target.as_deref() {
                None => FUNCTIONS.contains(&c.func_name.as_str()) && free(&c.func_name, scope),
                Some(target) => {
                    walk(target, scope, info, out);
                    METHODS.contains(&c.func_name.as_str())
                        || matches!(&target.expr, Expr::Ident(n)
                            if NAMESPACES.contains(&n.as_str()) && free(n, scope))
                }
            };
            // `cel.bind(v, init, body)` unexpanded: `v` is an undeclared name in its arguments.
            let bind_var = match (c.target.as_deref(), c.args.first()) {
                (Some(t), Some(v)) if c.func_name == "bind" && undeclared_fn => {
                    match (&t.expr, &v.expr) {
                        (Expr::Ident(t), Expr::Ident(v)) if t == "cel" => Some(v.clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            let depth = scope.unbound.len();
            scope.unbound.extend(bind_var);
            for a in &c.args {
                walk(a, scope, info, out);
            }
            scope.unbound.truncate(depth);
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
        ] {
            assert_eq!(undeclared_in_kubernetes_env(ok), None, "{ok}");
        }
    }
}

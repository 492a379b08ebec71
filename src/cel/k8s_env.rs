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
    let Ok((expr, info)) = super::env::env().parser().parse_with_source_info(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if super::compile::depth(&expr) <= super::compile::MAX_DEPTH {
        walk(&expr, &mut Vec::new(), &info, &mut found);
    }
    found
}

/// The undeclared names under `e` in the checker's order (a call's receiver and arguments
/// before its own function), with their character offsets; `bound`: the comprehension
/// variables in scope.
fn walk(e: &IdedExpr, bound: &mut Vec<String>, info: &SourceInfo, out: &mut Vec<(u32, String)>) {
    let at = |id: u64| info.offset_for(id).map_or(0, |(start, _)| start);
    let free = |name: &str, bound: &[String]| !bound.iter().any(|b| b == name);
    match &e.expr {
        Expr::Ident(name) if NAMESPACES.contains(&name.as_str()) && free(name, bound) => {
            out.push((at(e.id), name.clone()));
        }
        Expr::Call(c) => match c.target.as_deref() {
            None if FUNCTIONS.contains(&c.func_name.as_str()) && free(&c.func_name, bound) => {
                // An unknown global function: its arguments are not checked.
                out.push((at(e.id), c.func_name.clone()));
            }
            None => {
                for a in &c.args {
                    walk(a, bound, info, out);
                }
            }
            Some(target) => {
                let namespaced = matches!(&target.expr, Expr::Ident(n)
                    if NAMESPACES.contains(&n.as_str()) && free(n, bound));
                walk(target, bound, info, out);
                for a in &c.args {
                    walk(a, bound, info, out);
                }
                if namespaced || METHODS.contains(&c.func_name.as_str()) {
                    out.push((at(e.id), c.func_name.clone()));
                }
            }
        },
        Expr::Select(s) => walk(&s.operand, bound, info, out),
        Expr::List(l) => {
            for x in &l.elements {
                walk(x, bound, info, out);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    walk(&me.key, bound, info, out);
                    walk(&me.value, bound, info, out);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value, bound, info, out);
                }
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, bound, info, out);
            walk(&c.accu_init, bound, info, out);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            bound.extend(c.iter_var2.clone());
            bound.push(c.accu_var.clone());
            for x in [&c.loop_cond, &c.loop_step, &c.result] {
                walk(x, bound, info, out);
            }
            bound.truncate(depth);
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

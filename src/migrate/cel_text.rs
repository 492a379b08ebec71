//! Spelling CEL: string literals, field selection that survives CEL's reserved words and
//! Kubernetes' dotted keys, presence tests, and Kyverno wildcards as anchored regexes.

/// Words CEL reserves (cel-spec "Syntax") that its parsers refuse after a dot (`namespace`,
/// reserved too, is accepted there by cel-go and kpol, and Kyverno's own policies select it).
const RESERVED: &[&str] = &[
    "as", "break", "const", "continue", "else", "false", "for", "function", "if", "import", "in",
    "let", "loop", "package", "null", "return", "true", "var", "void", "while",
];

/// A CEL single-quoted string literal.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Whether `key` can be written as `.key`.
fn is_ident(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&key)
}

/// `base.key`, or `base['key']` where `.key` is not valid CEL.
pub(crate) fn select(base: &str, key: &str) -> String {
    if is_ident(key) {
        format!("{base}.{key}")
    } else {
        format!("{base}[{}]", quote(key))
    }
}

/// Whether the map `base` has `key`: `has(base.key)`, or `'key' in base`.
pub(crate) fn has(base: &str, key: &str) -> String {
    if is_ident(key) {
        format!("has({base}.{key})")
    } else {
        format!("{} in {base}", quote(key))
    }
}

/// Whether `s` holds a Kyverno wildcard (`*` or `?`).
pub(crate) fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// A Kyverno wildcard (`*` any run, `?` one character, the rest literal) as an anchored RE2
/// regex.
pub(crate) fn wildcard_regex(pattern: &str) -> String {
    let mut re = String::from("^");
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c if "\\.+()[]{}|^$".contains(c) => {
                re.push('\\');
                re.push(c);
            }
            c => re.push(c),
        }
    }
    re.push('$');
    re
}

/// `text` (a CEL string expression) against the wildcard `pattern`: equality when it has no
/// wildcard, `true` for `*`, `!= ''` for `?*`, else a regex match.
pub(crate) fn wildcard_test(text: &str, pattern: &str) -> String {
    match pattern {
        "*" => "true".to_owned(),
        "?*" => format!("{text} != ''"),
        p if !has_wildcard(p) => format!("{text} == {}", quote(p)),
        p => format!("{text}.matches({})", quote(&wildcard_regex(p))),
    }
}

/// The conjunction of `parts` (`true` when empty), each parenthesised when it has operators.
pub(crate) fn and(parts: &[String]) -> String {
    join(parts, " && ", "true")
}

/// The disjunction of `parts` (`false` when empty).
pub(crate) fn or(parts: &[String]) -> String {
    join(parts, " || ", "false")
}

fn join(parts: &[String], sep: &str, empty: &str) -> String {
    let parts: Vec<&String> = parts
        .iter()
        .filter(|p| p.as_str() != if sep == " && " { "true" } else { "false" })
        .collect();
    match parts.as_slice() {
        [] => empty.to_owned(),
        [one] => (*one).clone(),
        many => many.iter().map(|p| paren(p)).collect::<Vec<_>>().join(sep),
    }
}

/// `!e`, parenthesised as needed.
pub(crate) fn not(e: &str) -> String {
    match e {
        "true" => "false".to_owned(),
        "false" => "true".to_owned(),
        e => format!("!{}", paren(e)),
    }
}

/// `e` in parentheses unless it is one term already.
pub(crate) fn paren(e: &str) -> String {
    let simple = !e.contains(' ') || (e.starts_with('(') && closes_at_end(e));
    if simple {
        e.to_owned()
    } else {
        format!("({e})")
    }
}

/// Whether the `(` that opens `e` is closed by its last character.
fn closes_at_end(e: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let n = e.chars().count();
    for (i, c) in e.chars().enumerate() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i + 1 != n {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// `e` with each reference `variables.OLD` (a whole identifier, outside string literals)
/// spelled `variables.NEW`, for the pairs of `renames`.
pub(crate) fn rename_variables(e: &str, renames: &[(String, String)]) -> String {
    if renames.is_empty() {
        return e.to_owned();
    }
    replace_variables(e, &|name| {
        renames
            .iter()
            .find(|(old, _)| old == name)
            .map(|(_, new)| format!("variables.{new}"))
    })
}

/// `e` with each reference `variables.NAME` of `vars` replaced by that variable's expression
/// (in parentheses, its own references replaced too): what a match condition, which cannot
/// read the policy's variables, must spell out.
pub(crate) fn inline_variables(e: &str, vars: &[(String, String)]) -> String {
    replace_variables(e, &|name| {
        let i = vars.iter().position(|(n, _)| n == name)?;
        // A variable reads only those defined before it.
        Some(format!("({})", inline_variables(&vars[i].1, &vars[..i])))
    })
}

/// `e` with each whole reference `variables.NAME` (outside string literals) for which
/// `with` gives a text replaced by it.
fn replace_variables(e: &str, with: &dyn Fn(&str) -> Option<String>) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(e.len());
    let mut quote: Option<char> = None;
    let mut rest = e;
    while let Some(c) = rest.chars().next() {
        if let Some(q) = quote {
            if c == '\\' {
                let n = rest[1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&rest[..1 + n]);
                rest = &rest[1 + n..];
                continue;
            }
            if c == q {
                quote = None;
            }
        } else if c == '\'' || c == '"' {
            quote = Some(c);
        } else if rest.starts_with("variables.") && !out.ends_with(|p: char| ident(p) || p == '.') {
            let name_len = rest[10..]
                .find(|c: char| !ident(c))
                .unwrap_or(rest.len() - 10);
            let name = &rest[10..10 + name_len];
            if let Some(text) = with(name) {
                out.push_str(&text);
                rest = &rest[10 + name_len..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `e` as Kyverno's type checker sees a value that may be null: a selection path from a
/// dynamic root (`object`, `oldObject`, `element`, a comprehension variable `x0`, `k`,
/// `y`) is `dyn` already (`request` is typed: its `namespace` is a string); anything else (a `filter`/`map` result, a
/// string function, a variable typed by its expression) is wrapped in `dyn(…)`, since the
/// checker rejects comparing a typed list or string with `null` and a conditional whose
/// branches are a typed value and `null`.
pub(crate) fn nullable(e: &str) -> String {
    let t = e.trim();
    if t == "null" || dyn_path(t) {
        e.to_owned()
    } else {
        format!("dyn({})", strip_paren(t))
    }
}

/// `e` without one pair of parentheses around the whole of it.
fn strip_paren(e: &str) -> &str {
    if e.starts_with('(') && e.ends_with(')') && closes_at_end(e) {
        &e[1..e.len() - 1]
    } else {
        e
    }
}

/// Whether `e` is a selection path (`.field`, `[N]`, `['key']`) from a dynamic root.
fn dyn_path(e: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let root_len = e.find(|c: char| !ident(c)).unwrap_or(e.len());
    let root = &e[..root_len];
    let numbered = root
        .strip_prefix('x')
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
    if !(matches!(root, "object" | "oldObject" | "element" | "k" | "y") || numbered) {
        return false;
    }
    let mut rest = &e[root_len..];
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let n = r.find(|c: char| !ident(c)).unwrap_or(r.len());
            if n == 0 || r.starts_with(|c: char| c.is_ascii_digit()) {
                return false;
            }
            rest = &r[n..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let Some(n) = r.find(['\'', '[', ']', '\\']) else {
                return false;
            };
            let Some(after) = r[n..].strip_prefix("']") else {
                return false;
            };
            rest = after;
        } else if let Some(r) = rest.strip_prefix('[') {
            let n = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            let Some(after) = r[n..].strip_prefix(']').filter(|_| n > 0) else {
                return false;
            };
            rest = after;
        } else {
            return false;
        }
    }
    true
}

/// A CEL expression that fails when evaluated (`int` of a text that is no number), naming
/// `why`. The text is joined with a value known only at run time: Kyverno's compiler folds
/// constant subexpressions and would reject `int('…')` when the policy is loaded.
pub(crate) fn runtime_error(why: &str) -> String {
    format!("int({} + string(request.operation))", quote(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_literals() {
        assert_eq!(
            select("object.metadata", "namespace"),
            "object.metadata.namespace"
        );
        assert_eq!(select("o", "in"), "o['in']");
        assert_eq!(
            select("object.metadata", "labels"),
            "object.metadata.labels"
        );
        assert_eq!(
            has("l", "app.kubernetes.io/name"),
            "'app.kubernetes.io/name' in l"
        );
        assert_eq!(has("o", "spec"), "has(o.spec)");
        assert_eq!(quote("it's \\"), "'it\\'s \\\\'");
    }

    #[test]
    fn wildcards() {
        assert_eq!(wildcard_test("x", "*"), "true");
        assert_eq!(wildcard_test("x", "a.b"), "x == 'a.b'");
        assert_eq!(wildcard_test("x", "*:latest"), "x.matches('^.*:latest$')");
        assert_eq!(wildcard_regex("a?.b"), "^a.\\.b$");
    }

    #[test]
    fn connectives() {
        assert_eq!(and(&[]), "true");
        assert_eq!(and(&["a".into(), "true".into()]), "a");
        assert_eq!(and(&["a || b".into(), "c".into()]), "(a || b) && c");
        assert_eq!(not("(a || b)"), "!(a || b)");
        assert_eq!(paren("(a) || (b)"), "((a) || (b))");
    }
}

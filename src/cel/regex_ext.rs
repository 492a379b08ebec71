//! CEL's regex extension as Kyverno's environment loads it (cel-go `ext.Regex`, version 1):
//! `regex.replace(target, pattern, replacement[, count])`, `regex.extract(target, pattern)` →
//! `optional<string>`, `regex.extractAll(target, pattern)` → `list<string>`. Patterns are RE2,
//! which the `regex` crate reads the same way for the syntax both accept.

use std::sync::Arc;

use cel::extractors::Arguments;
use cel::objects::OptionalValue;
use cel::{Context, ExecutionError, Value};

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("regex.replace", replace);
    let _ = ctx.add_function("regex.extract", extract);
    let _ = ctx.add_function("regex.extractAll", extract_all);
}

fn string_arg<'a>(function: &str, v: &'a Value) -> Result<&'a str, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.as_str()),
        other => Err(ExecutionError::function_error(
            function,
            format!("no such overload: argument of type '{}'", other.type_of()),
        )),
    }
}

fn compile(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern).map_err(|e| ExecutionError::function_error(function, e))
}

/// Every match, up to `count` of them (negative: all; zero: none), replaced by the
/// replacement with `\N` standing for group N and `\\` for a backslash. The replacement is
/// checked at each match, so a bad one is an error only where something matched.
fn replace(Arguments(args): Arguments) -> Result<Value, ExecutionError> {
    const F: &str = "regex.replace";
    let (target, pattern, replacement, count) = match args.as_slice() {
        [t, p, r] => (string_arg(F, t)?, string_arg(F, p)?, string_arg(F, r)?, -1),
        [t, p, r, Value::Int(n)] => (string_arg(F, t)?, string_arg(F, p)?, string_arg(F, r)?, *n),
        [_, _, _, other] => {
            return Err(ExecutionError::function_error(
                F,
                format!("no such overload: count of type '{}'", other.type_of()),
            ));
        }
        _ => return Err(ExecutionError::invalid_argument_count(3, args.len())),
    };
    if count == 0 {
        return Ok(Value::from(target));
    }
    let re = compile(F, pattern)?;
    let mut out = String::with_capacity(target.len());
    let mut last = 0;
    for (done, caps) in re.captures_iter(target).enumerate() {
        if count > 0 && done as i64 >= count {
            break;
        }
        let Some(whole) = caps.get(0) else { continue };
        out.push_str(&target[last..whole.start()]);
        expand(&re, &caps, replacement, &mut out)?;
        last = whole.end();
    }
    out.push_str(&target[last..]);
    Ok(Value::from(out))
}

/// Writes `replacement` with its group references filled in from `caps`.
fn expand(
    re: &regex::Regex,
    caps: &regex::Captures,
    replacement: &str,
    out: &mut String,
) -> Result<(), ExecutionError> {
    const F: &str = "regex.replace";
    let groups = re.captures_len() - 1;
    let mut chars = replacement.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            None => {
                return Err(ExecutionError::function_error(
                    F,
                    format!("invalid replacement string: '{replacement}' \\ not allowed at end"),
                ));
            }
            Some('\\') => out.push('\\'),
            Some(d) if d.is_ascii_digit() => {
                let n = usize::from(d as u8 - b'0');
                if n > groups {
                    return Err(ExecutionError::function_error(
                        F,
                        format!(
                            "replacement string references group {n} but regex has only {groups} group(s)"
                        ),
                    ));
                }
                if let Some(m) = caps.get(n) {
                    out.push_str(m.as_str());
                }
            }
            Some(_) => {
                return Err(ExecutionError::function_error(
                    F,
                    format!(
                        "invalid replacement string: '{replacement}' \\ must be followed by a digit or \\"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn groups_at_most_one(
    function: &str,
    re: &regex::Regex,
    pattern: &str,
) -> Result<usize, ExecutionError> {
    let groups = re.captures_len() - 1;
    if groups > 1 {
        return Err(ExecutionError::function_error(
            function,
            format!("regular expression has more than one capturing group: {pattern:?}"),
        ));
    }
    Ok(groups)
}

/// The first match (its group when the pattern has one; an empty group is none).
fn extract(target: Arc<String>, pattern: Arc<String>) -> Result<Value, ExecutionError> {
    const F: &str = "regex.extract";
    let re = compile(F, &pattern)?;
    let groups = groups_at_most_one(F, &re, &pattern)?;
    let found = re.captures(&target).and_then(|caps| {
        if groups == 1 {
            caps.get(1)
                .map(|m| m.as_str().to_owned())
                .filter(|s| !s.is_empty())
        } else {
            caps.get(0).map(|m| m.as_str().to_owned())
        }
    });
    let opt = match found {
        Some(s) => OptionalValue::of(Value::from(s)),
        None => OptionalValue::none(),
    };
    Ok(Value::Opaque(Arc::new(opt)))
}

/// Every match (its group when the pattern has one; empty groups left out).
fn extract_all(target: Arc<String>, pattern: Arc<String>) -> Result<Value, ExecutionError> {
    const F: &str = "regex.extractAll";
    let re = compile(F, &pattern)?;
    let groups = groups_at_most_one(F, &re, &pattern)?;
    let found: Vec<Value> = re
        .captures_iter(&target)
        .filter_map(|caps| {
            if groups == 1 {
                caps.get(1).map(|m| m.as_str()).filter(|s| !s.is_empty())
            } else {
                caps.get(0).map(|m| m.as_str())
            }
        })
        .map(Value::from)
        .collect();
    Ok(Value::List(Arc::new(found)))
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr as run;
    use cel::Value;

    fn list(items: &[&str]) -> Value {
        Value::List(std::sync::Arc::new(
            items.iter().map(|s| Value::from(*s)).collect(),
        ))
    }

    fn err(expr: &str) -> String {
        match run(expr) {
            Err(e) => e,
            Ok(v) => panic!("{expr} gave {v:?}"),
        }
    }

    #[test]
    fn replace_fills_groups_and_honours_the_count() {
        // cel-go ext/regex.go's documented cases.
        assert_eq!(
            run(r"regex.replace('hello world hello', 'hello', 'hi')"),
            Ok(Value::from("hi world hi"))
        );
        assert_eq!(
            run(r"regex.replace('banana', 'a', 'x', 0)"),
            Ok(Value::from("banana"))
        );
        assert_eq!(
            run(r"regex.replace('banana', 'a', 'x', 1)"),
            Ok(Value::from("bxnana"))
        );
        assert_eq!(
            run(r"regex.replace('banana', 'a', 'x', -12)"),
            Ok(Value::from("bxnxnx"))
        );
        assert_eq!(
            run(r"regex.replace('foo bar', '(fo)o (ba)r', r'\2 \1')"),
            Ok(Value::from("ba fo"))
        );
        assert_eq!(
            run(r"regex.replace('docker.io/nginx:1', '^docker\\.io/(.*)', r'my.io/\1')"),
            Ok(Value::from("my.io/nginx:1"))
        );
        assert_eq!(
            run(r"regex.replace('a', 'a', r'\\')"),
            Ok(Value::from("\\"))
        );
        // A bad replacement is only found where something matched.
        assert_eq!(
            run(r"regex.replace('abc', 'z', r'\3')"),
            Ok(Value::from("abc"))
        );
    }

    #[test]
    fn replace_errors() {
        assert!(
            err(r"regex.replace('abc', 'b', r'\2')")
                .contains("references group 2 but regex has only 0 group(s)")
        );
        assert!(err(r"regex.replace('abc', 'b', r'x\')").contains("not allowed at end"));
        assert!(err(r"regex.replace('abc', 'b', r'\a')").contains("must be followed by a digit"));
        assert!(!err(r"regex.replace('abc', '(', 'x')").is_empty());
    }

    #[test]
    fn extract_and_extract_all() {
        assert_eq!(
            run(r"regex.extract('hello world', 'hello(.*)').value()"),
            Ok(Value::from(" world"))
        );
        assert_eq!(
            run(r"regex.extract('item-A, item-B', 'item-[A-Z]').value()"),
            Ok(Value::from("item-A"))
        );
        assert_eq!(
            run(r"regex.extract('HELLO', 'hello').hasValue()"),
            Ok(Value::Bool(false))
        );
        assert_eq!(
            run(r"regex.extract('ab', 'a(x?)b').hasValue()"),
            Ok(Value::Bool(false))
        );
        assert_eq!(
            run(r"regex.extractAll('id:123, id:456', 'id:\\d+')"),
            Ok(list(&["id:123", "id:456"]))
        );
        assert_eq!(
            run(r"regex.extractAll('id:123, id:456', 'id:(\\d+)')"),
            Ok(list(&["123", "456"]))
        );
        assert_eq!(run(r"regex.extractAll('abc', 'z')"), Ok(list(&[])));
        assert!(
            err(r"regex.extract('a@b', '(.*)@([^.]*)')").contains("more than one capturing group")
        );
        assert!(
            err(r"regex.extractAll('a@b', '(.*)@([^.]*)')")
                .contains("more than one capturing group")
        );
    }
}

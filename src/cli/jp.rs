//! `kpol jp`: Kyverno's JMESPath dialect from the command line, as `kyverno jp` has it — to
//! try an expression with Kyverno's functions against a document while writing a policy.

use std::io::Write;

use kpol::jmespath::{Expr, function_names, value::json_round_trip};
use kpol::yaml::{Limits, Node, parse_documents};

use super::args::{JpArgs, JpCommand};
use super::discover::Input;
use super::exit;
use super::policies::{DEFAULT_MAX_FILE_MIB, read};

pub fn run(args: JpArgs) -> u8 {
    match args.command {
        JpCommand::Query {
            queries,
            input,
            query_files,
        } => query(&queries, input.as_deref(), &query_files),
        JpCommand::Function { names } => functions(&names),
    }
}

fn query(queries: &[String], input: Option<&std::path::Path>, files: &[std::path::PathBuf]) -> u8 {
    let mut all: Vec<String> = queries.to_vec();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => all.push(t.trim().to_owned()),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", f.display());
                return exit::INCOMPLETE;
            }
        }
    }
    if all.is_empty() {
        eprintln!("error: no query given");
        return exit::INCOMPLETE;
    }
    let source = match input {
        Some(p) => Input::File(p.to_path_buf()),
        None => Input::Stdin,
    };
    let text = match read(&source, DEFAULT_MAX_FILE_MIB * 1024 * 1024) {
        Ok(t) => t,
        Err(d) => {
            eprintln!("error: {}", d.message);
            return exit::INCOMPLETE;
        }
    };
    let data = match parse_documents(&text, Limits::default()) {
        // Kyverno reads the input as JSON: numbers become floats.
        Ok(docs) => docs
            .into_iter()
            .next()
            .map_or_else(Node::null, |d| json_round_trip(&d.root)),
        Err(e) => {
            eprintln!("error: invalid input {}: {}", source.display(), e.message);
            return exit::INCOMPLETE;
        }
    };
    let mut out = std::io::stdout().lock();
    for q in &all {
        let result = Expr::compile(q)
            .map_err(|e| e.to_string())
            .and_then(|expr| {
                expr.search(&data)
                    .map(|v| v.into_owned())
                    .map_err(|e| e.to_string())
            });
        match result {
            Ok(v) => {
                let json = serde_json::to_string_pretty(&go_json(&v)).unwrap_or_default();
                if writeln!(out, "{json}").is_err() {
                    return exit::CLEAN;
                }
            }
            Err(e) => {
                eprintln!("error: {q}: {e}");
                return exit::FINDINGS;
            }
        }
    }
    exit::CLEAN
}

fn functions(names: &[String]) -> u8 {
    let mut out = std::io::stdout().lock();
    for f in function_names() {
        if (names.is_empty() || names.iter().any(|n| n == f)) && writeln!(out, "{f}").is_err() {
            break;
        }
    }
    exit::CLEAN
}

/// JSON as Go's encoder prints JMESPath results: a float with no fraction is written without
/// one (`2`, not `2.0`).
fn go_json(n: &Node) -> serde_json::Value {
    use kpol::yaml::Value;
    match &n.value {
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            serde_json::Value::from(*f as i64)
        }
        Value::Seq(items) => serde_json::Value::Array(items.iter().map(go_json).collect()),
        Value::Map(m) => {
            serde_json::Value::Object(m.iter().map(|(k, v)| (k.to_owned(), go_json(v))).collect())
        }
        _ => n.to_json(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_print_like_go() {
        let n = Node::from_json(&serde_json::json!({"a": [2.0, 2.5, "x"]}));
        assert_eq!(go_json(&n).to_string(), r#"{"a":[2,2.5,"x"]}"#);
    }
}

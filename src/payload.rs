//! JSON payloads: arbitrary JSON or YAML documents that ValidatingPolicies in
//! `evaluation.mode: JSON` evaluate (cel.md §3.5), as the Kyverno CLI reads them
//! (`cmd/cli/kubectl-kyverno/payload/load.go`): the format is the file's extension (`.json`,
//! `.yaml`/`.yml`, anything else refused), a JSON file is one value whose numbers are all
//! `double`s (Go's `json.Unmarshal` into `any`), a YAML document keeps its integers.
//!
//! A payload is carried as a [`Resource`] with no identity (empty apiVersion, kind and
//! namespace) whose `name` is the name the caller gives it, and whose spans point into the
//! file, so findings on a payload are located like findings on a manifest.

use std::path::Path;

use crate::resource::Resource;
use crate::source::Source;
use crate::yaml::{Limits, Node, Reading, Value, parse_reading};

/// How a payload file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    /// The format of `path` by its extension, as the CLI's `file.IsJson` / `file.IsYaml`.
    pub fn of(path: &Path) -> Option<Format> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Some(Format::Json),
            Some("yaml" | "yml") => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// The error for a file of neither format (the CLI's words).
pub fn unrecognized(path: &str) -> String {
    format!("unrecognized payload format, must be yaml or json ({path})")
}

/// Why a payload file cannot be used: the message, and where in the file (a byte offset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadError {
    pub offset: Option<u32>,
    pub message: String,
}

impl PayloadError {
    /// `file:line:column: message` (or `file: message`).
    pub fn located(&self, source: &Source) -> String {
        match self.offset {
            Some(o) => {
                let lc = source.line_col(o);
                format!(
                    "{}:{}:{}: {}",
                    source.name(),
                    lc.line,
                    lc.column,
                    self.message
                )
            }
            None => format!("{}: {}", source.name(), self.message),
        }
    }
}

/// Every document of `source` as a payload named `name`, in file order: one for a JSON file,
/// one per document for YAML. Empty documents are left out; a document that is not an object
/// is an error at its position.
pub fn documents(
    source: &Source,
    format: Format,
    name: &str,
) -> Result<Vec<Resource>, PayloadError> {
    let reading = Reading {
        ints_as_floats: format == Format::Json,
        empty_map_for_null: &[],
    };
    let docs =
        parse_reading(source.text(), Limits::default(), reading).map_err(|e| PayloadError {
            offset: Some(e.offset),
            message: e.message,
        })?;
    if format == Format::Json
        && let Some(second) = docs.get(1)
    {
        return Err(PayloadError {
            offset: Some(second.root.span.start),
            message: "invalid character after top-level value".to_owned(),
        });
    }
    let mut out = Vec::with_capacity(docs.len());
    for d in docs {
        match &d.root.value {
            Value::Null => continue,
            Value::Map(_) => {}
            _ => {
                return Err(PayloadError {
                    offset: Some(d.root.span.start),
                    message: "a JSON payload must be a top-level object (map)".to_owned(),
                });
            }
        }
        out.push(payload(d.root, source, d.index, name));
    }
    Ok(out)
}

/// A payload of `root`, read from `source`.
pub fn payload(root: Node, source: &Source, doc_index: usize, name: &str) -> Resource {
    Resource {
        root,
        api_version: String::new(),
        kind: String::new(),
        name: name.to_owned(),
        namespace: String::new(),
        source: Some(source.clone()),
        doc_index,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use std::sync::Arc;

    fn src(name: &str, text: &str) -> Source {
        Arc::new(SourceFile::new(name, text))
    }

    #[test]
    fn json_numbers_are_doubles_yaml_integers_stay() {
        let p = documents(
            &src("p.json", r#"{"a": 1, "b": [2.5]}"#),
            Format::Json,
            "p.json",
        )
        .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(
            p[0].root.get("a").map(|n| &n.value),
            Some(&Value::Float(1.0))
        );
        assert_eq!(p[0].name, "p.json");
        assert!(p[0].kind.is_empty() && p[0].api_version.is_empty());
        let y = documents(&src("p.yaml", "a: 1\n---\nb: 2\n"), Format::Yaml, "p.yaml").unwrap();
        assert_eq!(y.len(), 2);
        assert_eq!(y[0].root.get("a").map(|n| &n.value), Some(&Value::Int(1)));
    }

    #[test]
    fn non_objects_and_bad_files_are_errors_with_positions() {
        let s = src("p.json", "[1, 2]");
        let e = documents(&s, Format::Json, "p").unwrap_err();
        assert_eq!(
            e.located(&s),
            "p.json:1:1: a JSON payload must be a top-level object (map)"
        );
        let s = src("p.yaml", "a: 1\n---\n- x\n");
        let e = documents(&s, Format::Yaml, "p").unwrap_err();
        assert!(e.located(&s).starts_with("p.yaml:3:1: "), "{e:?}");
        let s = src("p.json", "{} {}");
        assert!(documents(&s, Format::Json, "p").is_err());
        assert!(documents(&src("p.json", "{\"a\": [1"), Format::Json, "p").is_err());
        assert_eq!(Format::of(Path::new("x.txt")), None);
        assert_eq!(
            unrecognized("x.txt"),
            "unrecognized payload format, must be yaml or json (x.txt)"
        );
    }
}

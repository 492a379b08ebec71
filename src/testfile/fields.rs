//! Reading the CLI's own YAML files (Test, Values, UserInfo) the way the Go CLI does:
//! sigs.k8s.io/yaml → `encoding/json` with unknown fields disallowed. So field names match
//! **case-insensitively** (an exact spelling wins, and a later key overrides an earlier one),
//! unknown fields are errors, and scalar types are strict (a number is not a string).

use crate::source::SourceFile;
use crate::yaml::{Map, Node, Value};

/// A problem in one of the CLI's input files, with its position when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub message: String,
    /// `file:line:column` (or just `file`) the problem points at.
    pub position: String,
}

impl LoadError {
    pub fn at(source: &SourceFile, node: &Node, message: impl Into<String>) -> Self {
        let lc = source.line_col(node.span.start);
        Self {
            message: message.into(),
            position: format!("{}:{}:{}", source.name(), lc.line, lc.column),
        }
    }

    pub fn in_file(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            position: file.into(),
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.position, self.message)
    }
}

/// An object of a strictly parsed document: known field names, looked up case-insensitively.
pub(crate) struct Fields<'a> {
    pub source: &'a SourceFile,
    map: Option<&'a Map>,
}

impl<'a> Fields<'a> {
    /// `what` names the object in the error when `node` is not a map (null reads as empty).
    pub fn new(
        source: &'a SourceFile,
        node: &'a Node,
        what: &str,
        known: &[&str],
    ) -> Result<Self, LoadError> {
        let map = match &node.value {
            Value::Map(m) => Some(m),
            Value::Null => None,
            v => {
                return Err(LoadError::at(
                    source,
                    node,
                    format!("{what}: expected an object, got {}", v.type_name()),
                ));
            }
        };
        if let Some(m) = map {
            for e in m.entries() {
                if !known.iter().any(|k| k.eq_ignore_ascii_case(&e.key)) {
                    let lc = source.line_col(e.key_span.start);
                    return Err(LoadError {
                        message: format!("{what}: unknown field \"{}\"", e.key),
                        position: format!("{}:{}:{}", source.name(), lc.line, lc.column),
                    });
                }
            }
        }
        Ok(Self { source, map })
    }

    /// The value of field `name`: the last key spelled exactly so, else the last key equal
    /// ignoring case (what `encoding/json` ends up with). Null counts as absent.
    pub fn get(&self, name: &str) -> Option<&'a Node> {
        let m = self.map?;
        let exact = m.entries().iter().rev().find(|e| e.key == name);
        let found = exact.or_else(|| {
            m.entries()
                .iter()
                .rev()
                .find(|e| e.key.eq_ignore_ascii_case(name))
        })?;
        (!found.value.is_null()).then_some(&found.value)
    }

    /// Whether the field is written at all (even as null).
    pub fn has(&self, name: &str) -> bool {
        self.map
            .is_some_and(|m| m.keys().any(|k| k.eq_ignore_ascii_case(name)))
    }

    pub fn string(&self, name: &str) -> Result<String, LoadError> {
        match self.get(name) {
            None => Ok(String::new()),
            Some(n) => as_string(self.source, n, name),
        }
    }

    pub(crate) fn opt_string(&self, name: &str) -> Result<Option<String>, LoadError> {
        Ok(Some(self.string(name)?).filter(|s| !s.is_empty()))
    }

    pub fn strings(&self, name: &str) -> Result<Vec<String>, LoadError> {
        let Some(n) = self.get(name) else {
            return Ok(Vec::new());
        };
        let Some(items) = n.as_seq() else {
            return Err(LoadError::at(
                self.source,
                n,
                format!(
                    "field {name}: expected a list of strings, got {}",
                    n.value.type_name()
                ),
            ));
        };
        items
            .iter()
            .map(|i| {
                if i.is_null() {
                    Ok(String::new())
                } else {
                    as_string(self.source, i, name)
                }
            })
            .collect()
    }

    pub fn bool(&self, name: &str) -> Result<bool, LoadError> {
        match self.get(name) {
            None => Ok(false),
            Some(n) => n.as_bool().ok_or_else(|| {
                LoadError::at(
                    self.source,
                    n,
                    format!(
                        "field {name}: expected a boolean, got {}",
                        n.value.type_name()
                    ),
                )
            }),
        }
    }

    /// A list field whose items are objects; null → empty.
    pub fn list(&self, name: &str) -> Result<&'a [Node], LoadError> {
        match self.get(name) {
            None => Ok(&[]),
            Some(n) => n.as_seq().ok_or_else(|| {
                LoadError::at(
                    self.source,
                    n,
                    format!("field {name}: expected a list, got {}", n.value.type_name()),
                )
            }),
        }
    }
}

fn as_string(source: &SourceFile, n: &Node, name: &str) -> Result<String, LoadError> {
    n.as_str().map(str::to_owned).ok_or_else(|| {
        LoadError::at(
            source,
            n,
            format!(
                "field {name}: expected a string, got {}",
                n.value.type_name()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn doc(text: &str) -> (SourceFile, Node) {
        let src = SourceFile::new("t.yaml", text);
        let docs = parse_documents(text, Limits::default()).unwrap_or_default();
        let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
        (src, root)
    }

    #[test]
    fn keys_match_case_insensitively_exact_spelling_wins() -> Result<(), LoadError> {
        let (src, root) = doc("Policy: a\nisMUtatingPolicy: true\npolicy: b\n");
        let f = Fields::new(&src, &root, "result", &["policy", "isMutatingPolicy"])?;
        assert_eq!(f.string("policy")?, "b");
        assert!(f.bool("isMutatingPolicy")?);
        Ok(())
    }

    #[test]
    fn unknown_field_is_an_error_with_position() {
        let (src, root) = doc("policy: a\nbogus: 1\n");
        let err = Fields::new(&src, &root, "result", &["policy"]).err();
        let err = err.map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("t.yaml:2:1: result: unknown field \"bogus\"")
        );
    }

    #[test]
    fn scalar_types_are_strict() -> Result<(), LoadError> {
        let (src, root) = doc("rule: 12\nresources: web\n");
        let f = Fields::new(&src, &root, "result", &["rule", "resources"])?;
        assert!(f.string("rule").is_err());
        assert!(f.strings("resources").is_err());
        Ok(())
    }
}

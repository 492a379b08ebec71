//! Where suppressions are written in a manifest file, and what each covers.
//!
//! - The `kpol.io/ignore` annotation of a resource covers the whole resource.
//! - A full-line `# kpol:ignore …` comment covers what starts on the next line that is not
//!   blank or a comment (a `---` marker is passed over): the document when that line opens
//!   one, else the outermost field or list item that starts on that line. A result is
//!   covered when its span lies within that field's span.
//!
//! Comments are read from the text itself (the YAML tree keeps none); a `#` line inside a
//! string scalar (a block scalar's content) is text, not a comment.

use super::{COMMENT_WORD, Entry, ParseError, parse_entry, split_entries};
use crate::source::Span;
use crate::yaml::{Node, Value};

/// Where a suppression was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Annotation,
    Comment,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Annotation => "annotation",
            Origin::Comment => "comment",
        }
    }
}

/// One entry and the part of a file it covers.
#[derive(Clone, Debug)]
pub struct Directive {
    pub entry: Entry,
    pub origin: Origin,
    /// Where the entry is written (for a annotation whose text cannot be mapped back to the
    /// source byte by byte, the annotation's value).
    pub at: Span,
    /// What it covers: the resource, or one field of it.
    pub scope: Span,
}

impl Directive {
    /// Whether the directive names this result and covers its span.
    pub fn covers(&self, policy: &str, rule: &str, span: Span) -> bool {
        span.start >= self.scope.start
            && span.end <= self.scope.end
            && self.entry.names(policy, rule)
    }
}

/// An entry refused (no reason, malformed), where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub at: Span,
    pub message: String,
}

/// The suppressions of one file: per resource (in the order of `roots` given to
/// [`in_file`]), and the entries refused.
#[derive(Clone, Debug, Default)]
pub struct FileSuppressions {
    pub per_resource: Vec<Vec<Directive>>,
    pub refused: Vec<Refused>,
}

/// One `# kpol:ignore` comment line.
struct Comment {
    /// Its entries, each with its span in the text.
    entries: Vec<(Span, Result<Entry, ParseError>)>,
    /// The offset of the comment's `#`.
    hash: usize,
    /// The first content line below: its start and end offsets; `None` at the end of the text.
    target: Option<(usize, usize)>,
}

/// The suppressions of a file's text whose resources have the document trees `roots` (spans
/// into `text`).
pub fn in_file(text: &str, roots: &[&Node]) -> FileSuppressions {
    let mut out = FileSuppressions {
        per_resource: vec![Vec::new(); roots.len()],
        refused: Vec::new(),
    };
    for (i, root) in roots.iter().enumerate() {
        annotation(text, root, &mut out.per_resource[i], &mut out.refused);
    }
    if !text.contains(COMMENT_WORD) {
        return out;
    }
    for comment in comments(text) {
        if roots.iter().any(|r| in_string(r, comment.hash)) {
            continue;
        }
        let scope = comment.target.and_then(|(start, end)| {
            roots
                .iter()
                .enumerate()
                .find_map(|(i, root)| target_scope(text, root, start, end).map(|s| (i, s)))
        });
        for (at, entry) in comment.entries {
            match entry {
                Err(e) => out.refused.push(Refused {
                    at: Span::new(at.start + e.offset as u32, at.end),
                    message: e.message,
                }),
                Ok(entry) => {
                    if let Some((i, scope)) = scope {
                        out.per_resource[i].push(Directive {
                            entry,
                            origin: Origin::Comment,
                            at,
                            scope,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The entries of the resource's `kpol.io/ignore` annotation.
fn annotation(text: &str, root: &Node, into: &mut Vec<Directive>, refused: &mut Vec<Refused>) {
    let Some(value) = root
        .get_path(&["metadata", "annotations"])
        .and_then(|a| a.get(super::ANNOTATION))
    else {
        return;
    };
    let Some(s) = value.as_str() else {
        refused.push(Refused {
            at: value.span,
            message: format!("annotation {} must be a string", super::ANNOTATION),
        });
        return;
    };
    // Offsets in the value are offsets in the file when the value is written as it is
    // (plain or simply quoted, on one line); else every entry points at the value.
    let raw = text
        .get(value.span.start as usize..value.span.end as usize)
        .unwrap_or("");
    let base = if raw == s {
        Some(value.span.start as usize)
    } else if raw.len() == s.len() + 2 && raw.get(1..raw.len() - 1) == Some(s) {
        Some(value.span.start as usize + 1)
    } else {
        None
    };
    let pieces = split_entries(s);
    if pieces.is_empty() {
        refused.push(Refused {
            at: value.span,
            message: format!("annotation {} holds no entry", super::ANNOTATION),
        });
    }
    for (offset, piece) in pieces {
        let at = match base {
            Some(b) => span(b + offset, b + offset + piece.len()),
            None => value.span,
        };
        match parse_entry(piece) {
            Ok(entry) => into.push(Directive {
                entry,
                origin: Origin::Annotation,
                at,
                scope: root.span,
            }),
            Err(e) => refused.push(Refused {
                at: match base {
                    Some(_) => Span::new(at.start + e.offset as u32, at.end),
                    None => at,
                },
                message: e.message,
            }),
        }
    }
}

fn span(start: usize, end: usize) -> Span {
    Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

/// Every full-line `# kpol:ignore` comment of `text`.
fn comments(text: &str) -> Vec<Comment> {
    // (start, end) of each line, without its line break.
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == '\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    lines.push((start, text.len()));
    let content = |&(s, e): &(usize, usize)| {
        let t = text[s..e].trim();
        !t.is_empty() && !t.starts_with('#')
    };
    let mut out = Vec::new();
    for (n, &(s, e)) in lines.iter().enumerate() {
        let line = &text[s..e];
        let trimmed = line.trim_start();
        let Some(after_hash) = trimmed.strip_prefix('#') else {
            if let Some(at) = trailing(line) {
                out.push(Comment {
                    entries: vec![(
                        span(s + at, e),
                        Err(ParseError {
                            offset: 0,
                            message: format!(
                                "a `# {COMMENT_WORD}` comment must stand on its own line, above the document or field it covers"
                            ),
                        }),
                    )],
                    hash: s + at,
                    target: None,
                });
            }
            continue;
        };
        let Some(rest) = after_hash.trim_start().strip_prefix(COMMENT_WORD) else {
            continue;
        };
        if rest.chars().next().is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        let hash = s + (line.len() - trimmed.len());
        let rest_at = e - rest.len();
        let rest = rest.trim_end_matches('\r');
        let mut entries: Vec<(Span, Result<Entry, ParseError>)> = split_entries(rest)
            .into_iter()
            .map(|(o, piece)| {
                (
                    span(rest_at + o, rest_at + o + piece.len()),
                    parse_entry(piece),
                )
            })
            .collect();
        if entries.is_empty() {
            entries.push((
                span(hash, e),
                Err(ParseError {
                    offset: 0,
                    message: format!(
                        "`# {COMMENT_WORD}` names nothing: write `# {COMMENT_WORD} <policy>[/<rule>] -- <reason>`"
                    ),
                }),
            ));
        }
        let mut below = lines[n + 1..].iter().filter(|l| content(l));
        let mut target = below.next().copied();
        // A document marker: the document that follows it.
        if let Some((ts, te)) = target
            && text[ts..te].trim_end() == "---"
        {
            target = below.next().copied();
        }
        out.push(Comment {
            entries,
            hash,
            target,
        });
    }
    out
}

/// The offset of a `# kpol:ignore` comment that ends a line of content (` # kpol:ignore`).
fn trailing(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = line[from..].find('#') {
        let at = from + i;
        from = at + 1;
        let spaced = line[..at].ends_with([' ', '\t']);
        let rest = line[at + 1..].trim_start();
        let word = rest
            .strip_prefix(COMMENT_WORD)
            .is_some_and(|r| r.chars().next().is_none_or(char::is_whitespace));
        if spaced && word {
            return Some(at);
        }
    }
    None
}

/// What a comment above the line `[start, end)` covers in the document `root`: the document
/// when the line opens it, else the outermost field or item starting on that line.
fn target_scope(text: &str, root: &Node, start: usize, end: usize) -> Option<Span> {
    let (s, e) = (start as u32, end as u32);
    let root_line_start = text
        .get(..root.span.start as usize)
        .map_or(0, |t| t.rfind('\n').map_or(0, |i| i + 1)) as u32;
    if root_line_start == s || (root.span.start >= s && root.span.start < e) {
        return Some(root.span);
    }
    if s < root.span.start || s >= root.span.end {
        return None;
    }
    outermost_on_line(root, s, e)
}

fn outermost_on_line(node: &Node, s: u32, e: u32) -> Option<Span> {
    let on_line = |at: u32| at >= s && at < e;
    // (where the child starts, its span as a suppression covers it, the child): a block
    // node's span may run on to where the next one starts, so every child that reaches the
    // line is tried, after those that start on it.
    let children: Vec<(u32, Span, &Node)> = match &node.value {
        Value::Map(map) => map
            .entries()
            .iter()
            .map(|entry| {
                let whole = Span::new(
                    entry.key_span.start,
                    entry.value.span.end.max(entry.key_span.end),
                );
                (entry.key_span.start, whole, &entry.value)
            })
            .collect(),
        Value::Seq(items) => items.iter().map(|i| (i.span.start, i.span, i)).collect(),
        _ => return None,
    };
    if let Some((_, whole, _)) = children.iter().find(|(start, _, _)| on_line(*start)) {
        return Some(*whole);
    }
    children
        .iter()
        .filter(|(_, _, child)| child.span.start < e && child.span.end > s)
        .find_map(|(_, _, child)| outermost_on_line(child, s, e))
}

/// Whether `offset` lies inside a string scalar of `node` (a block scalar's content).
fn in_string(node: &Node, offset: usize) -> bool {
    let at = offset as u32;
    if at < node.span.start || at >= node.span.end {
        return false;
    }
    match &node.value {
        Value::Str(_) => true,
        Value::Map(map) => map.entries().iter().any(|e| in_string(&e.value, offset)),
        Value::Seq(items) => items.iter().any(|i| in_string(i, offset)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn docs(text: &str) -> Vec<Node> {
        let src = std::sync::Arc::new(SourceFile::new("t.yaml", text));
        crate::manifest::read_manifests(&src, Default::default())
            .resources
            .into_iter()
            .map(|r| r.root)
            .collect()
    }

    fn scan(text: &str) -> FileSuppressions {
        let roots = docs(text);
        let refs: Vec<&Node> = roots.iter().collect();
        in_file(text, &refs)
    }

    fn slice(text: &str, s: Span) -> &str {
        &text[s.start as usize..s.end as usize]
    }

    const TWO: &str = "\
# kpol:ignore require-probes -- a job, nothing to probe
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
  # kpol:ignore disallow-latest-tag/require-tag until=2027-01-01 -- pinned by digest upstream
  - name: app
    image: nginx:latest
  - name: side
    image: busybox
---
# kpol:ignore p1 -- x ; p2/r -- y
apiVersion: v1
kind: Pod
metadata:
  name: b
  annotations:
    kpol.io/ignore: \"require-resource-limits until=2027-03-31 -- batch job; q -- other\"
";

    #[test]
    fn comments_cover_the_document_or_the_field_below_and_annotations_the_resource() {
        let found = scan(TWO);
        assert!(found.refused.is_empty(), "{:?}", found.refused);
        let a = &found.per_resource[0];
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].entry.selector(), "require-probes");
        assert!(
            slice(TWO, a[0].scope).starts_with("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a")
        );
        assert_eq!(a[1].entry.selector(), "disallow-latest-tag/require-tag");
        let field = slice(TWO, a[1].scope);
        assert!(field.starts_with("name: app"), "{field}");
        assert!(
            field.contains("nginx:latest") && !field.contains("side"),
            "{field}"
        );
        assert_eq!(a[1].origin, Origin::Comment);
        assert!(slice(TWO, a[1].at).starts_with("disallow-latest-tag/require-tag until="));

        let b = &found.per_resource[1];
        let names: Vec<String> = b.iter().map(|d| d.entry.selector()).collect();
        assert_eq!(names, ["require-resource-limits", "q", "p1", "p2/r"]);
        assert_eq!(b[0].origin, Origin::Annotation);
        assert_eq!(
            slice(TWO, b[0].at),
            "require-resource-limits until=2027-03-31 -- batch job"
        );
        assert_eq!(slice(TWO, b[1].at).trim(), "q -- other");
        assert!(slice(TWO, b[2].scope).contains("name: b"));
    }

    #[test]
    fn a_field_comment_covers_only_spans_inside_the_field() {
        let found = scan(TWO);
        let d = &found.per_resource[0][1];
        let image = TWO.find("nginx:latest").unwrap() as u32;
        let busybox = TWO.find("busybox").unwrap() as u32;
        let inside = Span::new(image, image + 12);
        assert!(d.covers("disallow-latest-tag", "require-tag", inside));
        assert!(!d.covers(
            "disallow-latest-tag",
            "require-tag",
            Span::new(busybox, busybox + 7)
        ));
        assert!(!d.covers("disallow-latest-tag", "other", inside));
    }

    #[test]
    fn refused_entries_point_at_their_place() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    kpol.io/ignore: p1 -- ok; p2\nspec:\n  # kpol:ignore   p3 until=soon -- r\n  x: 1\n  #kpol:ignore\n  y: 2\n";
        let found = scan(text);
        let at: Vec<&str> = found
            .refused
            .iter()
            .map(|r| &text[r.at.start as usize..])
            .collect();
        assert_eq!(found.refused.len(), 3, "{:?}", found.refused);
        assert!(at[0].starts_with("p2\n"), "{}", at[0]);
        assert!(found.refused[0].message.contains("no reason"));
        assert!(at[1].starts_with("until=soon"), "{}", at[1]);
        assert!(at[2].starts_with("#kpol:ignore"), "{}", at[2]);
        assert_eq!(found.per_resource[0].len(), 1);
    }

    #[test]
    fn a_trailing_comment_is_refused_unless_it_is_inside_a_string() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a # kpol:ignore p -- r\n  annotations:\n    note: \"x # kpol:ignore p -- r\"\n";
        let found = scan(text);
        assert_eq!(found.refused.len(), 1, "{:?}", found.refused);
        assert!(
            text[found.refused[0].at.start as usize..]
                .starts_with("# kpol:ignore p -- r\n  annotations")
        );
        assert!(found.refused[0].message.contains("on its own line"));
    }

    // A block item's span runs on to the next item: a comment above the second item is the
    // second item's, not lost inside the first.
    #[test]
    fn a_comment_above_a_later_list_item_covers_that_item() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: one\n    image: x\n  # kpol:ignore p -- r\n  - name: two\n    image: y\n";
        let found = scan(text);
        let d = &found.per_resource[0];
        assert_eq!(d.len(), 1);
        assert_eq!(
            slice(text, d[0].scope).trim_end(),
            "name: two\n    image: y"
        );
    }

    #[test]
    fn a_comment_line_inside_a_block_scalar_is_text() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  script: |\n    # kpol:ignore nothing here\n    echo\n";
        let found = scan(text);
        assert!(
            found.refused.is_empty() && found.per_resource[0].is_empty(),
            "{found:?}"
        );
    }

    #[test]
    fn a_comment_above_a_document_marker_covers_the_next_document() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n# kpol:ignore p -- r\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n";
        let found = scan(text);
        assert!(found.per_resource[0].is_empty());
        assert_eq!(found.per_resource[1].len(), 1);
    }
}

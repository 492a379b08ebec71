//! The HTML writer of `--format html`: markup only from string literals, every other string
//! through [`escape`].
//!
//! Safe by construction: [`Markup::raw`] takes `&'static str`, so text from a manifest, a
//! policy or a file name can only reach the page through [`Markup::text`] or
//! [`Markup::attr`], both of which escape it. The escaped form is safe in element content and
//! in a double- or single-quoted attribute value alike, so there is one function for both.
//! Links are built by [`relative_href`]: a percent-encoded relative path, never a scheme.

use std::fmt::Write as _;

/// An HTML document being written.
#[derive(Default)]
pub struct Markup {
    buf: String,
}

impl Markup {
    pub fn into_string(self) -> String {
        self.buf
    }

    /// Markup written by kpol: a literal, never data.
    pub fn raw(&mut self, markup: &'static str) {
        self.buf.push_str(markup);
    }

    /// Text from a manifest, a policy or a file, as text.
    pub fn text(&mut self, s: &str) {
        escape(s, &mut self.buf);
    }

    pub fn num(&mut self, n: impl std::fmt::Display) {
        let _ = write!(self.buf, "{n}");
    }

    /// ` name="value"`, the value escaped.
    pub fn attr(&mut self, name: &'static str, value: &str) {
        self.buf.push(' ');
        self.buf.push_str(name);
        self.buf.push_str("=\"");
        escape(value, &mut self.buf);
        self.buf.push('"');
    }

    /// ` name="n"` for a number.
    pub fn attr_num(&mut self, name: &'static str, n: impl std::fmt::Display) {
        let _ = write!(self.buf, " {name}=\"{n}\"");
    }
}

/// The one escaping function: `&`, `<`, `>`, `"`, `'` and the line feed as character
/// references (so the text can neither open a tag, leave an attribute value nor start a
/// line of the file), and the characters that would
/// hide or reorder what a reader sees (control characters but tab and line feed, the line and
/// paragraph separators, the bidirectional controls) shown as `\u{…}`, as in the terminal
/// formats.
pub fn escape(s: &str, out: &mut String) {
    for c in visible(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // A reference, so that no text from a file starts a line of the page itself.
            '\n' => out.push_str("&#10;"),
            c => out.push(c),
        }
    }
}

/// `s` as the page shows it: each character that would hide or reorder text (control
/// characters but tab and line feed, the separators, the bidirectional controls) as
/// `\u{…}`. [`escape`] applies it; the findings data (strings the script shows as text) is
/// made of such strings before it is serialised, and then escaped as a whole.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| c != '\n' && super::super::is_unprintable(c);
    if !s.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The relative link from the report in `base` (a directory) to the input `file` (a path as
/// the check named it, relative to the working directory or absolute), or `None` when
/// there is no file to link (standard input). Each segment is percent-encoded but for
/// unreserved characters, so the link has no scheme (`javascript:` becomes `javascript%3A`),
/// no host (empty segments are dropped: never `//`) and no query; it starts with `./` or
/// `../`. The result still goes through [`escape`] as an attribute.
pub fn relative_href(base: Option<&std::path::Path>, file: &str) -> Option<String> {
    if file.is_empty() || file == "<stdin>" || file.starts_with("JSON payload ") {
        return None;
    }
    let target = std::path::Path::new(file);
    let parts: Vec<String> = match base.and_then(|b| relative_to(b, target)) {
        Some(p) => p,
        None => target
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                std::path::Component::ParentDir => Some("..".to_owned()),
                _ => None,
            })
            .collect(),
    };
    if parts.is_empty() {
        return None;
    }
    let mut href = String::new();
    if parts.first().is_none_or(|p| p != "..") {
        href.push_str("./");
    }
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            href.push('/');
        }
        if part == ".." {
            href.push_str("..");
            continue;
        }
        for b in part.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                href.push(char::from(b));
            } else {
                let _ = write!(href, "%{b:02X}");
            }
        }
    }
    Some(href)
}

/// `target` as path segments from the directory `base`, both made absolute against the
/// working directory and normalised lexically.
fn relative_to(base: &std::path::Path, target: &std::path::Path) -> Option<Vec<String>> {
    use std::path::Component;
    let norm = |p: &std::path::Path| -> Option<Vec<String>> {
        let abs = std::path::absolute(p).ok()?;
        let mut out: Vec<String> = Vec::new();
        for c in abs.components() {
            match c {
                Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
                Component::ParentDir => {
                    out.pop();
                }
                Component::RootDir | Component::CurDir => {}
                Component::Prefix(_) => return None,
            }
        }
        Some(out)
    };
    let (base, target) = (norm(base)?, norm(target)?);
    let common = base.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut out: Vec<String> = std::iter::repeat_n("..".to_owned(), base.len() - common).collect();
    out.extend(target.into_iter().skip(common));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        let mut out = String::new();
        escape(s, &mut out);
        out
    }

    #[test]
    fn escape_keeps_markup_out_of_text_and_attributes() {
        assert_eq!(
            esc("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(
            esc("\" onmouseover='x' a=\"&amp;"),
            "&quot; onmouseover=&#39;x&#39; a=&quot;&amp;amp;"
        );
        assert_eq!(
            esc("a\u{202e}b\u{1b}[31m\r"),
            "a\\u{202e}b\\u{1b}[31m\\u{d}"
        );
        assert_eq!(esc("naïve 名前\tline\nnext"), "naïve 名前\tline&#10;next");
    }

    #[test]
    fn attr_and_text_go_through_escape() {
        let mut m = Markup::default();
        m.raw("<td");
        m.attr("title", "\"><img src=x onerror=alert(1)>");
        m.raw(">");
        m.text("</td><script>");
        let html = m.into_string();
        assert_eq!(
            html,
            "<td title=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">&lt;/td&gt;&lt;script&gt;"
        );
    }

    #[test]
    fn hrefs_are_relative_paths_without_scheme_or_host() {
        assert_eq!(
            relative_href(None, "deploy/web.yaml").as_deref(),
            Some("./deploy/web.yaml")
        );
        assert_eq!(
            relative_href(None, "javascript:alert(1)").as_deref(),
            Some("./javascript%3Aalert%281%29")
        );
        assert_eq!(
            relative_href(None, "a//b/\"x y\".yaml").as_deref(),
            Some("./a/b/%22x%20y%22.yaml")
        );
        assert_eq!(relative_href(None, "<stdin>"), None);
        let base = std::path::Path::new("/tmp/out");
        assert_eq!(
            relative_href(Some(base), "/work/corpus/x.yaml").as_deref(),
            Some("../../work/corpus/x.yaml")
        );
        assert_eq!(
            relative_href(Some(base), "/tmp/out/sub/y.yaml").as_deref(),
            Some("./sub/y.yaml")
        );
        // An absolute path without a base keeps no root: still no `//`.
        assert_eq!(
            relative_href(None, "//evil.example/x").as_deref(),
            Some("./evil.example/x")
        );
    }
}

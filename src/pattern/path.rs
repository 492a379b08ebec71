//! Walk paths (validate.md §3.6): a chain of stack frames, so descending costs nothing and
//! the owned forms (`/spec/containers/0/image/` and its segments) are built only on failure.
//! Keys are kept whole: `app.kubernetes.io/name` is one segment, printed unescaped.

use std::fmt::Write;

#[derive(Clone, Copy, Debug)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// One step of a path, linked to its parent; the root has no step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PathNode<'a> {
    parent: Option<&'a PathNode<'a>>,
    seg: Option<Seg<'a>>,
}

impl<'a> PathNode<'a> {
    /// The root path `/`.
    pub(crate) fn root() -> Self {
        PathNode {
            parent: None,
            seg: None,
        }
    }

    /// `path + key + "/"`.
    pub(crate) fn key(&'a self, key: &'a str) -> PathNode<'a> {
        PathNode {
            parent: Some(self),
            seg: Some(Seg::Key(key)),
        }
    }

    /// `path + index + "/"`.
    pub(crate) fn index(&'a self, index: usize) -> PathNode<'a> {
        PathNode {
            parent: Some(self),
            seg: Some(Seg::Index(index)),
        }
    }

    fn for_each_seg(&self, f: &mut impl FnMut(Seg<'_>)) {
        if let Some(p) = self.parent {
            p.for_each_seg(f);
        }
        if let Some(s) = self.seg {
            f(s);
        }
    }

    /// The segments from the root down.
    pub(crate) fn segments(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_seg(&mut |s| {
            out.push(match s {
                Seg::Key(k) => k.to_owned(),
                Seg::Index(i) => i.to_string(),
            });
        });
        out
    }

    /// Kyverno's path string: `/` then each segment followed by `/`.
    pub(crate) fn render(&self) -> String {
        let mut out = String::from("/");
        self.for_each_seg(&mut |s| {
            match s {
                Seg::Key(k) => out.push_str(k),
                Seg::Index(i) => {
                    let _ = write!(out, "{i}");
                }
            }
            out.push('/');
        });
        out
    }
}

/// Renders owned segments the way [`PathNode::render`] does.
pub(crate) fn render_segments(segments: &[String]) -> String {
    let mut out = String::from("/");
    for s in segments {
        out.push_str(s);
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_paths() {
        let root = PathNode::root();
        assert_eq!(root.render(), "/");
        assert!(root.segments().is_empty());
        let meta = root.key("metadata");
        let labels = meta.key("labels");
        let key = labels.key("app.kubernetes.io/name");
        assert_eq!(key.render(), "/metadata/labels/app.kubernetes.io/name/");
        assert_eq!(
            key.segments(),
            ["metadata", "labels", "app.kubernetes.io/name"]
        );
        let spec = root.key("spec");
        let c = spec.key("containers");
        let i = c.index(0);
        assert_eq!(i.render(), "/spec/containers/0/");
        assert_eq!(render_segments(&i.segments()), "/spec/containers/0/");
    }
}

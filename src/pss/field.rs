//! Field errors as the Pod Security checks report them (Kubernetes `field.Error`): a path
//! such as `spec.containers[0].securityContext.privileged`, an error type and a bad value,
//! and how Kyverno prints them in its podSecurity failure message (validate.md §13.1 step 5).

use std::fmt::Write as _;

/// One step of a field path: a field name, a list index or a map key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Field(&'static str),
    Index(usize),
    Key(String),
}

/// A path into the pod (`spec…` or `metadata…`), relative to the pod itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldPath(pub(crate) Vec<Seg>);

impl FieldPath {
    pub(crate) fn spec() -> Self {
        Self(vec![Seg::Field("spec")])
    }

    pub(crate) fn annotation(key: &str) -> Self {
        Self(vec![
            Seg::Field("metadata"),
            Seg::Field("annotations"),
            Seg::Key(key.to_owned()),
        ])
    }

    /// A copy extended by field names.
    pub(crate) fn child(&self, names: &[&'static str]) -> Self {
        let mut p = self.clone();
        p.0.extend(names.iter().map(|n| Seg::Field(n)));
        p
    }

    pub(crate) fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Index(i));
        p
    }

    /// `field.Path.String()`: `spec.volumes[0].hostPath`, `metadata.annotations[k]`.
    pub(crate) fn render(&self) -> String {
        let mut s = String::new();
        for seg in &self.0 {
            match seg {
                Seg::Field(f) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(f);
                }
                Seg::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
                Seg::Key(k) => {
                    let _ = write!(s, "[{k}]");
                }
            }
        }
        s
    }

    /// The path as resource path segments, for a pod whose spec lives under `spec_prefix`
    /// and whose metadata under `meta_prefix`.
    pub(crate) fn in_resource(&self, spec_prefix: &[&str], meta_prefix: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Field("spec") if i == 0 => {
                    out.extend(spec_prefix.iter().map(|s| (*s).to_owned()));
                }
                Seg::Field("metadata") if i == 0 => {
                    out.extend(meta_prefix.iter().map(|s| (*s).to_owned()));
                }
                Seg::Field(f) => out.push((*f).to_owned()),
                Seg::Index(n) => out.push(n.to_string()),
                Seg::Key(k) => out.push(k.clone()),
            }
        }
        out
    }
}

/// The `BadValue` of a field error, by Go type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bad {
    /// No value (`nil`).
    None,
    Str(String),
    Bool(bool),
    Int(i64),
    List(Vec<String>),
}

impl Bad {
    /// `%+v` of the value.
    fn print(&self) -> String {
        match self {
            Bad::None => "<nil>".to_owned(),
            Bad::Str(s) => s.clone(),
            Bad::Bool(b) => b.to_string(),
            Bad::Int(n) => n.to_string(),
            Bad::List(items) => format!("[{}]", items.join(" ")),
        }
    }

    /// The values an `exclude.values` list must cover (`extractBadValues`).
    pub(crate) fn values(&self) -> Vec<String> {
        match self {
            Bad::None => Vec::new(),
            Bad::Str(s) if s.is_empty() => Vec::new(),
            Bad::Str(s) => vec![s.clone()],
            Bad::Bool(b) => vec![b.to_string()],
            Bad::Int(n) => vec![n.to_string()],
            Bad::List(items) => items.clone(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrType {
    Required,
    Forbidden,
}

/// One field error of a failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldErr {
    pub(crate) path: FieldPath,
    /// `path` rendered, as Kubernetes prints it.
    pub(crate) field: String,
    pub(crate) kind: ErrType,
    pub(crate) bad: Bad,
}

impl FieldErr {
    pub(crate) fn required(path: FieldPath) -> Self {
        Self {
            field: path.render(),
            path,
            kind: ErrType::Required,
            bad: Bad::None,
        }
    }

    pub(crate) fn forbidden(path: FieldPath, bad: Bad) -> Self {
        Self {
            field: path.render(),
            path,
            kind: ErrType::Forbidden,
            bad,
        }
    }

    /// How `FormatChecksPrint` prints the error, `field` being the (renamed) field text.
    pub(crate) fn print(&self, field: &str) -> String {
        match self.kind {
            ErrType::Required => format!("{field}: Required value"),
            ErrType::Forbidden => match &self.bad {
                Bad::Str(s) if s.is_empty() => format!("{field}: Forbidden"),
                bad => format!(
                    "{field} is forbidden, forbidden values found: {}",
                    bad.print()
                ),
            },
        }
    }
}

/// A failed check: its id, Kubernetes' forbidden reason and its field errors (`None` for a
/// check that reports none), plus where kpol points when there are no field errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CheckResult {
    pub(crate) id: &'static str,
    pub(crate) reason: String,
    pub(crate) errs: Option<Vec<FieldErr>>,
    pub(crate) locus: Option<FieldPath>,
}

impl CheckResult {
    pub(crate) fn with_errs(
        id: &'static str,
        reason: impl Into<String>,
        errs: Vec<FieldErr>,
    ) -> Self {
        Self {
            id,
            reason: reason.into(),
            errs: Some(errs),
            locus: None,
        }
    }

    /// The first offending field: the first error's path, else the locus.
    pub(crate) fn first_path(&self) -> Option<&FieldPath> {
        self.errs
            .as_ref()
            .and_then(|e| e.first())
            .map(|e| &e.path)
            .or(self.locus.as_ref())
    }
}

/// `pluralize(singular, plural, n)`.
pub(crate) fn pluralize(singular: &'static str, plural: &'static str, n: usize) -> &'static str {
    if n == 1 { singular } else { plural }
}

/// Sorted, de-duplicated strings (`sets.NewString(...).List()`).
pub(crate) fn sorted_set<I: IntoIterator<Item = String>>(items: I) -> Vec<String> {
    let mut v: Vec<String> = items.into_iter().collect();
    v.sort();
    v.dedup();
    v
}

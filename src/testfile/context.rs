//! The Kyverno CLI's context file (`cli.kyverno.io/v1alpha1` `Context`: a test's `context:`,
//! `kyverno apply --context-file`), read strictly as the CLI reads it: sigs.k8s.io/yaml's
//! strict unmarshalling into the `Context` type (`cmd/cli/kubectl-kyverno/apis/v1alpha1`).
//! So an unknown field anywhere in the typed part (the file, `metadata`, `spec`, an image
//! entry) is an error, and field names match case-insensitively. An image's string field
//! takes any scalar, written as sigs.k8s.io/yaml writes it for a Go string (`1.10` → `"1.1"`,
//! `yes` → `"true"`, null → `""`); a list or an object there is an error. The resources
//! themselves are free-form objects (`Unstructured`), which need only a `kind`.
//!
//! Only the reading lives here; serving the data to CEL is `crate::cel::context`'s job.

use super::fields::{Fields, LoadError};
use crate::source::SourceFile;
use crate::yaml::{Node, Value};

const FILE_FIELDS: &[&str] = &["apiVersion", "kind", "metadata", "spec"];
const SPEC_FIELDS: &[&str] = &["resources", "images"];
/// The JSON names of Kubernetes' `ObjectMeta`.
const METADATA_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
/// An `ImageData` entry's string fields, then its free-form ones.
const IMAGE_STRINGS: &[&str] = &[
    "image",
    "resolvedImage",
    "registry",
    "repository",
    "tag",
    "digest",
];
const IMAGE_VALUES: &[&str] = &["imageIndex", "manifest", "config"];

/// What a context file holds.
#[derive(Clone, Debug, Default)]
pub(crate) struct ContextSpec {
    /// `spec.resources`, in file order: objects, each with a `kind`.
    pub resources: Vec<Node>,
    /// `spec.images`, in file order.
    pub images: Vec<ImageData>,
}

/// One `spec.images` entry, its fields as the CLI's `ImageData` type holds them: absent
/// strings are empty, absent (or null) values `None`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ImageData {
    /// `image`, `resolvedImage`, `registry`, `repository`, `tag`, `digest`, in that order.
    pub strings: Vec<(&'static str, String)>,
    /// `imageIndex`, `manifest`, `config` that are written and not null.
    pub values: Vec<(&'static str, Node)>,
}

impl ImageData {
    /// The string field `name` (empty when absent).
    pub fn string(&self, name: &str) -> &str {
        self.strings
            .iter()
            .find(|(k, _)| *k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// Reads the first document of a context file (`root`; null reads as an empty context).
pub(crate) fn parse_context(source: &SourceFile, root: &Node) -> Result<ContextSpec, LoadError> {
    let f = Fields::new(source, root, "context", FILE_FIELDS)?;
    for key in ["apiVersion", "kind"] {
        f.string(key)?;
    }
    if let Some(m) = f.get("metadata") {
        Fields::new(source, m, "context metadata", METADATA_FIELDS)?;
    }
    let mut out = ContextSpec::default();
    let Some(spec) = f.get("spec") else {
        return Ok(out);
    };
    let s = Fields::new(source, spec, "context spec", SPEC_FIELDS)?;
    for r in s.list("resources")? {
        out.resources.push(resource(source, r)?);
    }
    for i in s.list("images")? {
        out.images.push(image(source, i)?);
    }
    Ok(out)
}

/// A `spec.resources` item: an object with a non-empty `kind` (what decoding an
/// `Unstructured` requires).
fn resource(source: &SourceFile, node: &Node) -> Result<Node, LoadError> {
    if node.as_map().is_none() {
        return Err(LoadError::at(
            source,
            node,
            format!(
                "context resource: expected an object, got {}",
                node.value.type_name()
            ),
        ));
    }
    if node
        .get("kind")
        .and_then(Node::as_str)
        .unwrap_or("")
        .is_empty()
    {
        return Err(LoadError::at(
            source,
            node,
            "context resource: the object has no kind",
        ));
    }
    Ok(node.clone())
}

fn image(source: &SourceFile, node: &Node) -> Result<ImageData, LoadError> {
    let known: Vec<&str> = IMAGE_STRINGS.iter().chain(IMAGE_VALUES).copied().collect();
    let f = Fields::new(source, node, "context image", &known)?;
    let mut out = ImageData::default();
    for key in IMAGE_STRINGS {
        let v = match f.get(key) {
            None => String::new(),
            Some(n) => scalar_string(source, n, key)?,
        };
        out.strings.push((key, v));
    }
    for key in IMAGE_VALUES {
        if let Some(v) = f.get(key) {
            out.values.push((key, v.clone()));
        }
    }
    Ok(out)
}

/// A YAML scalar read into a Go string field by sigs.k8s.io/yaml: the YAML 1.1 value written
/// back as text (integers in decimal, floats with float32 digits, booleans `true`/`false`).
fn scalar_string(source: &SourceFile, n: &Node, name: &str) -> Result<String, LoadError> {
    match &n.value {
        Value::Str(s) => Ok(s.to_string()),
        Value::Int(i) => Ok(i.to_string()),
        Value::Float(f) => Ok(crate::number::format_go_g32(*f)),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null => Ok(String::new()),
        v => Err(LoadError::at(
            source,
            n,
            format!("field {name}: expected a string, got {}", v.type_name()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn parse(text: &str) -> Result<ContextSpec, String> {
        let src = SourceFile::new("ctx.yaml", text);
        let docs = parse_documents(text, Limits::default()).unwrap_or_default();
        let root = docs.into_iter().next().map_or_else(Node::null, |d| d.root);
        parse_context(&src, &root).map_err(|e| e.to_string())
    }

    const HEAD: &str = "apiVersion: cli.kyverno.io/v1alpha1\nkind: Context\nmetadata:\n  name: c\n";

    #[test]
    fn reads_resources_and_images() {
        let c = parse(&format!(
            "{HEAD}spec:\n  resources:\n  - {{apiVersion: v1, kind: ConfigMap, metadata: \
             {{name: m}}, bogus: kept}}\n  images:\n  - image: 'a:1'\n    config: {{x: 1}}\n    \
             manifest: null\n"
        ))
        .unwrap();
        assert_eq!(c.resources.len(), 1);
        // A resource is free-form: its own unknown keys are kept.
        assert!(c.resources[0].get("bogus").is_some());
        assert_eq!(c.images[0].string("image"), "a:1");
        assert_eq!(c.images[0].string("tag"), "");
        let written: Vec<&str> = c.images[0].values.iter().map(|(k, _)| *k).collect();
        assert_eq!(written, ["config"]);
    }

    #[test]
    fn unknown_fields_are_errors_at_their_key() {
        let e = parse(&format!("{HEAD}spec:\n  resource: []\n")).unwrap_err();
        assert_eq!(e, "ctx.yaml:6:3: context spec: unknown field \"resource\"");
        let e = parse(&format!(
            "{HEAD}spec:\n  images:\n  - image: a\n    tags: x\n"
        ))
        .unwrap_err();
        assert_eq!(e, "ctx.yaml:8:5: context image: unknown field \"tags\"");
        let e = parse(&format!("{HEAD}  lables: {{}}\n")).unwrap_err();
        assert_eq!(
            e,
            "ctx.yaml:5:3: context metadata: unknown field \"lables\""
        );
        let e = parse(&format!("{HEAD}data: {{}}\n")).unwrap_err();
        assert_eq!(e, "ctx.yaml:5:1: context: unknown field \"data\"");
    }

    #[test]
    fn names_match_case_insensitively() {
        let c = parse(&format!(
            "{HEAD}Spec:\n  IMAGES:\n  - Image: 'a:1'\n    resolvedimage: r\n    Config: {{}}\n"
        ))
        .unwrap();
        assert_eq!(c.images[0].string("image"), "a:1");
        assert_eq!(c.images[0].string("resolvedImage"), "r");
        assert_eq!(c.images[0].values.len(), 1);
    }

    #[test]
    fn an_image_without_image_reads_as_empty() {
        let c = parse(&format!("{HEAD}spec:\n  images:\n  - registry: r\n")).unwrap();
        assert_eq!(c.images[0].string("image"), "");
        assert_eq!(c.images[0].string("registry"), "r");
    }

    // As the Kyverno v1.19.0 CLI reads them (checked with image.GetMetadata): YAML 1.1
    // scalars written back as Go strings.
    #[test]
    fn scalars_in_string_fields_are_written_as_go_strings() {
        let c = parse(&format!(
            "{HEAD}spec:\n  images:\n  - {{image: 1.10, tag: 3.14159265358979, digest: \
             1234567.0, registry: y, repository: 0x1F, resolvedImage: ~}}\n"
        ))
        .unwrap();
        let i = &c.images[0];
        let got: Vec<&str> = [
            "image",
            "tag",
            "digest",
            "registry",
            "repository",
            "resolvedImage",
        ]
        .iter()
        .map(|k| i.string(k))
        .collect();
        assert_eq!(got, ["1.1", "3.1415927", "1.234567e+06", "true", "31", ""]);
    }

    #[test]
    fn types_are_strict() {
        let e = parse(&format!("{HEAD}spec:\n  images:\n  - image: [a]\n")).unwrap_err();
        assert_eq!(
            e,
            "ctx.yaml:7:12: field image: expected a string, got array"
        );
        let e = parse(&format!("{HEAD}spec:\n  images: {{}}\n")).unwrap_err();
        assert!(
            e.starts_with("ctx.yaml:6:11: field images: expected a list"),
            "{e}"
        );
        let e = parse(&format!(
            "{HEAD}spec:\n  resources:\n  - {{apiVersion: v1}}\n"
        ))
        .unwrap_err();
        assert_eq!(e, "ctx.yaml:7:5: context resource: the object has no kind");
        let e = parse(&format!("{HEAD}spec:\n  resources:\n  - 3\n")).unwrap_err();
        assert_eq!(
            e,
            "ctx.yaml:7:5: context resource: expected an object, got number"
        );
        assert!(parse("").unwrap().images.is_empty());
    }
}

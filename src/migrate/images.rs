//! Kyverno's `images` context variable (validate.md §11.7) as a CEL variable: the map
//! `{GROUP: {CONTAINER NAME: INFO}}` Kyverno builds from the resource's `initContainers`,
//! `containers` and `ephemeralContainers` (`pkg/utils/api/image.go`), each image read with the
//! distribution reference grammar and the default registry `docker.io`
//! (`pkg/utils/image/infos.go`, `GetImageInfo` with registry mutation on). Where Kyverno has
//! no `images` (no container with an image, a kind without an image extractor) the variable
//! is the empty map: every path under it is then missing, as under Kyverno's absent variable.

use super::Blocked;
use super::cel_text::{quote, runtime_error};
use crate::source::Span;

/// The variable's name, as Kyverno's context names it.
pub(crate) const NAME: &str = "images";

/// distribution/reference v0.6.0 (`regexp.go`): a host (domain name or bracketed IPv6
/// address) with an optional port, and the path components.
const DOMAIN: &str = r"(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?";
const COMPONENT: &str = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
const TAG: &str = r"[\w][\w.-]{0,127}";
const DIGEST: &str = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}";
/// The digests `digest.Parse` accepts: an algorithm go-digest knows, lower-case hex of its
/// length (any other is an error there).
const DIGEST_VALID: &str = r"^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$";

/// Whether the CEL text `e` reads the variable `variables.images`.
pub(crate) fn reads(e: &str) -> bool {
    let needle = "variables.images";
    e.match_indices(needle).any(|(i, _)| {
        !e[i + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The variables for a rule matching `kinds` (as the rule names them): `imagesPodSpec`, `imagesRefs` (the
/// containers with an image), `imagesInfos` (each image read) and `images` (the map). A rule
/// matching only `Pod` reads `object.spec`, which the ValidatingPolicy's autogen rewrites for
/// the pod controllers as Kyverno's extractor reads them; kinds with different pod spec paths
/// are refused. (Three variables: one expression would nest deeper than CEL allows.)
pub(crate) fn variables(kinds: &[String], span: Span) -> Result<Vec<(String, String)>, Blocked> {
    let mut path: Option<&[&str]> = None;
    let mut none = false;
    for k in kinds {
        match crate::variables::image::pod_spec_path(k.rsplit('/').next().unwrap_or(k)) {
            Some(p) if path.is_none_or(|q| q == p) => path = Some(p),
            Some(_) => {
                return Err(Blocked::new(
                    span,
                    "the `images` variable for kinds whose pod specs lie at different paths is not translated".to_owned(),
                ));
            }
            None => none = true,
        }
    }
    let Some(path) = path else {
        return Ok(vec![(NAME.to_owned(), "{}".to_owned())]);
    };
    if none {
        return Err(Blocked::new(
            span,
            "the `images` variable for kinds with and without an image extractor is not translated"
                .to_owned(),
        ));
    }
    let groups: Vec<String> = GROUPS
        .iter()
        .map(|g| {
            format!(
                "?'{g}': optional.ofNonZeroValue(listObjToMap(variables.{INFOS}.filter(x, x.g == '{g}'), variables.{INFOS}.filter(x, x.g == '{g}'), 'name', 'info'))"
            )
        })
        .collect();
    Ok(vec![
        (SPEC.to_owned(), spec(path)),
        (REFS.to_owned(), refs()),
        (
            INFOS.to_owned(),
            format!(
                "variables.{REFS}.map(c, {{'g': c.g, 'name': c.name, 'info': {}}})",
                info()
            ),
        ),
        (NAME.to_owned(), format!("{{{}}}", groups.join(", "))),
    ])
}

/// Whether the variable `expr` is the `images` map [`variables`] builds (under any name the
/// merge of rules gave it).
pub(crate) fn is_map(expr: &str) -> bool {
    expr.starts_with(&format!(
        "{{?'initContainers': optional.ofNonZeroValue(listObjToMap(variables.{INFOS}"
    ))
}

/// The helper variables' names.
const SPEC: &str = "imagesPodSpec";
const REFS: &str = "imagesRefs";
const INFOS: &str = "imagesInfos";
const GROUPS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// A value that is an error where it is evaluated, typed `dyn`.
fn fail(why: &str) -> String {
    format!(
        "dyn({})",
        runtime_error(&format!("failed to load images: {why}"))
    )
}

/// Every container with an image, of the three groups in turn (`{g, i, name, image}`): a
/// group that is no list, a container that is no map or has no string name are errors; a
/// container whose image is no string or blank is skipped.
fn refs() -> String {
    let spec = format!("variables.{SPEC}");
    let keep = format!(
        "type(c) != map ? {} : !('name' in c) || type(c.name) != string ? {} : 'image' in c && type(c.image) == string && c.image.trim() != ''",
        fail("invalid image config"),
        fail("invalid key")
    );
    format!(
        "{spec} == null ? [] : ['{groups}'].map(g, !(g in {spec}) || {spec}[g] == null ? [] : type({spec}[g]) != list ? {} : lists.range(size({spec}[g])).map(i, {{'g': dyn(g), 'i': dyn(i), 'c': {spec}[g][i]}}).filter(x, cel.bind(c, x.c, {keep})).map(x, {{'g': x.g, 'i': x.i, 'name': x.c.name, 'image': x.c.image}})).flatten()",
        fail("invalid type"),
        groups = GROUPS.join("', '"),
    )
}

/// The pod spec (null where a level of the path is missing or null; a level that is no map
/// is Kyverno's "invalid image config").
fn spec(path: &[&str]) -> String {
    let mut at = "object".to_owned();
    let mut levels = Vec::new();
    for (i, step) in path.iter().enumerate() {
        let next = format!("s{i}");
        levels.push((
            next.clone(),
            format!("'{step}' in {at} ? {at}.{step} : null"),
        ));
        at = next;
    }
    let mut e = at;
    for (var, value) in levels.iter().rev() {
        e = format!(
            "cel.bind({var}, {value}, {var} == null ? null : type({var}) != map ? {} : {e})",
            fail("invalid image config")
        );
    }
    e
}

/// `GetImageInfo(c.image)`: the image with `docker.io/` before it where the part before its
/// first `/` is no registry, read with the reference grammar (its pieces joined by spaces,
/// which no reference holds); an image it cannot read is an error. The JSON pointer's prefix
/// is the pod spec path of the resource's kind (a ValidatingPolicy's autogen rewrites
/// `object.spec`, not this text).
fn info() -> String {
    let reference =
        format!("^((?:{DOMAIN}/)?{COMPONENT}(?:/{COMPONENT})*)(?::({TAG}))?(?:@({DIGEST}))?$");
    let name = format!("^(?:({DOMAIN})/)?({COMPONENT}(?:/{COMPONENT})*)$");
    let r = quote(&reference);
    let pointer = "(object.kind == 'Pod' ? '/spec' : object.kind == 'CronJob' ? '/spec/jobTemplate/spec/template/spec' : '/spec/template/spec') + '/' + c.g + '/' + string(c.i) + '/image'";
    format!(
        "cel.bind(f, (!c.image.contains('/') || (c.image.matches('^[^/.:A-Z]*/') && !c.image.startsWith('localhost/'))) ? 'docker.io/' + c.image : c.image, \
         !f.matches({r}) ? {bad} : \
         cel.bind(m, regex.replace(f, {r}, {g3}).split(' '), cel.bind(n, regex.replace(m[0], {n}, {g2}).split(' '), \
         cel.bind(x, {{'reg': n[0], 'p': n[1], 'd': m[2], 't': m[1] == '' && m[2] == '' ? 'latest' : m[1]}}, \
         size(x.p) > 255 || (x.d != '' && !x.d.matches({dv})) ? {bad} : \
         {{'registry': x.reg, 'name': regex.replace(x.p, '^.*/', ''), 'path': x.p, ?'tag': optional.ofNonZeroValue(x.t), ?'digest': optional.ofNonZeroValue(x.d), \
         'reference': x.reg + '/' + x.p + (x.d != '' ? '@' + x.d : ':' + x.t), 'referenceWithTag': x.reg + '/' + x.p + ':' + x.t, 'jsonPointer': {pointer}}}))))",
        bad = fail("bad image"),
        g3 = quote(r"\1 \2 \3"),
        g2 = quote(r"\1 \2"),
        n = quote(&name),
        dv = quote(DIGEST_VALID),
    )
}

//! The typed schema the merge walks: Kubernetes' built-in types as structured-merge-diff sees
//! them, read once from `schema-1.32.txt` (written by `scripts/gen-smd-schema`, whose doc
//! comment gives the line format).
//!
//! A type is an *atom*: any of a scalar, a list and a map (a struct is a map with declared
//! fields). Named types refer to each other by index; two common types stand for values with
//! no schema (`__untyped_atomic_`: everything below is atomic; `__untyped_deduced_`: maps merge
//! key by key, lists are atomic), as `k8s.io/kube-openapi` `schemaconv` defines them.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::yaml::Value;

/// The generated data: Kubernetes 1.32 built-ins (kubectl-validate builtins, see its header).
const DATA: &str = include_str!("schema-1.32.txt");

/// Index of `__untyped_atomic_`.
pub(crate) const UNTYPED_ATOMIC: usize = 0;
/// Index of `__untyped_deduced_`.
pub(crate) const DEDUCED: usize = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    String,
    Numeric,
    Boolean,
    Untyped,
}

/// How a list's elements relate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Scalars merged as a set.
    Set,
    /// Maps merged by these key fields.
    Map(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct List {
    pub kind: ListKind,
    pub elem: TypeRef,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Field {
    pub name: String,
    pub ty: TypeRef,
    pub default: Option<Value>,
}

/// A map or struct: declared fields, and the type of any other key (`None`: other keys are
/// not allowed).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MapType {
    pub atomic: bool,
    pub fields: Vec<Field>,
    pub elem: Option<TypeRef>,
}

impl MapType {
    pub(crate) fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Atom {
    pub scalar: Option<Scalar>,
    pub list: Option<List>,
    pub map: Option<MapType>,
}

/// A field's type: a named type (with the field's own map kind, when it sets one) or an
/// inline atom.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TypeRef {
    Named {
        index: usize,
        atomic_override: Option<bool>,
    },
    Inline(Box<Atom>),
}

impl TypeRef {
    pub(crate) const fn named(index: usize) -> Self {
        TypeRef::Named {
            index,
            atomic_override: None,
        }
    }
}

/// An atom as a value sees it: the parts it may take, with the effective relationships.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    pub scalar: Option<Scalar>,
    pub list: Option<&'a List>,
    pub map: Option<&'a MapType>,
    pub list_atomic: bool,
    pub map_atomic: bool,
}

impl View<'_> {
    /// Narrows the view to the part `value` takes (structured-merge-diff `deduceAtom`): a value
    /// the atom has no part for, or null, keeps every part.
    pub(crate) fn deduce(self, value: Option<&Value>) -> Self {
        match value {
            Some(Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_))
                if self.scalar.is_some() =>
            {
                View {
                    list: None,
                    map: None,
                    ..self
                }
            }
            Some(Value::Seq(_)) if self.list.is_some() => View {
                scalar: None,
                map: None,
                ..self
            },
            Some(Value::Map(_)) if self.map.is_some() => View {
                scalar: None,
                list: None,
                ..self
            },
            _ => self,
        }
    }
}

/// The whole schema: types, and the kinds each group-version declares.
#[derive(Debug)]
pub(crate) struct Schema {
    types: Vec<Atom>,
    #[cfg(test)]
    names: HashMap<String, usize>,
    /// `(apiVersion, kind)` → root type.
    kinds: HashMap<(String, String), usize>,
    /// Group-versions with a document (Kyverno has a type converter for these only).
    group_versions: std::collections::HashSet<String>,
}

/// The built-in schema, parsed on first use.
pub(crate) static BUILTIN: LazyLock<Result<Schema, String>> = LazyLock::new(|| Schema::parse(DATA));

impl Schema {
    pub(crate) fn resolve<'a>(&'a self, tr: &'a TypeRef) -> Option<View<'a>> {
        let (atom, over) = match tr {
            TypeRef::Named {
                index,
                atomic_override,
            } => (self.types.get(*index)?, *atomic_override),
            TypeRef::Inline(atom) => (atom.as_ref(), None),
        };
        let mut view = View {
            scalar: atom.scalar,
            list: atom.list.as_ref(),
            map: atom.map.as_ref(),
            list_atomic: atom
                .list
                .as_ref()
                .is_some_and(|l| l.kind == ListKind::Atomic),
            map_atomic: atom.map.as_ref().is_some_and(|m| m.atomic),
        };
        if let Some(atomic) = over {
            // A field's map kind overrides the referred type's (schema `Resolve`): the map
            // part if there is one, else the list part; a scalar cannot take one.
            if view.map.is_some() {
                view.map_atomic = atomic;
            } else if view.list.is_some() {
                view.list_atomic = atomic;
            } else {
                return None;
            }
        }
        Some(view)
    }

    /// The root type of a kind, if its group-version has a document declaring it.
    pub(crate) fn kind(&self, api_version: &str, kind: &str) -> Option<usize> {
        self.kinds
            .get(&(api_version.to_owned(), kind.to_owned()))
            .copied()
    }

    /// Every `apiVersion` (group/version, or the core version alone) that declares `kind`,
    /// sorted.
    pub(crate) fn api_versions_of(&self, kind: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .kinds
            .keys()
            .filter(|(_, k)| k == kind)
            .map(|(gv, _)| gv.clone())
            .collect();
        out.sort();
        out
    }

    pub(crate) fn has_group_version(&self, api_version: &str) -> bool {
        self.group_versions.contains(api_version)
    }

    #[cfg(test)]
    pub(crate) fn named(&self, name: &str) -> Option<&Atom> {
        self.names.get(name).and_then(|&i| self.types.get(i))
    }

    pub(crate) fn parse(text: &str) -> Result<Schema, String> {
        let mut names = HashMap::new();
        names.insert("__untyped_atomic_".to_owned(), UNTYPED_ATOMIC);
        names.insert("__untyped_deduced_".to_owned(), DEDUCED);
        // First pass: every type's index, so that references may point forward.
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("T ") {
                let name = rest.split(' ').next().unwrap_or("");
                let next = names.len();
                if names.insert(name.to_owned(), next).is_some() {
                    return Err(format!("type `{name}` is defined twice"));
                }
            }
        }
        let mut types = vec![Atom::default(); names.len()];
        types[UNTYPED_ATOMIC] = common_untyped(UNTYPED_ATOMIC, true);
        types[DEDUCED] = common_untyped(DEDUCED, false);
        let mut kinds = HashMap::new();
        let mut group_versions = std::collections::HashSet::new();
        for (n, line) in text.lines().enumerate() {
            let at = |e: String| format!("line {}: {e}", n + 1);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.splitn(4, ' ');
            match words.next() {
                Some("K") => {
                    let (Some(gv), Some(kind), Some(ty)) =
                        (words.next(), words.next(), words.next())
                    else {
                        return Err(at("a kind line needs apiVersion, kind and type".into()));
                    };
                    let index = *names
                        .get(ty)
                        .ok_or_else(|| at(format!("unknown type `{ty}`")))?;
                    group_versions.insert(gv.to_owned());
                    kinds.insert((gv.to_owned(), kind.to_owned()), index);
                }
                Some("T") => {
                    let rest = &line[2..];
                    let (name, atom_text) = rest
                        .split_once(' ')
                        .ok_or_else(|| at("a type line needs a name and an atom".into()))?;
                    let mut p = Parser {
                        text: atom_text.as_bytes(),
                        pos: 0,
                        names: &names,
                    };
                    let atom = p.atom().map_err(at)?;
                    if p.pos != p.text.len() {
                        return Err(at(format!("trailing text at column {}", p.pos + 1)));
                    }
                    let index = names.get(name).copied().unwrap_or(0);
                    types[index] = atom;
                }
                Some("D") => {
                    let (Some(ty), Some(field), Some(json)) =
                        (words.next(), words.next(), words.next())
                    else {
                        return Err(at("a default line needs type, field and value".into()));
                    };
                    let value: serde_json::Value =
                        serde_json::from_str(json).map_err(|e| at(e.to_string()))?;
                    let index = *names
                        .get(ty)
                        .ok_or_else(|| at(format!("unknown type `{ty}`")))?;
                    let default = crate::yaml::Node::from_json(&value).value;
                    if let Some(f) = types[index]
                        .map
                        .as_mut()
                        .and_then(|m| m.fields.iter_mut().find(|f| f.name == field))
                    {
                        f.default = Some(default);
                    }
                }
                _ => return Err(at("unknown record".into())),
            }
        }
        Ok(Schema {
            types,
            #[cfg(test)]
            names,
            kinds,
            group_versions,
        })
    }
}

/// schemaconv's two common types: any scalar, a list of `__untyped_atomic_`, and a map of
/// itself (`deduced`: granular) or of `__untyped_atomic_` (atomic).
fn common_untyped(index: usize, atomic: bool) -> Atom {
    Atom {
        scalar: Some(Scalar::Untyped),
        list: Some(List {
            kind: ListKind::Atomic,
            elem: TypeRef::named(UNTYPED_ATOMIC),
        }),
        map: Some(MapType {
            atomic,
            fields: Vec::new(),
            elem: Some(TypeRef::named(index)),
        }),
    }
}

/// Reads one atom of the line format.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    names: &'a HashMap<String, usize>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "expected `{}` at column {}",
                c as char,
                self.pos + 1
            ))
        }
    }

    /// A word up to a delimiter of the format.
    fn word(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if matches!(c, b',' | b'}' | b')' | b'|' | b'!' | b':' | b'>' | b' ') {
                break;
            }
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.text[start..self.pos]).into_owned()
    }

    /// Parts separated by `|`, up to the end of the atom.
    fn atom(&mut self) -> Result<Atom, String> {
        let mut atom = Atom::default();
        loop {
            self.part(&mut atom)?;
            if !self.eat(b'|') {
                return Ok(atom);
            }
        }
    }

    fn part(&mut self, atom: &mut Atom) -> Result<(), String> {
        let col = self.pos + 1;
        let c = self
            .peek()
            .ok_or_else(|| format!("atom ends early at column {col}"))?;
        self.pos += 1;
        match c {
            b's' | b'n' | b'b' | b'u' => {
                atom.scalar = Some(match c {
                    b's' => Scalar::String,
                    b'n' => Scalar::Numeric,
                    b'b' => Scalar::Boolean,
                    _ => Scalar::Untyped,
                });
            }
            b'L' => {
                let kind = match self.peek() {
                    Some(b'a') => ListKind::Atomic,
                    Some(b's') => ListKind::Set,
                    Some(b'm') => {
                        self.pos += 1;
                        self.expect(b'<')?;
                        let mut keys = Vec::new();
                        loop {
                            keys.push(self.word());
                            if !self.eat(b',') {
                                break;
                            }
                        }
                        if self.peek() != Some(b'>') {
                            return Err(format!("expected `>` at column {}", self.pos + 1));
                        }
                        ListKind::Map(keys)
                    }
                    _ => return Err(format!("unknown list kind at column {}", self.pos + 1)),
                };
                self.pos += 1;
                let elem = self.type_ref()?;
                atom.list = Some(List { kind, elem });
            }
            b'M' => {
                let atomic = match self.peek() {
                    Some(b'a') => true,
                    Some(b'g' | b'-') => false,
                    _ => return Err(format!("unknown map kind at column {}", self.pos + 1)),
                };
                self.pos += 1;
                self.expect(b'{')?;
                let mut fields = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        let name = self.word();
                        self.expect(b':')?;
                        let ty = self.type_ref()?;
                        fields.push(Field {
                            name,
                            ty,
                            default: None,
                        });
                        if self.eat(b'}') {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
                let elem = if self.eat(b'*') {
                    Some(self.type_ref()?)
                } else {
                    None
                };
                atom.map = Some(MapType {
                    atomic,
                    fields,
                    elem,
                });
            }
            _ => return Err(format!("unknown atom part `{}` at column {col}", c as char)),
        }
        Ok(())
    }

    fn type_ref(&mut self) -> Result<TypeRef, String> {
        if self.eat(b'@') {
            let name = self.word();
            let index = *self
                .names
                .get(&name)
                .ok_or_else(|| format!("unknown type `{name}`"))?;
            let atomic_override = if self.eat(b'!') {
                match self.peek() {
                    Some(b'a') => Some(true),
                    Some(b'g') => Some(false),
                    _ => return Err(format!("unknown map kind at column {}", self.pos + 1)),
                }
            } else {
                None
            };
            if atomic_override.is_some() {
                self.pos += 1;
            }
            return Ok(TypeRef::Named {
                index,
                atomic_override,
            });
        }
        if self.eat(b'(') {
            let atom = self.atom()?;
            self.expect(b')')?;
            return Ok(TypeRef::Inline(Box::new(atom)));
        }
        let mut atom = Atom::default();
        self.part(&mut atom)?;
        Ok(TypeRef::Inline(Box::new(atom)))
    }
}

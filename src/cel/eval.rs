//! Evaluating compiled expressions: binding the top-level variables (`object`, `request`, …)
//! in a scope of the shared root context, `variables.<name>` computed in declaration order,
//! and the evaluation budget (crate::base::budget) so that no expression runs unbounded:
//! comprehension iterations and what `+` builds are charged to it.

use std::cell::RefCell;
use std::sync::Arc;

use cel::common::types::CelMapKey;
use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelInt, CelList, CelMap, CelNull, CelOptional, CelString,
    CelUInt, Kind,
};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, ExecutionError, FunctionContext, Value};

use super::compile::Program;
use crate::base::budget;

/// Work units one comprehension iteration costs: an iteration of the interpreter costs about
/// ten JMESPath nodes, so one rule evaluation runs at most 1,000,000 iterations (the
/// per-expression cap kpol had before the shared budget).
pub(crate) const ITERATION_COST: u64 = 10;

/// A function the interpreter calls with its arguments as they are, borrowed where they live
/// (the crate's `FunctionContext` form): nothing is converted to a `cel::Value` and back.
/// perf: a function taking `Value`s copies each argument out of the interpreter's tree and its
/// result back in; `__kpolBudget__` did that to every comprehension's range, so
/// `object.spec.containers.all(…)` copied the containers twice (docs/PERFORMANCE.md).
pub(super) type BorrowedFunction = Box<
    dyn for<'c, 'l> Fn(&mut FunctionContext<'c, 'l>) -> Result<CowVal<'c, 'l>, ExecutionError>
        + Send
        + Sync,
>;

/// The first argument of a call, taken out of it.
fn first_arg<'c, 'l>(ftx: &mut FunctionContext<'c, 'l>) -> Result<CowVal<'c, 'l>, ExecutionError> {
    if ftx.args.is_empty() {
        return Err(ExecutionError::invalid_argument_count(1, 0));
    }
    Ok(ftx.args.swap_remove(0))
}

/// The entries of a list or a map, else 0.
fn entries(v: &dyn Val) -> u64 {
    match v.get_type().kind() {
        Kind::List | Kind::Map => v
            .as_sizer()
            .map_or(0, |s| (*s.size().inner()).max(0) as u64),
        _ => 0,
    }
}

/// `__kpolBudget__(range)`: charges the range's size to the evaluation budget (a work unit
/// per iteration, crate::base::budget), then hands it back as it is.
pub(super) fn charge() -> BorrowedFunction {
    Box::new(|ftx| {
        let range = first_arg(ftx)?;
        budget::work(entries(range.as_ref()).saturating_mul(ITERATION_COST))
            .map_err(|e| ExecutionError::function_error("comprehension", e.to_string()))?;
        Ok(range)
    })
}

/// `__kpolSize__(value)`: charges what an operator or function built (strings and bytes by
/// length, lists and maps by entries: their elements are shared) to the evaluation budget,
/// then hands it back as it is.
pub(super) fn charge_size() -> BorrowedFunction {
    Box::new(|ftx| {
        let v = first_arg(ftx)?;
        let v_ref = v.as_ref();
        let n = match v_ref.get_type().kind() {
            Kind::String => v_ref
                .downcast_ref::<CelString>()
                .map_or(0, |s| s.inner().len() as u64),
            Kind::Bytes => v_ref
                .downcast_ref::<CelBytes>()
                .map_or(0, |b| b.inner().len() as u64),
            Kind::List => entries(v_ref) * 16,
            Kind::Map => entries(v_ref) * 32,
            _ => 0,
        };
        budget::bytes(n).map_err(|e| ExecutionError::function_error("_+_", e.to_string()))?;
        Ok(v)
    })
}

/// A CEL value converted once into the interpreter's own value tree, then bound in any number
/// of [`Activation`]s without copying it again. perf: binding a `cel::Value` converts the
/// whole tree (every map rebuilt and rehashed) each time an expression is evaluated; a library
/// policy evaluates dozens of expressions per resource (docs/PERFORMANCE.md).
#[derive(Clone, Debug)]
pub struct Shared(Arc<dyn Val>);

impl Shared {
    /// Converts `value` (its strings, lists and maps copied once).
    pub fn new(value: Value) -> Self {
        // kpol binds only data values (null, scalars, strings, lists, maps); a function value,
        // the one kind the conversion refuses, is bound as null.
        match Box::<dyn Val>::try_from(value) {
            Ok(val) => Shared(Arc::from(val)),
            Err(_) => Self::null(),
        }
    }

    /// `null`.
    pub fn null() -> Self {
        Shared(Arc::new(CelNull))
    }

    /// A YAML node converted straight into the interpreter's values: the same values as
    /// `Shared::new(to_cel(node))`, without the `cel::Value` tree in between (perf: that tree
    /// was built, cloned map by map and dropped for every resource a CEL policy read).
    pub(crate) fn of_node(node: &crate::yaml::Node) -> Self {
        Shared(Arc::from(node_val(node)))
    }

    /// The map `value` with `extra` entries added (replacing entries of the same key), each
    /// converted once; a `value` that is not a map is converted as it is.
    pub(crate) fn map_with(value: Value, extra: Vec<(&'static str, Box<dyn Val>)>) -> Self {
        let Value::Map(m) = value else {
            return Self::new(value);
        };
        let mut map: std::collections::HashMap<CelMapKey<'static>, Box<dyn Val>> =
            std::collections::HashMap::with_capacity(m.map.len() + extra.len());
        for (k, v) in m.map.iter() {
            // As Shared::new: a function value is null.
            let v = Box::<dyn Val>::try_from(v.clone()).unwrap_or_else(|_| Box::new(CelNull));
            map.insert(CelMapKey::from(k.clone()), v);
        }
        for (k, v) in extra {
            map.insert(CelMapKey::from(k.to_owned()), v);
        }
        Shared(Arc::new(CelMap::from(map)))
    }
}

/// A YAML node as the interpreter's value ([`super::convert::to_cel`]'s types: `Int` stays
/// `int`, `Float` `double`, map keys strings).
pub(crate) fn node_val(node: &crate::yaml::Node) -> Box<dyn Val> {
    use crate::yaml::Value as Y;
    match &node.value {
        Y::Null => Box::new(CelNull),
        Y::Bool(b) => Box::new(CelBool::from(*b)),
        Y::Int(i) => Box::new(CelInt::from(*i)),
        Y::Float(f) => Box::new(CelDouble::from(*f)),
        Y::Str(s) => Box::new(CelString::from(s.clone())),
        Y::Seq(items) => Box::new(CelList::from(
            items.iter().map(node_val).collect::<Vec<_>>(),
        )),
        Y::Map(m) => {
            let mut map: std::collections::HashMap<CelMapKey<'static>, Box<dyn Val>> =
                std::collections::HashMap::with_capacity(m.len());
            for (k, v) in m.iter() {
                map.insert(CelMapKey::from(k.to_owned()), node_val(v));
            }
            Box::new(CelMap::from(map))
        }
    }
}

/// An owned copy of `v`: what converting it to a `cel::Value` and that back to the
/// interpreter's values gives (a `type` becomes its name, a function value null, a value with
/// no `cel::Value` form the conversion's error), in one copy. Null, scalars, strings, lists
/// and maps are copied here; any other value goes through the two conversions, which work on
/// each list element and map entry alone, so a tree copied partly here and partly through them
/// equals one converted whole.
fn owned_val(v: &dyn Val) -> Result<Box<dyn Val>, ExecutionError> {
    if let Some(s) = v.downcast_ref::<CelString>() {
        return Ok(Box::new(CelString::from(s.inner().to_owned())));
    }
    if let Some(m) = v.downcast_ref::<CelMap>() {
        let mut map: std::collections::HashMap<CelMapKey<'static>, Box<dyn Val>> =
            std::collections::HashMap::with_capacity(m.inner().len());
        for (k, v) in m.inner() {
            map.insert(k.clone().into_static(), owned_val(v.as_ref())?);
        }
        return Ok(Box::new(CelMap::from(map)));
    }
    if let Some(l) = v.downcast_ref::<CelList>() {
        let items = l.inner().iter().map(|i| owned_val(i.as_ref()));
        return Ok(Box::new(CelList::from(
            items.collect::<Result<Vec<_>, _>>()?,
        )));
    }
    if let Some(b) = v.downcast_ref::<CelBool>() {
        return Ok(Box::new(CelBool::from(*b.inner())));
    }
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Ok(Box::new(CelInt::from(*i.inner())));
    }
    if let Some(u) = v.downcast_ref::<CelUInt>() {
        return Ok(Box::new(CelUInt::from(*u.inner())));
    }
    if let Some(d) = v.downcast_ref::<CelDouble>() {
        return Ok(Box::new(CelDouble::from(*d.inner())));
    }
    if v.downcast_ref::<CelNull>().is_some() {
        return Ok(Box::new(CelNull));
    }
    // A function value, the one kind the second conversion refuses, is null (as in
    // Shared::new).
    let value = Value::try_from(v)?;
    Ok(Box::<dyn Val>::try_from(value).unwrap_or_else(|_| Box::new(CelNull)))
}

/// Whether converting `v` to a `cel::Value` and back gives `v` again, and cannot fail: null,
/// scalars and strings, and lists, maps and optionals of them (the conversion's own dispatch,
/// by kind). Any other value counts as not (a `type` becomes a string; opaque values, bytes,
/// durations and timestamps are not looked into).
pub(super) fn round_trips(v: &dyn Val) -> bool {
    match v.get_type().kind() {
        Kind::String => v.downcast_ref::<CelString>().is_some(),
        Kind::Map => v
            .downcast_ref::<CelMap>()
            .is_some_and(|m| m.inner().values().all(|v| round_trips(v.as_ref()))),
        Kind::List => v
            .downcast_ref::<CelList>()
            .is_some_and(|l| l.inner().iter().all(|v| round_trips(v.as_ref()))),
        Kind::Boolean => v.downcast_ref::<CelBool>().is_some(),
        Kind::Int => v.downcast_ref::<CelInt>().is_some(),
        Kind::UInt => v.downcast_ref::<CelUInt>().is_some(),
        Kind::Double => v.downcast_ref::<CelDouble>().is_some(),
        Kind::NullType => v.downcast_ref::<CelNull>().is_some(),
        Kind::Opaque => v
            .downcast_ref::<CelOptional>()
            .is_some_and(|o| o.option().is_none_or(round_trips)),
        _ => false,
    }
}

/// The values every CEL evaluation on one resource binds (`object`, `oldObject`, `request`,
/// `namespaceObject`, …), each converted at most once, on first use, and shared by every
/// policy and rule evaluated on the resource; none is built for a resource no CEL policy or
/// rule evaluates. The caller names each value by a key and says how to build it the first time.
/// One per resource evaluation (the engine makes it; crate::vpol, and the other CEL kinds,
/// take it), so no value outlives the resource it was built from.
#[derive(Default)]
pub struct ResourceValues {
    /// Per key: the value as a `cel::Value` (when one was asked for) and as a binding.
    built: RefCell<Vec<Built>>,
}

/// One key of a [`ResourceValues`]: its value as a `cel::Value` and as a binding, each once
/// asked for.
type Built = (&'static str, Option<Value>, Option<Shared>);

impl ResourceValues {
    pub fn new() -> Self {
        Self::default()
    }

    /// The value `key` names, built with `build` the first time it is asked for (as a
    /// `cel::Value`, to be placed inside another value: clones of it share its contents).
    pub fn value(&self, key: &'static str, build: impl FnOnce() -> Value) -> Value {
        if let Some((_, Some(v), _)) = self.built.borrow().iter().find(|(k, ..)| *k == key) {
            return v.clone();
        }
        // Built with no borrow held: a builder may ask for other values.
        let v = build();
        let mut built = self.built.borrow_mut();
        match built.iter_mut().find(|(k, ..)| *k == key) {
            Some(entry) => entry.1 = Some(v.clone()),
            None => built.push((key, Some(v.clone()), None)),
        }
        v
    }

    /// The value `key` names as a [`Shared`] binding, built with `build` the first time.
    pub fn shared(&self, key: &'static str, build: impl FnOnce() -> Value) -> Shared {
        if let Some((_, _, Some(s))) = self.built.borrow().iter().find(|(k, ..)| *k == key) {
            return s.clone();
        }
        let v = self.value(key, build);
        let mut built = self.built.borrow_mut();
        let Some(entry) = built.iter_mut().find(|(k, ..)| *k == key) else {
            return Shared::new(v);
        };
        entry.2.get_or_insert_with(|| Shared::new(v)).clone()
    }

    /// The binding `key` names, converted straight from `node` the first time it is asked
    /// for ([`Shared::of_node`]); `node` must be what `key` names for this resource.
    pub(crate) fn shared_node(&self, key: &'static str, node: &crate::yaml::Node) -> Shared {
        self.shared_with(key, || Shared::of_node(node))
    }

    /// The binding `key` names, built with `build` the first time it is asked for (a
    /// `cel::Value` of the same key built already is converted instead).
    pub(crate) fn shared_with(&self, key: &'static str, build: impl FnOnce() -> Shared) -> Shared {
        let existing = self
            .built
            .borrow()
            .iter()
            .find(|(k, ..)| *k == key)
            .map(|(_, v, s)| (v.clone(), s.clone()));
        let shared = match existing {
            Some((_, Some(s))) => return s,
            Some((Some(v), None)) => Shared::new(v),
            _ => build(),
        };
        let mut built = self.built.borrow_mut();
        match built.iter_mut().find(|(k, ..)| *k == key) {
            Some(entry) => entry.2 = Some(shared.clone()),
            None => built.push((key, None, Some(shared.clone()))),
        }
        shared
    }
}

/// The top-level variables of one evaluation, and the `variables` computed from them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Activation {
    vars: Vec<(&'static str, Shared)>,
    /// `variables`, once [`Activation::bind_variables`] has computed them: the interpreter's
    /// own map, each result converted once and added in place. perf: rebuilding and
    /// converting the whole map after each variable cost ~12 % of a library run
    /// (docs/PERFORMANCE.md).
    variables: Option<CelMap<'static>>,
    /// `variables.<name>` that failed, with their error: an expression that uses one gets that
    /// error (Kyverno evaluates variables lazily, so an unused failing variable is harmless).
    failed: Vec<(String, String)>,
    /// Kubernetes' composition environment (validate.cel, VAP): a failed variable's error is
    /// worded `composited variable "v" fails to evaluate: …`, as k8s words it.
    composited: bool,
}

impl VariableResolver for Activation {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        self.vars
            .iter()
            .find(|(n, _)| *n == variable)
            .map(|(_, v)| CowVal::Borrowed(&*v.0))
            .or_else(|| {
                (variable == "variables")
                    .then_some(self.variables.as_ref())
                    .flatten()
                    .map(|m| CowVal::Borrowed(m as &dyn Val))
            })
    }
}

impl Activation {
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds a top-level variable (replacing an earlier binding of the same name), converting
    /// it; [`Activation::bind`] binds one converted already.
    pub fn set(&mut self, name: &'static str, value: Value) {
        self.bind(name, Shared::new(value));
    }

    /// Binds a top-level variable to a converted value (replacing an earlier binding).
    pub fn bind(&mut self, name: &'static str, value: Shared) {
        self.vars.retain(|(n, _)| *n != name);
        if name == "variables" {
            self.variables = None;
        }
        self.vars.push((name, value));
    }

    /// [`Activation::bind_variables`] in Kubernetes' composition environment (validate.cel,
    /// ValidatingAdmissionPolicy), whose failed variables' errors k8s words its own way.
    pub(crate) fn bind_composited_variables<'a>(
        &mut self,
        defs: impl IntoIterator<Item = (&'a str, &'a Program)>,
    ) {
        self.composited = true;
        self.bind_variables(defs);
    }

    /// Computes `variables` from `(name, program)` pairs in order; each sees those before it
    /// (a later variable of the same name replaces an earlier one).
    pub(crate) fn bind_variables<'a>(
        &mut self,
        defs: impl IntoIterator<Item = (&'a str, &'a Program)>,
    ) {
        self.vars.retain(|(n, _)| *n != "variables");
        self.variables = Some(CelMap::default());
        for (name, program) in defs {
            // perf: the result is copied once, straight into an owned value; it went through a
            // `cel::Value` and back, two deep copies (docs/PERFORMANCE.md, round 8).
            match self.run(program, |v| owned_val(v.as_ref())) {
                Ok(v) => {
                    let mut map = self
                        .variables
                        .take()
                        .map(CelMap::into_inner)
                        .unwrap_or_default();
                    map.insert(CelMapKey::from(name.to_owned()), v);
                    self.variables = Some(CelMap::from(map));
                }
                Err(e) => self.failed.push((name.to_owned(), e)),
            }
        }
    }

    /// Evaluates one program; errors are worded as cel-go words them ([`super::go_errors`]).
    pub fn eval(&self, program: &Program) -> Result<Value, String> {
        self.run(program, |v| Value::try_from(v.as_ref()))
    }

    /// Evaluates one program and hands its result, as the interpreter gives it, to `take`
    /// (within the evaluation's budget); errors of either are worded as in [`Activation::eval`].
    fn run<T>(
        &self,
        program: &Program,
        take: impl FnOnce(CowVal<'_, '_>) -> Result<T, ExecutionError>,
    ) -> Result<T, String> {
        let expr = program.expr.as_ref().map_err(Clone::clone)?;
        let root: &Context<'_, '_> = &super::env::ROOT;
        let mut scope = root.new_inner_scope();
        // The variables are looked up in this activation, borrowed, never copied.
        scope.set_variable_resolver(self);
        let _budget = budget::Scope::enter();
        let _checks = super::k8s_authz::Checks::enter();
        Value::resolve_val(expr, &scope)
            .and_then(take)
            .map_err(|e| self.explain(e))
    }

    /// Evaluates a program that must produce a bool.
    pub(crate) fn eval_bool(&self, program: &Program) -> Result<bool, String> {
        match self.eval(program)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!(
                "expression '{}' must evaluate to bool, got {}",
                program.text,
                other.type_of()
            )),
        }
    }

    fn explain(&self, e: ExecutionError) -> String {
        if let ExecutionError::NoSuchKey(k) = &e
            && let Some((_, err)) = self.failed.iter().find(|(n, _)| n == k.as_str())
        {
            return if self.composited {
                format!("composited variable \"{k}\" fails to evaluate: {err}")
            } else {
                err.clone()
            };
        }
        super::go_errors::text(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::compile::compile;
    use crate::cel::convert::map_of;
    use crate::source::Span;

    fn run(expr: &str) -> Result<Value, String> {
        let (p, err) = compile(expr, Span::EMPTY);
        assert!(err.is_none(), "{err:?}");
        let mut a = Activation::new();
        a.set(
            "object",
            map_of([("n", Value::Float(3.0)), ("s", Value::from("ab"))]),
        );
        a.eval(&p)
    }

    #[test]
    fn resource_values_are_built_once_and_shared() {
        let values = ResourceValues::new();
        let mut builds = 0;
        let (p, _) = compile("object.s == 'ab'", Span::EMPTY);
        for _ in 0..3 {
            let mut a = Activation::new();
            let v = values.shared("object", || {
                builds += 1;
                map_of([("s", Value::from("ab"))])
            });
            a.bind("object", v);
            assert_eq!(a.eval(&p), Ok(Value::Bool(true)));
        }
        assert_eq!(builds, 1);
        // The same key as a value: no second build either.
        let v = values.value("object", || Value::Null);
        assert!(matches!(v, Value::Map(_)));
    }

    fn node(text: &str) -> crate::yaml::Node {
        crate::yaml::parse_documents(text, Default::default())
            .unwrap()
            .remove(0)
            .root
    }

    fn as_value(s: &Shared) -> Value {
        Value::try_from(&*s.0).unwrap()
    }

    /// A node converted straight into the interpreter's values equals the same node converted
    /// through a `cel::Value` (types included: `int` stays `int`, `double` `double`).
    #[test]
    fn nodes_convert_straight_to_the_same_values() {
        let n = node("{a: 1, b: 1.5, c: [x, 2, {d: null}], e: true, f: {g: ''}, h: []}");
        let straight = Shared::of_node(&n);
        let through = Shared::new(crate::cel::convert::to_cel(&n));
        assert_eq!(as_value(&straight), as_value(&through));
        let (p, _) = compile(
            "object.a == 1 && type(object.a) == int && type(object.b) == double && object.c[2].d == null && object.f.g == '' && size(object.h) == 0",
            Span::EMPTY,
        );
        let mut act = Activation::new();
        act.bind("object", straight);
        assert_eq!(act.eval(&p), Ok(Value::Bool(true)));
    }

    /// A key converted straight from its node is built once; asked for as a `cel::Value`
    /// afterwards it is built as one, and the binding stays the first.
    #[test]
    fn shared_node_values_are_built_once() {
        let values = ResourceValues::new();
        let n = node("{s: ab}");
        let a = values.shared_node("object", &n);
        let b = values.shared_node("object", &n);
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let v = values.value("object", || crate::cel::convert::to_cel(&n));
        assert_eq!(v, as_value(&a));
        let c = values.shared("object", || Value::Null);
        assert!(Arc::ptr_eq(&a.0, &c.0));
        // A value first, then the binding: converted from that value, not built again.
        let values = ResourceValues::new();
        values.value("object", || map_of([("s", Value::from("x"))]));
        let d = values.shared_node("object", &n);
        assert_eq!(as_value(&d), map_of([("s", Value::from("x"))]));
    }

    #[test]
    fn maps_with_extra_entries() {
        let s = Shared::map_with(
            map_of([("a", Value::Int(1)), ("o", Value::Int(2))]),
            vec![("o", node_val(&node("{k: v}")))],
        );
        assert_eq!(
            as_value(&s),
            map_of([
                ("a", Value::Int(1)),
                ("o", map_of([("k", Value::from("v"))]))
            ])
        );
    }

    #[test]
    fn numbers_from_resources_compare_with_ints() {
        assert_eq!(run("object.n == 3"), Ok(Value::Bool(true)));
        assert_eq!(run("object.n > 2"), Ok(Value::Bool(true)));
        assert!(run("object.n + 1").is_err());
    }

    #[test]
    fn or_value_accepts_non_optional_receivers() {
        assert_eq!(run("object.s.orValue('x')"), Ok(Value::from("ab")));
        assert_eq!(run("object.?missing.orValue('x')"), Ok(Value::from("x")));
        assert_eq!(run("object.?s.orValue('x')"), Ok(Value::from("ab")));
    }

    /// `orValue` takes its arguments borrowed and gives what its `Value` form gave: a `type`,
    /// which that form turned into its name, still goes through it.
    #[test]
    fn or_value_gives_what_the_value_form_gave() {
        assert_eq!(
            run("optional.of([1]).orValue([]) == [1]"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            run("optional.none().orValue(object).s"),
            Ok(Value::from("ab"))
        );
        assert_eq!(run("object.?n.orValue(0)"), Ok(Value::Float(3.0)));
        assert_eq!(run("type(1).orValue('x') == 'int'"), Ok(Value::Bool(true)));
        assert_eq!(
            run("optional.of(type(1)).orValue('x') == 'int'"),
            Ok(Value::Bool(true))
        );
        let (o, _) = compile("optional.of(object.s)", Span::EMPTY);
        let (none, _) = compile("optional.none()", Span::EMPTY);
        let (p, _) = compile(
            "variables.o.orValue('x') + variables.none.orValue(object.s)",
            Span::EMPTY,
        );
        let mut a = Activation::new();
        a.set("object", map_of([("s", Value::from("ab"))]));
        a.bind_variables([("o", &o), ("none", &none)]);
        assert_eq!(a.eval(&p), Ok(Value::from("abab")));
    }

    #[test]
    fn bind_and_strings() {
        assert_eq!(run("cel.bind(x, object.s, x + x)"), Ok(Value::from("abab")));
        assert_eq!(run("object.s.upperAscii()"), Ok(Value::from("AB")));
        assert_eq!(run("'a/b~c'.split('/').size()"), Ok(Value::Int(2)));
        assert_eq!(
            run("jsonpatch.escapeKey('a/b~c')"),
            Ok(Value::from("a~1b~0c"))
        );
    }

    #[test]
    fn offline_library_calls_are_errors() {
        let e = run("resource.Get('v1', 'pods', 'ns', 'n')").unwrap_err();
        assert!(e.contains("unsupported offline"), "{e}");
    }

    /// The budget's wrappers hand their value back as it is, whatever its type (each is a
    /// borrowed-argument function, crate::cel::eval::charge).
    #[test]
    fn budget_wrappers_pass_values_through() {
        assert_eq!(run("[1, 2].all(x, x > 0)"), Ok(Value::Bool(true)));
        assert_eq!(run("{'a': 1}.exists(k, k == 'a')"), Ok(Value::Bool(true)));
        assert_eq!(run("[object.s].map(x, x + '!')"), run("['ab!']"));
        assert_eq!(run("object.s + 'c' + 'd'"), Ok(Value::from("abcd")));
        assert_eq!(run("b'a' + b'b' == b'ab'"), Ok(Value::Bool(true)));
        assert_eq!(run("size([1] + [2, 3])"), Ok(Value::Int(3)));
        assert_eq!(run("1 + 2"), Ok(Value::Int(3)));
        assert!(run("'x'.all(c, true)").is_err());
    }

    #[test]
    fn hostile_expressions_hit_the_budget() {
        let e = run(
            "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, true)))",
        )
        .unwrap_err();
        assert!(e.contains("budget"), "{e}");
    }

    #[test]
    fn variables_doubling_each_other_hit_the_budget() {
        let mut defs = vec![("v0".to_owned(), compile("'xxxxxxxx'", Span::EMPTY).0)];
        for i in 1..40 {
            let text = format!("variables.v{0} + variables.v{0}", i - 1);
            defs.push((format!("v{i}"), compile(&text, Span::EMPTY).0));
        }
        let (last, _) = compile("size(variables.v39) > 0", Span::EMPTY);
        let _scope = budget::Scope::enter();
        let mut a = Activation::new();
        a.bind_variables(defs.iter().map(|(n, p)| (n.as_str(), p)));
        let e = a.eval(&last).unwrap_err();
        assert!(e.contains("MiB built in one rule evaluation"), "{e}");
    }

    #[test]
    fn variables_see_earlier_ones_and_a_later_name_wins() {
        let (a1, _) = compile("object.s", Span::EMPTY);
        let (b, _) = compile("variables.a + 'c'", Span::EMPTY);
        let (a2, _) = compile("variables.b + 'd'", Span::EMPTY);
        let (all, _) = compile("variables.a + '/' + variables.b", Span::EMPTY);
        let (size, _) = compile("size(variables)", Span::EMPTY);
        let mut act = Activation::new();
        act.set("object", map_of([("s", Value::from("ab"))]));
        act.bind_variables([("a", &a1), ("b", &b), ("a", &a2)]);
        assert_eq!(act.eval(&all), Ok(Value::from("abcd/abc")));
        assert_eq!(act.eval(&size), Ok(Value::Int(2)));
        // Computed again from scratch: none of the earlier ones is left.
        act.bind_variables([("b", &a1)]);
        assert_eq!(act.eval(&size), Ok(Value::Int(1)));
        // Bound as a value, `variables` replaces the computed ones.
        act.set("variables", map_of([("z", Value::Int(1))]));
        let (z, _) = compile("variables.z", Span::EMPTY);
        assert_eq!(act.eval(&z), Ok(Value::Int(1)));
    }

    #[test]
    fn failing_variable_reports_its_own_error_when_used() {
        let (v, _) = compile("object.missing", Span::EMPTY);
        let (ok, _) = compile("object.s", Span::EMPTY);
        let (use_v, _) = compile("variables.bad == 1", Span::EMPTY);
        let (use_ok, _) = compile("variables.good == 'ab'", Span::EMPTY);
        let mut a = Activation::new();
        a.set("object", map_of([("s", Value::from("ab"))]));
        a.bind_variables([("bad", &v), ("good", &ok)]);
        assert_eq!(a.eval(&use_ok), Ok(Value::Bool(true)));
        assert!(a.eval(&use_v).unwrap_err().contains("missing"));
    }

    /// A variable's value copied straight into an owned value is what the two conversions
    /// (to a `cel::Value` and back) give, types included: a `type` becomes its name.
    #[test]
    fn variables_are_copied_as_the_conversions_copy_them() {
        let text = "{'a': [1, 2u, 1.5, 'x', b'y', null, true, [object.s]], 'b': {1: type(1), \
                    true: object}, 'c': optional.of(object), 'd': optional.none(), \
                    'e': duration('1s'), 'f': timestamp('2020-01-01T00:00:00Z'), 'g': int}";
        let (p, err) = compile(text, Span::EMPTY);
        assert!(err.is_none(), "{err:?}");
        let mut a = Activation::new();
        a.set("object", map_of([("s", Value::from("ab"))]));
        let through = a
            .eval(&p)
            .map(|v| Value::try_from(&*Box::<dyn Val>::try_from(v).unwrap()).unwrap());
        let straight = a.run(&p, |v| owned_val(v.as_ref()));
        let straight = straight.map(|v| Value::try_from(&*v).unwrap());
        assert_eq!(straight, through);
        let (t, _) = compile(
            "variables.v.b[1] == 'int' && variables.v.g == 'int'",
            Span::EMPTY,
        );
        a.bind_variables([("v", &p)]);
        assert_eq!(a.eval(&t), Ok(Value::Bool(true)));
    }
}

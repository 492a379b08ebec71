//! Kubernetes' CEL value libraries (`k8s.io/apiserver/pkg/cel/library`: `quantity.go`,
//! `ip.go`, `cidr.go`, `urls.go`, `semverlib.go`) that Kyverno v1.19.0's environments declare:
//! `quantity`, `ip`/`cidr`, `url` and `semver` values with their methods. Errors are worded as
//! those libraries word them (checked against the v1.19.0 CLI).
//!
//! The `cel` crate dispatches a function by name whatever its receiver, so a method shared by
//! two types (`compareTo`, `isGreaterThan`, `isLessThan`, `ip`) is one function here that looks
//! at its receiver.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use cel::extractors::{Arguments, This};
use cel::objects::{Key, Map, Opaque};
use cel::{Context, ExecutionError, Value};

use crate::base::quantity::{Format, Quantity};

/// A Kubernetes quantity value; equal when their values are (`1Gi == 1024Mi`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CelQuantity(pub Quantity);

impl PartialEq for CelQuantity {
    fn eq(&self, other: &Self) -> bool {
        self.0.cmp_value(&other.0) == Ordering::Equal
    }
}
impl Eq for CelQuantity {}

impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

/// An IP address value (no zone, not IPv4-mapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CelIp(pub IpAddr);

impl Opaque for CelIp {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

/// A CIDR value: the address as written and the prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CelCidr {
    pub addr: IpAddr,
    pub bits: u8,
}

impl Opaque for CelCidr {
    fn runtime_type_name(&self) -> &str {
        "net.CIDR"
    }
}

/// A URL as Go's `url.ParseRequestURI` splits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CelUrl {
    scheme: String,
    host: String,
    path: String,
    query: String,
}

impl Opaque for CelUrl {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

/// A semantic version (blang/semver); build metadata does not take part in comparisons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CelSemver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Pre {
    Num(u64),
    Str(String),
}

impl Opaque for CelSemver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

fn opaque<T: Opaque>(v: &Value) -> Option<&T> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

fn no_overload(function: &str, args: &[&Value]) -> ExecutionError {
    ExecutionError::no_such_member_overload(
        function,
        args.iter().map(|a| a.type_of().to_string()).collect(),
    )
}

fn err(function: &str, message: impl ToString) -> ExecutionError {
    ExecutionError::function_error(function, message)
}

fn wrap<T: Opaque>(t: T) -> Value {
    Value::Opaque(Arc::new(t))
}

// ---- quantity ----

const QUANTITY_RE: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

fn parse_quantity(function: &str, s: &str) -> Result<CelQuantity, ExecutionError> {
    Quantity::parse(s).map(CelQuantity).ok_or_else(|| {
        err(
            function,
            format!("quantities must match the regular expression '{QUANTITY_RE}'"),
        )
    })
}

fn this_quantity<'a>(function: &str, v: &'a Value) -> Result<&'a Quantity, ExecutionError> {
    opaque::<CelQuantity>(v)
        .map(|q| &q.0)
        .ok_or_else(|| no_overload(function, &[v]))
}

/// The operand of `add`/`sub`: a quantity or an int.
fn quantity_operand(function: &str, this: &Value, v: &Value) -> Result<Quantity, ExecutionError> {
    match v {
        Value::Int(i) => Ok(Quantity::new(i128::from(*i), 0, Format::DecimalSi)),
        other => opaque::<CelQuantity>(other)
            .map(|q| q.0)
            .ok_or_else(|| no_overload(function, &[this, v])),
    }
}

fn quantity_sum(function: &str, this: &Value, other: &Value) -> Result<Value, ExecutionError> {
    let a = this_quantity(function, this)?;
    let b = quantity_operand(function, this, other)?;
    a.add(&b, function == "sub")
        .map(|q| wrap(CelQuantity(q)))
        .ok_or_else(|| err(function, "quantity arithmetic overflow"))
}

fn as_integer(q: &Quantity) -> Option<i64> {
    q.exact_integer().and_then(|i| i64::try_from(i).ok())
}

// ---- ip / cidr ----

/// Go's `netip.ParseAddr` error reason for a string that is not an address.
fn addr_reason(s: &str) -> &'static str {
    if s.is_empty() {
        return "unable to parse IP";
    }
    if s.contains(':') {
        return "unable to parse IP";
    }
    if !s.contains('.') {
        return "unable to parse IP";
    }
    let fields: Vec<&str> = s.split('.').collect();
    for f in &fields {
        if f.is_empty() {
            return "IPv4 field must have at least one digit";
        }
        if !f.bytes().all(|b| b.is_ascii_digit()) {
            return "unexpected character";
        }
        if f.len() > 1 && f.starts_with('0') {
            return "IPv4 field has octet with leading zero";
        }
        if f.parse::<u32>().map_or(true, |n| n > 255) {
            return "IPv4 field has value >255";
        }
    }
    if fields.len() < 4 {
        "IPv4 address too short"
    } else {
        "IPv4 address too long"
    }
}

fn is_mapped(a: &IpAddr) -> bool {
    matches!(a, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if s.contains('%') {
        return Err(format!("IP address {s:?} with zone value is not allowed"));
    }
    let addr: IpAddr = s.parse().map_err(|_| {
        format!(
            "IP Address {s:?} parse error during conversion from string: ParseAddr({s:?}): {}",
            addr_reason(s)
        )
    })?;
    if is_mapped(&addr) {
        return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
    }
    Ok(addr)
}

fn parse_cidr(s: &str) -> Result<CelCidr, String> {
    let prefix = |reason: String| {
        format!(
            "network address parse error during conversion from string: netip.ParsePrefix({s:?}): {reason}"
        )
    };
    let Some((a, b)) = s.rsplit_once('/') else {
        return Err(prefix("no '/'".to_owned()));
    };
    let addr: IpAddr = a
        .parse()
        .map_err(|_| prefix(format!("ParseAddr({a:?}): {}", addr_reason(a))))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let bits: u8 = match b.parse::<u16>() {
        Ok(n) if b.bytes().all(|c| c.is_ascii_digit()) && !(b.len() > 1 && b.starts_with('0')) => {
            if n > max {
                return Err(prefix("prefix length out of range".to_owned()));
            }
            n as u8
        }
        _ => return Err(prefix(format!("bad bits after slash: {b:?}"))),
    };
    if is_mapped(&addr) {
        return Err(format!("IPv4-mapped IPv6 address {s:?} is not allowed"));
    }
    Ok(CelCidr { addr, bits })
}

fn masked(addr: IpAddr, bits: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(bits))
            };
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & m))
        }
        IpAddr::V6(a) => {
            let m = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(bits))
            };
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & m))
        }
    }
}

impl CelCidr {
    fn contains(&self, ip: &IpAddr) -> bool {
        ip.is_ipv4() == self.addr.is_ipv4()
            && masked(*ip, self.bits) == masked(self.addr, self.bits)
    }
}

fn link_local_unicast(a: &IpAddr) -> bool {
    match a {
        IpAddr::V4(v) => v.octets()[0] == 169 && v.octets()[1] == 254,
        IpAddr::V6(v) => v.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn link_local_multicast(a: &IpAddr) -> bool {
    match a {
        IpAddr::V4(v) => v.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v) => v.segments()[0] & 0xff0f == 0xff02,
    }
}

/// Go's `netip.Addr.IsGlobalUnicast`.
fn global_unicast(a: &IpAddr) -> bool {
    if let IpAddr::V4(v) = a
        && *v == Ipv4Addr::BROADCAST
    {
        return false;
    }
    !a.is_unspecified() && !a.is_loopback() && !a.is_multicast() && !link_local_unicast(a)
}

fn this_ip<'a>(function: &str, v: &'a Value) -> Result<&'a IpAddr, ExecutionError> {
    opaque::<CelIp>(v)
        .map(|i| &i.0)
        .ok_or_else(|| no_overload(function, &[v]))
}

fn this_cidr<'a>(function: &str, v: &'a Value) -> Result<&'a CelCidr, ExecutionError> {
    opaque::<CelCidr>(v).ok_or_else(|| no_overload(function, &[v]))
}

// ---- url ----

/// Go's `url.ParseRequestURI` verdict: its error text when `s` is not a request URI.
pub(super) fn parse_request_uri(s: &str) -> Result<(), String> {
    parse_url(s).map(|_| ()).map_err(|e| {
        e.strip_prefix("URL parse error during conversion from string: ")
            .unwrap_or(&e)
            .to_owned()
    })
}

fn parse_url(s: &str) -> Result<CelUrl, String> {
    let invalid = || {
        format!(
            "URL parse error during conversion from string: parse {s:?}: invalid URI for request"
        )
    };
    if s.is_empty() || s.bytes().any(|b| b < 0x21 || b == 0x7f) {
        return Err(invalid());
    }
    let (rest, query) = match s.split_once('?') {
        Some((r, q)) => (r, q.to_owned()),
        None => (s, String::new()),
    };
    let scheme_end = rest.find(':').filter(|&i| {
        i > 0
            && rest.as_bytes()[0].is_ascii_alphabetic()
            && rest[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
    });
    let (scheme, rest) = match scheme_end {
        Some(i) => (rest[..i].to_ascii_lowercase(), &rest[i + 1..]),
        None if rest.starts_with('/') => (String::new(), rest),
        None => return Err(invalid()),
    };
    let (host, path) = match rest.strip_prefix("//") {
        Some(auth) if !scheme.is_empty() => {
            let end = auth.find('/').unwrap_or(auth.len());
            let authority = &auth[..end];
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            (host.to_owned(), auth[end..].to_owned())
        }
        _ if !scheme.is_empty() && !rest.starts_with('/') => return Err(invalid()),
        _ => (String::new(), rest.to_owned()),
    };
    Ok(CelUrl {
        scheme,
        host,
        path,
        query,
    })
}

fn split_host_port(host: &str) -> (&str, &str) {
    if let Some(rest) = host.strip_prefix('[')
        && let Some((h, after)) = rest.split_once(']')
    {
        return (h, after.strip_prefix(':').unwrap_or(""));
    }
    match host.rsplit_once(':') {
        Some((h, p)) => (h, p),
        None => (host, ""),
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(v) => {
                    out.push(v);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Go's `url.ParseQuery`: each key with its values in order.
fn query_map(q: &str) -> Value {
    let mut keys: Vec<String> = Vec::new();
    let mut values: HashMap<String, Vec<Value>> = HashMap::new();
    for part in q.split('&').filter(|p| !p.is_empty() && !p.contains(';')) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let (k, v) = (percent_decode(k), percent_decode(v));
        if !values.contains_key(&k) {
            keys.push(k.clone());
        }
        values.entry(k).or_default().push(Value::from(v));
    }
    let map: HashMap<Key, Value> = keys
        .into_iter()
        .map(|k| {
            let v = values.remove(&k).unwrap_or_default();
            (Key::from(k), Value::List(Arc::new(v)))
        })
        .collect();
    Value::Map(Map { map: Arc::new(map) })
}

fn this_url<'a>(function: &str, v: &'a Value) -> Result<&'a CelUrl, ExecutionError> {
    opaque::<CelUrl>(v).ok_or_else(|| no_overload(function, &[v]))
}

// ---- semver ----

fn numeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// blang/semver's `Parse`.
fn parse_semver(s: &str) -> Result<CelSemver, String> {
    if s.is_empty() {
        return Err("Version string empty".to_owned());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".to_owned());
    };
    let number = |what: &str, p: &str| -> Result<u64, String> {
        if !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("Invalid character(s) found in {what} number {p:?}"));
        }
        if leading_zero(p) {
            let cap = format!("{}{}", what[..1].to_uppercase(), &what[1..]);
            return Err(format!(
                "{cap} number must not contain leading zeroes {p:?}"
            ));
        }
        p.parse::<u64>()
            .map_err(|_| format!("strconv.ParseUint: parsing {p:?}: invalid syntax"))
    };
    let major = number("major", major)?;
    let minor = number("minor", minor)?;
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, b.split('.').map(str::to_owned).collect()),
        None => (rest, Vec::new()),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((p, pre)) => (p, pre.split('.').collect::<Vec<_>>()),
        None => (rest, Vec::new()),
    };
    let patch = number("patch", patch)?;
    let alnum = |p: &str| p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let mut pres = Vec::new();
    for p in pre {
        if p.is_empty() {
            return Err("Prerelease is empty".to_owned());
        }
        if numeric(p) {
            if leading_zero(p) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {p:?}"
                ));
            }
            pres.push(Pre::Num(p.parse().unwrap_or(u64::MAX)));
        } else if alnum(p) {
            pres.push(Pre::Str(p.to_owned()));
        } else {
            return Err(format!("Invalid character(s) found in prerelease {p:?}"));
        }
    }
    for b in &build {
        if b.is_empty() {
            return Err("Build meta data is empty".to_owned());
        }
        if !alnum(b) {
            return Err(format!(
                "Invalid character(s) found in build meta data {b:?}"
            ));
        }
    }
    Ok(CelSemver {
        major,
        minor,
        patch,
        pre: pres,
    })
}

/// Kubernetes' `semver(s, true)`: a leading `v` dropped, leading zeros trimmed, missing minor
/// and patch filled with `0`.
fn normalize_semver(s: &str) -> Result<CelSemver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_owned).collect();
    for p in &mut parts {
        if p.len() > 1 {
            let t = p.trim_start_matches('0');
            *p = if t.is_empty() || !t.starts_with(|c: char| c.is_ascii_digit()) {
                format!("0{t}")
            } else {
                t.to_owned()
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_owned());
        }
        parts.resize(3, "0".to_owned());
    }
    parse_semver(&parts.join("."))
}

fn cmp_pre(a: &Pre, b: &Pre) -> Ordering {
    match (a, b) {
        (Pre::Num(x), Pre::Num(y)) => x.cmp(y),
        (Pre::Num(_), Pre::Str(_)) => Ordering::Less,
        (Pre::Str(_), Pre::Num(_)) => Ordering::Greater,
        (Pre::Str(x), Pre::Str(y)) => x.cmp(y),
    }
}

impl CelSemver {
    fn compare(&self, o: &Self) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                for (a, b) in self.pre.iter().zip(&o.pre) {
                    let c = cmp_pre(a, b);
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                self.pre.len().cmp(&o.pre.len())
            }
        }
    }
}

fn semver_arg(function: &str, args: &[Value]) -> Result<Result<CelSemver, String>, ExecutionError> {
    match args {
        [Value::String(s)] => Ok(parse_semver(s)),
        [Value::String(s), Value::Bool(normalize)] => Ok(if *normalize {
            normalize_semver(s)
        } else {
            parse_semver(s)
        }),
        _ => Err(ExecutionError::no_such_overload(
            function,
            args.iter().map(|a| a.type_of().to_string()).collect(),
        )),
    }
}

fn this_semver<'a>(function: &str, v: &'a Value) -> Result<&'a CelSemver, ExecutionError> {
    opaque::<CelSemver>(v).ok_or_else(|| no_overload(function, &[v]))
}

// ---- shared methods ----

fn ordering(function: &str, this: &Value, other: &Value) -> Result<Ordering, ExecutionError> {
    if let (Some(a), Some(b)) = (opaque::<CelQuantity>(this), opaque::<CelQuantity>(other)) {
        return Ok(a.0.cmp_value(&b.0));
    }
    if let (Some(a), Some(b)) = (opaque::<CelSemver>(this), opaque::<CelSemver>(other)) {
        return Ok(a.compare(b));
    }
    Err(no_overload(function, &[this, other]))
}

fn compare_to(This(this): This<Value>, other: Value) -> Result<Value, ExecutionError> {
    Ok(Value::Int(match ordering("compareTo", &this, &other)? {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}

fn bool_fn<F: Fn(&IpAddr) -> bool + Send + Sync + 'static>(
    name: &'static str,
    f: F,
) -> impl Fn(This<Value>) -> Result<Value, ExecutionError> + Send + Sync + 'static {
    move |This(v): This<Value>| this_ip(name, &v).map(|a| Value::Bool(f(a)))
}

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    // quantity
    let _ = ctx.add_function("quantity", |s: Arc<String>| {
        parse_quantity("quantity", &s).map(wrap)
    });
    let _ = ctx.add_function("isQuantity", |s: Arc<String>| Quantity::parse(&s).is_some());
    let _ = ctx.add_function("isInteger", |This(v): This<Value>| {
        this_quantity("isInteger", &v).map(|q| Value::Bool(as_integer(q).is_some()))
    });
    let _ = ctx.add_function("asInteger", |This(v): This<Value>| {
        let q = this_quantity("asInteger", &v)?;
        as_integer(q)
            .map(Value::Int)
            .ok_or_else(|| err("asInteger", "cannot convert value to integer"))
    });
    let _ = ctx.add_function("asApproximateFloat", |This(v): This<Value>| {
        this_quantity("asApproximateFloat", &v).map(|q| Value::Float(q.as_f64()))
    });
    let _ = ctx.add_function("add", |This(this): This<Value>, other: Value| {
        quantity_sum("add", &this, &other)
    });
    let _ = ctx.add_function("sub", |This(this): This<Value>, other: Value| {
        quantity_sum("sub", &this, &other)
    });
    let _ = ctx.add_function("compareTo", compare_to);
    let _ = ctx.add_function("isGreaterThan", |This(this): This<Value>, other: Value| {
        ordering("isGreaterThan", &this, &other).map(|o| Value::Bool(o == Ordering::Greater))
    });
    let _ = ctx.add_function("isLessThan", |This(this): This<Value>, other: Value| {
        ordering("isLessThan", &this, &other).map(|o| Value::Bool(o == Ordering::Less))
    });
    // ip / cidr
    let _ = ctx.add_function("ip", |This(v): This<Value>| match &v {
        Value::String(s) => parse_ip(s)
            .map(|a| wrap(CelIp(a)))
            .map_err(|e| err("ip", e)),
        _ => this_cidr("ip", &v).map(|c| wrap(CelIp(c.addr))),
    });
    let _ = ctx.add_function("isIP", |s: Arc<String>| parse_ip(&s).is_ok());
    let _ = ctx.add_function("cidr", |s: Arc<String>| {
        parse_cidr(&s).map(wrap).map_err(|e| {
            err(
                "cidr",
                format!("network address parse error during conversion from string: {e}"),
            )
        })
    });
    let _ = ctx.add_function("isCIDR", |s: Arc<String>| parse_cidr(&s).is_ok());
    let _ = ctx.add_function("family", |This(v): This<Value>| {
        this_ip("family", &v).map(|a| Value::Int(if a.is_ipv4() { 4 } else { 6 }))
    });
    let _ = ctx.add_function(
        "isUnspecified",
        bool_fn("isUnspecified", IpAddr::is_unspecified),
    );
    let _ = ctx.add_function("isLoopback", bool_fn("isLoopback", IpAddr::is_loopback));
    let _ = ctx.add_function(
        "isGlobalUnicast",
        bool_fn("isGlobalUnicast", global_unicast),
    );
    let _ = ctx.add_function(
        "isLinkLocalUnicast",
        bool_fn("isLinkLocalUnicast", link_local_unicast),
    );
    let _ = ctx.add_function(
        "isLinkLocalMulticast",
        bool_fn("isLinkLocalMulticast", link_local_multicast),
    );
    let _ = ctx.add_function("containsIP", |This(this): This<Value>, other: Value| {
        let c = this_cidr("containsIP", &this)?;
        let ip = match &other {
            Value::String(s) => parse_ip(s).map_err(|e| err("containsIP", e))?,
            o => *this_ip("containsIP", o)?,
        };
        Ok::<_, ExecutionError>(Value::Bool(c.contains(&ip)))
    });
    let _ = ctx.add_function("containsCIDR", |This(this): This<Value>, other: Value| {
        let c = this_cidr("containsCIDR", &this)?;
        let o = match &other {
            Value::String(s) => parse_cidr(s).map_err(|e| {
                err(
                    "containsCIDR",
                    format!("network address parse error during conversion from string: {e}"),
                )
            })?,
            o => *this_cidr("containsCIDR", o)?,
        };
        Ok::<_, ExecutionError>(Value::Bool(c.bits <= o.bits && c.contains(&o.addr)))
    });
    let _ = ctx.add_function("prefixLength", |This(v): This<Value>| {
        this_cidr("prefixLength", &v).map(|c| Value::Int(i64::from(c.bits)))
    });
    let _ = ctx.add_function("masked", |This(v): This<Value>| {
        this_cidr("masked", &v).map(|c| {
            wrap(CelCidr {
                addr: masked(c.addr, c.bits),
                bits: c.bits,
            })
        })
    });
    // url
    let _ = ctx.add_function("url", |s: Arc<String>| {
        parse_url(&s).map(wrap).map_err(|e| err("url", e))
    });
    let _ = ctx.add_function("isURL", |s: Arc<String>| parse_url(&s).is_ok());
    type UrlMethod = fn(&CelUrl) -> Value;
    const URL_METHODS: &[(&str, UrlMethod)] = &[
        ("getScheme", |u| Value::from(u.scheme.as_str())),
        ("getHost", |u| Value::from(u.host.as_str())),
        ("getHostname", |u| Value::from(split_host_port(&u.host).0)),
        ("getPort", |u| Value::from(split_host_port(&u.host).1)),
        ("getEscapedPath", |u| Value::from(u.path.as_str())),
        ("getQuery", |u| query_map(&u.query)),
    ];
    for (name, method) in URL_METHODS {
        let (name, method): (&'static str, UrlMethod) = (name, *method);
        let _ = ctx.add_function(name, move |This(v): This<Value>| {
            this_url(name, &v).map(method)
        });
    }
    // semver
    let _ = ctx.add_function("semver", |Arguments(args): Arguments| {
        semver_arg("semver", &args)?
            .map(wrap)
            .map_err(|e| err("semver", e))
    });
    let _ = ctx.add_function("isSemver", |Arguments(args): Arguments| {
        semver_arg("isSemver", &args).map(|r| Value::Bool(r.is_ok()))
    });
    type SemverPart = fn(&CelSemver) -> u64;
    const PARTS: &[(&str, SemverPart)] = &[
        ("major", |s| s.major),
        ("minor", |s| s.minor),
        ("patch", |s| s.patch),
    ];
    for (name, part) in PARTS {
        let (name, part): (&'static str, SemverPart) = (name, *part);
        let _ = ctx.add_function(name, move |This(v): This<Value>| {
            this_semver(name, &v).map(|s| Value::Int(i64::try_from(part(s)).unwrap_or(i64::MAX)))
        });
    }
}

/// `string(ip)` and `string(cidr)`, overloads of the standard conversion.
pub(super) fn extension(env: &mut cel::Env) -> Result<(), cel::DeclarationError> {
    use cel::common::types::Type;
    env.add_overload(
        "string",
        "string_net_ip",
        vec![Type::new_opaque_type("net.IP")],
        net_to_string,
    )?;
    env.add_overload(
        "string",
        "string_net_cidr",
        vec![Type::new_opaque_type("net.CIDR")],
        net_to_string,
    )
}

fn net_to_string<'b, 'v>(
    args: Vec<cel::common::value::CowVal<'b, 'v>>,
) -> Result<cel::common::value::CowVal<'b, 'v>, ExecutionError> {
    let [arg] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(1, args.len()));
    };
    let v = Value::try_from(arg.as_ref())?;
    let text = if let Some(ip) = opaque::<CelIp>(&v) {
        ip.0.to_string()
    } else if let Some(c) = opaque::<CelCidr>(&v) {
        format!("{}/{}", c.addr, c.bits)
    } else {
        return Err(no_overload("string", &[&v]));
    };
    Ok(cel::common::value::CowVal::Owned(Box::new(
        cel::common::types::CelString::from(text),
    )))
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr;
    use cel::Value;

    fn t(expr: &str) {
        assert_eq!(eval_expr(expr), Ok(Value::Bool(true)), "{expr}");
    }

    /// The evaluation error's text (as kpol prints it, cel-go's words).
    fn e(expr: &str) -> String {
        match eval_expr(expr) {
            Err(e) => e,
            other => panic!("{expr}: {other:?}"),
        }
    }

    #[test]
    fn quantities() {
        t("quantity('1Gi').isGreaterThan(quantity('1Mi'))");
        t("quantity('1Gi').compareTo(quantity('1024Mi')) == 0");
        t("quantity('1').add(quantity('500m')) == quantity('1500m')");
        t("quantity('1').add(2).sub(1) == quantity('2')");
        t("quantity('500m').asApproximateFloat() == 0.5");
        t("quantity('2k').asInteger() == 2000");
        t("!quantity('1.5').isInteger() && isQuantity('1Gi') && !isQuantity('abc')");
        assert!(
            e("quantity('abc')").contains("quantities must match the regular expression"),
            "{}",
            e("quantity('abc')")
        );
        assert!(e("quantity('500m').asInteger()").contains("cannot convert value to integer"));
    }

    #[test]
    fn ips_and_cidrs() {
        t("ip('10.0.0.1').family() == 4 && ip('::1').family() == 6");
        t("isIP('::1') && !isIP('1.2.3') && !isIP('::ffff:1.2.3.4')");
        t("ip('127.0.0.1').isLoopback() && ip('0.0.0.0').isUnspecified()");
        t("ip('8.8.8.8').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()");
        t("ip('fe80::1').isLinkLocalUnicast() && ip('ff02::1').isLinkLocalMulticast()");
        t(
            "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && !cidr('10.0.0.0/8').containsIP('11.0.0.1')",
        );
        t(
            "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')",
        );
        t(
            "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.0.0.0/8').prefixLength() == 8",
        );
        t("cidr('10.0.0.0/8').ip() == ip('10.0.0.0') && isCIDR('::/0') && !isCIDR('10.0.0.0')");
        t("string(ip('10.0.0.1')) == '10.0.0.1' && string(cidr('10.0.0.0/8')) == '10.0.0.0/8'");
        assert!(e("ip('1.2.3')").ends_with(
            "IP Address \"1.2.3\" parse error during conversion from string: ParseAddr(\"1.2.3\"): IPv4 address too short"
        ));
        assert!(
            e("ip('::ffff:1.2.3.4')")
                .ends_with("IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed")
        );
        assert!(e("cidr('1.2.3.4')").ends_with(
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"1.2.3.4\"): no '/'"
        ));
    }

    #[test]
    fn urls() {
        t("url('https://a.b:8080/p/q').getScheme() == 'https'");
        t("url('https://a.b:8080/p/q').getHost() == 'a.b:8080'");
        t(
            "url('https://a.b:8080/p/q').getHostname() == 'a.b' && url('https://a.b:8080/').getPort() == '8080'",
        );
        t("url('https://[::1]:80/').getHostname() == '::1' && url('https://a.b').getPort() == ''");
        t("url('https://a.b/p%20q').getEscapedPath() == '/p%20q'");
        t("url('https://a.b/?x=1&x=2&y').getQuery() == {'x': ['1', '2'], 'y': ['']}");
        t("isURL('https://a.b') && isURL('/path') && !isURL('a b') && !isURL('relative')");
        assert!(e("url('relative/path')").ends_with(
            "URL parse error during conversion from string: parse \"relative/path\": invalid URI for request"
        ));
    }

    #[test]
    fn semvers() {
        t("isSemver('1.2.3') && !isSemver('v1.2.3') && isSemver('v1.2', true)");
        t(
            "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3",
        );
        t("semver('1.2.3').isLessThan(semver('1.10.0'))");
        t("semver('1.2.3').isGreaterThan(semver('1.2.3-alpha'))");
        t("semver('1.2.3-alpha.2').isGreaterThan(semver('1.2.3-alpha.1'))");
        t("semver('1.2.3+b1').compareTo(semver('1.2.3')) == 0");
        t("semver('v1.2', true) == semver('1.2.0')");
        assert!(e("semver('bad')").ends_with("No Major.Minor.Patch elements found"));
        assert!(
            e("semver('01.2.3')").ends_with("Major number must not contain leading zeroes \"01\"")
        );
    }

    #[test]
    fn a_method_on_the_wrong_receiver_is_an_error() {
        assert!(eval_expr("semver('1.0.0').isGreaterThan(quantity('1'))").is_err());
        assert!(eval_expr("ip('1.2.3.4').prefixLength()").is_err());
    }
}

//! `x509_decode` (JMESPath) and `x509.decode` (CEL): a PEM `CERTIFICATE` or `CERTIFICATE
//! REQUEST` decoded to the map Kyverno produces by JSON-encoding Go's `x509.Certificate` /
//! `x509.CertificateRequest` (`kyverno/kyverno:pkg/engine/jmespath/functions.go`
//! `jpX509Decode`; `kyverno/sdk:extensions/cel/libs/x509`). Like Kyverno, only RSA keys are
//! accepted, and `PublicKey` becomes `{N: <decimal string>, E: <int>}`.
//!
//! Parsed with kpol's own DER reader. Produced, with Go's field names and JSON shapes: the
//! `Raw*` byte fields and `Signature` (base64), `SignatureAlgorithm` and `PublicKeyAlgorithm`
//! (Go's enum numbers), `PublicKey`, `Version`, `SerialNumber` (a number), `Issuer` and
//! `Subject` (`pkix.Name`: the well-known attribute lists, `CommonName`, `SerialNumber`,
//! `Names`), `NotBefore`/`NotAfter` (RFC 3339), `Extensions` (`{Id, Critical, Value}`),
//! `KeyUsage`, `ExtKeyUsage`/`UnknownExtKeyUsage`, basic constraints (`BasicConstraintsValid`,
//! `IsCA`, `MaxPathLen`, `MaxPathLenZero`), `SubjectKeyId`, `AuthorityKeyId`, the subject
//! alternative names (`DNSNames`, `EmailAddresses`, `IPAddresses`, `URIs`), `OCSPServer`,
//! `IssuingCertificateURL`, `CRLDistributionPoints`, `PolicyIdentifiers`/`Policies` and
//! `UnhandledCriticalExtensions`. Every other field of Go's struct is present with its zero
//! value (`null`, `false`, `0`).
//!
//! Gaps (documented in docs/FUNCTIONS.md): name constraints (`Permitted*`/`Excluded*`),
//! policy mappings and constraints (`PolicyMappings`, `Inhibit*`, `RequireExplicitPolicy*`)
//! always come out as zero values; a `URIs` entry has only `Scheme`, `Host`, `Path`,
//! `RawQuery` and `Fragment` filled; RSA-PSS signatures report `SignatureAlgorithm` 0 (Go reads
//! the hash from the parameters).

use crate::jmespath::value;
use crate::yaml::Node;
#[cfg(test)]
use crate::yaml::Value;

/// A DER element: tag byte, contents, and the whole encoding.
#[derive(Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
    raw: &'a [u8],
}

const MALFORMED: &str = "x509: malformed certificate";

/// Reads one element off the front of `input`.
fn read(input: &[u8]) -> Result<(Tlv<'_>, &[u8]), String> {
    let err = || MALFORMED.to_owned();
    let (&tag, rest) = input.split_first().ok_or_else(err)?;
    if tag & 0x1f == 0x1f {
        return Err(err());
    }
    let (&first, mut rest) = rest.split_first().ok_or_else(err)?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err(err());
        }
        let mut l = 0usize;
        for &b in &rest[..n] {
            l = (l << 8) | usize::from(b);
        }
        rest = &rest[n..];
        l
    };
    if rest.len() < len {
        return Err(err());
    }
    let header = input.len() - rest.len();
    Ok((
        Tlv {
            tag,
            body: &rest[..len],
            raw: &input[..header + len],
        },
        &rest[len..],
    ))
}

/// All elements of a constructed element's contents.
fn children(body: &[u8]) -> Result<Vec<Tlv<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (t, r) = read(rest)?;
        out.push(t);
        rest = r;
    }
    Ok(out)
}

fn expect<'a>(t: Option<&Tlv<'a>>, tag: u8) -> Result<Tlv<'a>, String> {
    match t {
        Some(t) if t.tag == tag => Ok(*t),
        _ => Err(MALFORMED.to_owned()),
    }
}

const SEQ: u8 = 0x30;

/// The arcs of an OBJECT IDENTIFIER.
fn oid(body: &[u8]) -> Vec<u64> {
    let mut arcs = Vec::new();
    let mut v = 0u64;
    for &b in body {
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = if v < 80 { v / 40 } else { 2 };
                arcs.push(first);
                arcs.push(v - first * 40);
            } else {
                arcs.push(v);
            }
            v = 0;
        }
    }
    arcs
}

fn oid_node(arcs: &[u64]) -> Node {
    value::seq(arcs.iter().map(|&a| value::float(a as f64)).collect())
}

fn oid_text(arcs: &[u64]) -> String {
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// Base64 (standard alphabet, padded), as Go's `encoding/json` writes a `[]byte`.
pub fn base64_encode(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits, mut pad) = (0u32, 0u32, 0usize);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                pad += 1;
                continue;
            }
            _ => return None,
        };
        if pad > 0 {
            return None;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    let total = text.len();
    (total.is_multiple_of(4) && pad <= 2).then_some(out)
}

/// Go's `pem.Decode`, first block only: its type and decoded bytes.
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + "-----BEGIN ".len()..];
    let (kind, rest) = rest.split_once("-----")?;
    let end_marker = format!("-----END {kind}-----");
    let end = rest.find(&end_marker)?;
    let body = &rest[..end];
    // Headers (`Key: value` lines followed by a blank line) are skipped.
    let body = match body.find("\n\n") {
        Some(i) if body[..i].contains(':') => &body[i + 2..],
        _ => body,
    };
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    Some((kind.to_owned(), base64_decode(&compact)?))
}

/// The decimal digits of a non-negative big-endian integer.
fn decimal(bytes: &[u8]) -> String {
    let mut digits: Vec<u32> = Vec::new(); // base 1e9, little-endian
    for &b in bytes {
        let mut carry = u64::from(b);
        for d in digits.iter_mut() {
            let v = u64::from(*d) * 256 + carry;
            *d = (v % 1_000_000_000) as u32;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            digits.push((carry % 1_000_000_000) as u32);
            carry /= 1_000_000_000;
        }
    }
    let Some((last, rest)) = digits.split_last() else {
        return "0".to_owned();
    };
    let mut s = last.to_string();
    for d in rest.iter().rev() {
        s.push_str(&format!("{d:09}"));
    }
    s
}

/// An INTEGER's value as the decimal text of a Go `big.Int`.
fn integer_text(body: &[u8]) -> String {
    if body.first().is_some_and(|b| b & 0x80 != 0) {
        // Two's complement negative: magnitude = !x + 1.
        let mut mag: Vec<u8> = body.iter().map(|b| !b).collect();
        for b in mag.iter_mut().rev() {
            let (v, overflow) = b.overflowing_add(1);
            *b = v;
            if !overflow {
                break;
            }
        }
        format!("-{}", decimal(&mag))
    } else {
        decimal(body)
    }
}

/// `big.Int.Int64()`: the low 64 bits of the magnitude, with the sign.
fn integer_int64(body: &[u8]) -> i64 {
    let text = integer_text(body);
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.as_str()),
    };
    let mut low = 0u64;
    for c in digits.bytes() {
        low = low.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
    }
    let v = low as i64;
    if neg { v.wrapping_neg() } else { v }
}

fn small_int(body: &[u8]) -> i64 {
    let mut v: i64 = if body.first().is_some_and(|b| b & 0x80 != 0) {
        -1
    } else {
        0
    };
    for &b in body.iter().take(8) {
        v = (v << 8) | i64::from(b);
    }
    v
}

fn num(v: f64) -> Node {
    value::float(v)
}

fn b64(bytes: &[u8]) -> Node {
    value::string(base64_encode(bytes))
}

fn strings_or_null(items: Vec<String>) -> Node {
    if items.is_empty() {
        value::null()
    } else {
        value::seq(items.into_iter().map(value::string).collect())
    }
}

fn nodes_or_null(items: Vec<Node>) -> Node {
    if items.is_empty() {
        value::null()
    } else {
        value::seq(items)
    }
}

/// An ASN.1 string value (the types Go's `asn1.Unmarshal` turns into `string`).
fn asn1_string(t: &Tlv<'_>) -> Option<String> {
    match t.tag {
        0x0c | 0x13 | 0x16 | 0x14 | 0x1a | 0x12 => Some(String::from_utf8_lossy(t.body).into()),
        0x1e => {
            let units: Vec<u16> = t
                .body
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            Some(String::from_utf16_lossy(&units))
        }
        _ => None,
    }
}

/// `pkix.Name` from an RDNSequence.
fn name(t: &Tlv<'_>) -> Result<Node, String> {
    const LISTS: [(&str, u64); 7] = [
        ("Country", 6),
        ("Organization", 10),
        ("OrganizationalUnit", 11),
        ("Locality", 7),
        ("Province", 8),
        ("StreetAddress", 9),
        ("PostalCode", 17),
    ];
    let mut lists: Vec<Vec<String>> = vec![Vec::new(); LISTS.len()];
    let (mut cn, mut serial) = (String::new(), String::new());
    let mut names = Vec::new();
    for set in children(t.body)? {
        for atv in children(set.body)? {
            let parts = children(atv.body)?;
            let ty = oid(expect(parts.first(), 0x06)?.body);
            let val = parts.get(1).ok_or_else(|| MALFORMED.to_owned())?;
            let text = asn1_string(val);
            names.push(value::map(vec![
                ("Type".to_owned(), oid_node(&ty)),
                (
                    "Value".to_owned(),
                    text.clone().map_or_else(value::null, value::string),
                ),
            ]));
            let (Some(text), [2, 5, 4, last]) = (text, ty.as_slice()) else {
                continue;
            };
            match *last {
                3 => cn = text,
                5 => serial = text,
                n => {
                    if let Some(i) = LISTS.iter().position(|(_, o)| *o == n) {
                        lists[i].push(text);
                    }
                }
            }
        }
    }
    let mut e: Vec<(String, Node)> = LISTS
        .iter()
        .zip(lists)
        .map(|((k, _), v)| ((*k).to_owned(), strings_or_null(v)))
        .collect();
    e.push(("SerialNumber".to_owned(), value::string(serial)));
    e.push(("CommonName".to_owned(), value::string(cn)));
    e.push(("Names".to_owned(), nodes_or_null(names)));
    e.push(("ExtraNames".to_owned(), value::null()));
    Ok(value::map(e))
}

/// UTCTime / GeneralizedTime → RFC 3339 in UTC.
fn time(t: &Tlv<'_>) -> Result<String, String> {
    let s = std::str::from_utf8(t.body).map_err(|_| MALFORMED.to_owned())?;
    let s = s.strip_suffix('Z').ok_or_else(|| MALFORMED.to_owned())?;
    let (year, rest) = match t.tag {
        0x17 if s.len() == 12 => {
            let yy: u32 = s[..2].parse().map_err(|_| MALFORMED.to_owned())?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, &s[2..])
        }
        0x18 if s.len() == 14 => (s[..4].parse().map_err(|_| MALFORMED.to_owned())?, &s[4..]),
        _ => return Err(MALFORMED.to_owned()),
    };
    if !rest.bytes().all(|b| b.is_ascii_digit()) {
        return Err(MALFORMED.to_owned());
    }
    Ok(format!(
        "{year:04}-{}-{}T{}:{}:{}Z",
        &rest[0..2],
        &rest[2..4],
        &rest[4..6],
        &rest[6..8],
        &rest[8..10]
    ))
}

fn signature_algorithm(alg: &Tlv<'_>) -> Result<f64, String> {
    let parts = children(alg.body)?;
    let o = oid(expect(parts.first(), 0x06)?.body);
    let code = match o.as_slice() {
        [1, 2, 840, 113549, 1, 1, 2] => 1,
        [1, 2, 840, 113549, 1, 1, 4] => 2,
        [1, 2, 840, 113549, 1, 1, 5] => 3,
        [1, 2, 840, 113549, 1, 1, 11] => 4,
        [1, 2, 840, 113549, 1, 1, 12] => 5,
        [1, 2, 840, 113549, 1, 1, 13] => 6,
        [1, 2, 840, 10040, 4, 3] => 7,
        [2, 16, 840, 1, 101, 3, 4, 3, 2] => 8,
        [1, 2, 840, 10045, 4, 1] => 9,
        [1, 2, 840, 10045, 4, 3, 2] => 10,
        [1, 2, 840, 10045, 4, 3, 3] => 11,
        [1, 2, 840, 10045, 4, 3, 4] => 12,
        [1, 3, 101, 112] => 16,
        _ => 0,
    };
    Ok(f64::from(code))
}

/// `PublicKeyAlgorithm` (1 = RSA) and the `{N, E}` of an RSA SubjectPublicKeyInfo.
fn rsa_public_key(spki: &Tlv<'_>) -> Result<Node, String> {
    let parts = children(spki.body)?;
    let alg = children(expect(parts.first(), SEQ)?.body)?;
    let alg_oid = oid(expect(alg.first(), 0x06)?.body);
    if alg_oid != [1, 2, 840, 113549, 1, 1, 1] {
        return Err("certificate should use rsa algorithm".to_owned());
    }
    let bad = || "failed to parse subject public key info".to_owned();
    let bits = expect(parts.get(1), 0x03).map_err(|_| bad())?;
    let key = bits.body.get(1..).ok_or_else(bad)?;
    let (seq, _) = read(key).map_err(|_| bad())?;
    let nums = children(seq.body).map_err(|_| bad())?;
    let n = expect(nums.first(), 0x02).map_err(|_| bad())?;
    let e = expect(nums.get(1), 0x02).map_err(|_| bad())?;
    let e_val = small_int(e.body);
    if n.body.first().is_some_and(|b| b & 0x80 != 0) || !(1..=i64::from(i32::MAX)).contains(&e_val)
    {
        return Err(bad());
    }
    Ok(value::map(vec![
        ("N".to_owned(), value::string(integer_text(n.body))),
        ("E".to_owned(), num(e_val as f64)),
    ]))
}

/// What the extensions fill in, with Go's zero values.
#[derive(Default)]
struct Ext {
    list: Vec<Node>,
    key_usage: i64,
    ext_key_usage: Vec<Node>,
    unknown_ext_key_usage: Vec<Node>,
    bc_valid: bool,
    is_ca: bool,
    max_path_len: i64,
    max_path_len_zero: bool,
    subject_key_id: Option<Vec<u8>>,
    authority_key_id: Option<Vec<u8>>,
    dns: Vec<String>,
    emails: Vec<String>,
    ips: Vec<String>,
    uris: Vec<Node>,
    ocsp: Vec<String>,
    issuers: Vec<String>,
    crl: Vec<String>,
    policies: Vec<Vec<u64>>,
    unhandled_critical: Vec<Node>,
}

fn ip_text(b: &[u8]) -> Option<String> {
    match b.len() {
        4 => Some(std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()),
        16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            let v6 = std::net::Ipv6Addr::from(a);
            Some(match v6.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => v6.to_string(),
            })
        }
        _ => None,
    }
}

/// A `*url.URL` as Go's encoder writes it (the common parts only).
fn url_node(s: &str) -> Node {
    let (scheme, rest) = match s.split_once(':') {
        Some((sc, r)) if !sc.is_empty() && !sc.contains('/') => (sc, r),
        _ => ("", s),
    };
    let (rest, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (host, path) = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(i) => (&r[..i], &r[i..]),
            None => (r, ""),
        },
        None => ("", rest),
    };
    let st = |v: &str| value::string(v);
    value::map(vec![
        ("Scheme".to_owned(), st(scheme)),
        ("Opaque".to_owned(), st("")),
        ("User".to_owned(), value::null()),
        ("Host".to_owned(), st(host)),
        ("Path".to_owned(), st(path)),
        ("RawPath".to_owned(), st("")),
        ("OmitHost".to_owned(), value::boolean(false)),
        ("ForceQuery".to_owned(), value::boolean(false)),
        ("RawQuery".to_owned(), st(query)),
        ("Fragment".to_owned(), st(fragment)),
        ("RawFragment".to_owned(), st("")),
    ])
}

/// GeneralNames into the subject-alternative-name lists.
fn general_names(body: &[u8], ext: &mut Ext) -> Result<(), String> {
    for gn in children(body)? {
        let text = || String::from_utf8_lossy(gn.body).into_owned();
        match gn.tag {
            0x81 => ext.emails.push(text()),
            0x82 => ext.dns.push(text()),
            0x86 => ext.uris.push(url_node(&text())),
            0x87 => ext
                .ips
                .push(ip_text(gn.body).ok_or_else(|| MALFORMED.to_owned())?),
            _ => {}
        }
    }
    Ok(())
}

fn uri_strings(names: &[Tlv<'_>]) -> Vec<String> {
    names
        .iter()
        .filter(|g| g.tag == 0x86)
        .map(|g| String::from_utf8_lossy(g.body).into_owned())
        .collect()
}

fn ext_key_usage(arcs: &[u64]) -> Option<f64> {
    let pkix = |n: u64| [1, 3, 6, 1, 5, 5, 7, 3, n];
    let code = match arcs {
        [2, 5, 29, 37, 0] => 0,
        a if a.len() == 9 && a[..8] == pkix(0)[..8] && (1..=9).contains(&a[8]) => a[8] as i32,
        [1, 3, 6, 1, 4, 1, 311, 10, 3, 3] => 10,
        [2, 16, 840, 1, 113730, 4, 1] => 11,
        [1, 3, 6, 1, 4, 1, 311, 2, 1, 22] => 12,
        [1, 3, 6, 1, 4, 1, 311, 61, 1, 1] => 13,
        _ => return None,
    };
    Some(f64::from(code))
}

fn extensions(exts: &[Tlv<'_>]) -> Result<Ext, String> {
    let mut out = Ext::default();
    for e in exts {
        let parts = children(e.body)?;
        let id = oid(expect(parts.first(), 0x06)?.body);
        let (critical, val) = match (parts.get(1), parts.get(2)) {
            (Some(c), Some(v)) if c.tag == 0x01 => (c.body.first().is_some_and(|b| *b != 0), *v),
            (Some(v), None) => (false, *v),
            _ => return Err(MALFORMED.to_owned()),
        };
        if val.tag != 0x04 {
            return Err(MALFORMED.to_owned());
        }
        out.list.push(value::map(vec![
            ("Id".to_owned(), oid_node(&id)),
            ("Critical".to_owned(), value::boolean(critical)),
            ("Value".to_owned(), b64(val.body)),
        ]));
        let v = val.body;
        let handled = match id.as_slice() {
            [2, 5, 29, 15] => {
                let (bits, _) = read(v)?;
                let data = bits.body.get(1..).unwrap_or(&[]);
                for (i, byte) in data.iter().enumerate().take(2) {
                    for j in 0..8 {
                        if byte & (0x80 >> j) != 0 {
                            out.key_usage |= 1 << (i * 8 + j);
                        }
                    }
                }
                true
            }
            [2, 5, 29, 19] => {
                let (seq, _) = read(v)?;
                let items = children(seq.body)?;
                out.bc_valid = true;
                out.max_path_len = -1;
                for item in items {
                    match item.tag {
                        0x01 => out.is_ca = item.body.first().is_some_and(|b| *b != 0),
                        0x02 => {
                            out.max_path_len = small_int(item.body);
                            out.max_path_len_zero = out.max_path_len == 0;
                        }
                        _ => {}
                    }
                }
                true
            }
            [2, 5, 29, 17] => {
                let (seq, _) = read(v)?;
                general_names(seq.body, &mut out)?;
                true
            }
            [2, 5, 29, 37] => {
                let (seq, _) = read(v)?;
                for o in children(seq.body)? {
                    let arcs = oid(o.body);
                    match ext_key_usage(&arcs) {
                        Some(code) => out.ext_key_usage.push(num(code)),
                        None => out.unknown_ext_key_usage.push(oid_node(&arcs)),
                    }
                }
                true
            }
            [2, 5, 29, 14] => {
                let (octets, _) = read(v)?;
                out.subject_key_id = Some(octets.body.to_vec());
                true
            }
            [2, 5, 29, 35] => {
                let (seq, _) = read(v)?;
                if let Some(k) = children(seq.body)?.iter().find(|t| t.tag == 0x80) {
                    out.authority_key_id = Some(k.body.to_vec());
                }
                true
            }
            [2, 5, 29, 31] => {
                let (seq, _) = read(v)?;
                for dp in children(seq.body)? {
                    for field in children(dp.body)? {
                        if field.tag != 0xa0 {
                            continue;
                        }
                        for full in children(field.body)? {
                            if full.tag == 0xa0 {
                                out.crl.extend(uri_strings(&children(full.body)?));
                            }
                        }
                    }
                }
                true
            }
            [2, 5, 29, 32] => {
                let (seq, _) = read(v)?;
                for info in children(seq.body)? {
                    let p = children(info.body)?;
                    out.policies.push(oid(expect(p.first(), 0x06)?.body));
                }
                true
            }
            [1, 3, 6, 1, 5, 5, 7, 1, 1] => {
                let (seq, _) = read(v)?;
                for ad in children(seq.body)? {
                    let p = children(ad.body)?;
                    let method = oid(expect(p.first(), 0x06)?.body);
                    let loc = p.get(1).map(std::slice::from_ref).unwrap_or(&[]);
                    match method.as_slice() {
                        [1, 3, 6, 1, 5, 5, 7, 48, 1] => out.ocsp.extend(uri_strings(loc)),
                        [1, 3, 6, 1, 5, 5, 7, 48, 2] => out.issuers.extend(uri_strings(loc)),
                        _ => {}
                    }
                }
                true
            }
            // Name constraints and the policy constraints are understood by Go (so never
            // "unhandled"), but kpol leaves their fields at zero values.
            [2, 5, 29, 30] | [2, 5, 29, 33] | [2, 5, 29, 36] | [2, 5, 29, 54] => true,
            _ => false,
        };
        if critical && !handled {
            out.unhandled_critical.push(oid_node(&id));
        }
    }
    Ok(out)
}

fn opt_bytes(b: Option<Vec<u8>>) -> Node {
    b.map_or_else(value::null, |b| b64(&b))
}

fn bool_node(b: bool) -> Node {
    value::boolean(b)
}

/// The map of one certificate (`x509.Certificate` as JSON), and the extension fields again
/// for the CEL subset.
fn certificate(der: &[u8]) -> Result<Vec<(String, Node)>, String> {
    let (cert, _) = read(der)?;
    let top = children(expect(Some(&cert), SEQ)?.body)?;
    let tbs = expect(top.first(), SEQ)?;
    let sig_alg = expect(top.get(1), SEQ)?;
    let sig = expect(top.get(2), 0x03)?;
    let f = children(tbs.body)?;
    let mut i = 0;
    let mut version = 0;
    if f.first().is_some_and(|t| t.tag == 0xa0) {
        let (v, _) = read(f[0].body)?;
        version = small_int(v.body);
        i = 1;
    }
    let serial = expect(f.get(i), 0x02)?;
    let issuer = expect(f.get(i + 2), SEQ)?;
    let validity = children(expect(f.get(i + 3), SEQ)?.body)?;
    let subject = expect(f.get(i + 4), SEQ)?;
    let spki = expect(f.get(i + 5), SEQ)?;
    let exts = match f[i + 6..].iter().find(|t| t.tag == 0xa3) {
        Some(t) => {
            let (seq, _) = read(t.body)?;
            children(seq.body)?
        }
        None => Vec::new(),
    };
    let not_before = time(validity.first().ok_or_else(|| MALFORMED.to_owned())?)?;
    let not_after = time(validity.get(1).ok_or_else(|| MALFORMED.to_owned())?)?;
    let public_key = rsa_public_key(&spki)?;
    let x = extensions(&exts)?;
    let serial_text = integer_text(serial.body);
    let null = value::null;
    let zero = || num(0.0);
    let e = vec![
        ("Raw", b64(cert.raw)),
        ("RawTBSCertificate", b64(tbs.raw)),
        ("RawSubjectPublicKeyInfo", b64(spki.raw)),
        ("RawSubject", b64(subject.raw)),
        ("RawIssuer", b64(issuer.raw)),
        ("Signature", b64(sig.body.get(1..).unwrap_or(&[]))),
        ("SignatureAlgorithm", num(signature_algorithm(&sig_alg)?)),
        ("PublicKeyAlgorithm", num(1.0)),
        ("PublicKey", public_key),
        ("Version", num((version + 1) as f64)),
        ("SerialNumber", num(serial_text.parse().unwrap_or(0.0))),
        ("Issuer", name(&issuer)?),
        ("Subject", name(&subject)?),
        ("NotBefore", value::string(not_before)),
        ("NotAfter", value::string(not_after)),
        ("KeyUsage", num(x.key_usage as f64)),
        ("Extensions", nodes_or_null(x.list)),
        ("ExtraExtensions", null()),
        (
            "UnhandledCriticalExtensions",
            nodes_or_null(x.unhandled_critical),
        ),
        ("ExtKeyUsage", nodes_or_null(x.ext_key_usage)),
        ("UnknownExtKeyUsage", nodes_or_null(x.unknown_ext_key_usage)),
        ("BasicConstraintsValid", bool_node(x.bc_valid)),
        ("IsCA", bool_node(x.is_ca)),
        ("MaxPathLen", num(x.max_path_len as f64)),
        ("MaxPathLenZero", bool_node(x.max_path_len_zero)),
        ("SubjectKeyId", opt_bytes(x.subject_key_id)),
        ("AuthorityKeyId", opt_bytes(x.authority_key_id)),
        ("OCSPServer", strings_or_null(x.ocsp)),
        ("IssuingCertificateURL", strings_or_null(x.issuers)),
        ("DNSNames", strings_or_null(x.dns)),
        ("EmailAddresses", strings_or_null(x.emails)),
        ("IPAddresses", strings_or_null(x.ips)),
        ("URIs", nodes_or_null(x.uris)),
        ("PermittedDNSDomainsCritical", bool_node(false)),
        ("PermittedDNSDomains", null()),
        ("ExcludedDNSDomains", null()),
        ("PermittedIPRanges", null()),
        ("ExcludedIPRanges", null()),
        ("PermittedEmailAddresses", null()),
        ("ExcludedEmailAddresses", null()),
        ("PermittedURIDomains", null()),
        ("ExcludedURIDomains", null()),
        ("CRLDistributionPoints", strings_or_null(x.crl)),
        (
            "PolicyIdentifiers",
            nodes_or_null(x.policies.iter().map(|p| oid_node(p)).collect()),
        ),
        (
            "Policies",
            strings_or_null(x.policies.iter().map(|p| oid_text(p)).collect()),
        ),
        ("InhibitAnyPolicy", zero()),
        ("InhibitAnyPolicyZero", bool_node(false)),
        ("InhibitPolicyMapping", zero()),
        ("InhibitPolicyMappingZero", bool_node(false)),
        ("RequireExplicitPolicy", zero()),
        ("RequireExplicitPolicyZero", bool_node(false)),
        ("PolicyMappings", null()),
    ];
    let mut out: Vec<(String, Node)> = e.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    // Kept aside for the CEL output, which stores `SerialNumber` as an int64.
    out.push((
        CEL_SERIAL.to_owned(),
        num(integer_int64(serial.body) as f64),
    ));
    Ok(out)
}

const CEL_SERIAL: &str = "\0serial-int64";

/// The map of one certificate request (`x509.CertificateRequest` as JSON).
fn certificate_request(der: &[u8]) -> Result<Node, String> {
    let malformed = || "x509: malformed certificate request".to_owned();
    let (csr, _) = read(der).map_err(|_| malformed())?;
    let top = children(expect(Some(&csr), SEQ).map_err(|_| malformed())?.body)?;
    let info = expect(top.first(), SEQ).map_err(|_| malformed())?;
    let sig_alg = expect(top.get(1), SEQ).map_err(|_| malformed())?;
    let sig = expect(top.get(2), 0x03).map_err(|_| malformed())?;
    let f = children(info.body).map_err(|_| malformed())?;
    let version = small_int(expect(f.first(), 0x02).map_err(|_| malformed())?.body);
    let subject = expect(f.get(1), SEQ).map_err(|_| malformed())?;
    let spki = expect(f.get(2), SEQ).map_err(|_| malformed())?;
    let public_key = rsa_public_key(&spki)?;
    // Extensions come from the PKCS #9 extensionRequest attribute.
    let mut exts = Vec::new();
    let mut attributes = Vec::new();
    if let Some(attrs) = f.get(3).filter(|t| t.tag == 0xa0) {
        for attr in children(attrs.body)? {
            if let Some(a) = attribute(&attr) {
                attributes.push(a);
            }
            let p = children(attr.body)?;
            if oid(expect(p.first(), 0x06)?.body) != [1, 2, 840, 113549, 1, 9, 14] {
                continue;
            }
            if let Some(set) = p.get(1) {
                for seq in children(set.body)? {
                    exts.extend(children(seq.body)?);
                }
            }
        }
    }
    let x = extensions(&exts)?;
    let e = vec![
        ("Raw", b64(csr.raw)),
        ("RawTBSCertificateRequest", b64(info.raw)),
        ("RawSubjectPublicKeyInfo", b64(spki.raw)),
        ("RawSubject", b64(subject.raw)),
        ("Version", num(version as f64)),
        ("Signature", b64(sig.body.get(1..).unwrap_or(&[]))),
        ("SignatureAlgorithm", num(signature_algorithm(&sig_alg)?)),
        ("PublicKeyAlgorithm", num(1.0)),
        ("PublicKey", public_key),
        ("Subject", name(&subject)?),
        ("Attributes", nodes_or_null(attributes)),
        ("Extensions", nodes_or_null(x.list)),
        ("ExtraExtensions", value::null()),
        ("DNSNames", strings_or_null(x.dns)),
        ("EmailAddresses", strings_or_null(x.emails)),
        ("IPAddresses", strings_or_null(x.ips)),
        ("URIs", nodes_or_null(x.uris)),
    ];
    Ok(value::map(
        e.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
    ))
}

/// Go's `asn1.Unmarshal` of a primitive into `any`; what it leaves nil is `null`.
fn asn1_any(t: &Tlv<'_>) -> Node {
    if let Some(s) = asn1_string(t) {
        return value::string(s);
    }
    match t.tag {
        0x02 => num(small_int(t.body) as f64),
        0x04 => b64(t.body),
        0x06 => oid_node(&oid(t.body)),
        0x03 => {
            let unused = u32::from(t.body.first().copied().unwrap_or(0));
            let bytes = t.body.get(1..).unwrap_or(&[]);
            value::map(vec![
                ("Bytes".to_owned(), b64(bytes)),
                (
                    "BitLength".to_owned(),
                    num(f64::from((bytes.len() as u32 * 8).saturating_sub(unused))),
                ),
            ])
        }
        0x17 | 0x18 => time(t).map_or_else(|_| value::null(), value::string),
        _ => value::null(),
    }
}

/// One CSR attribute as `pkix.AttributeTypeAndValueSET`, or `None` where Go's decoding into
/// that shape fails (and Go drops the attribute).
fn attribute(attr: &Tlv<'_>) -> Option<Node> {
    let p = children(attr.body).ok()?;
    let ty = oid(expect(p.first(), 0x06).ok()?.body);
    let set = expect(p.get(1), 0x31).ok()?;
    let mut outer = Vec::new();
    for seq in children(set.body).ok()? {
        if seq.tag != SEQ {
            return None;
        }
        let mut inner = Vec::new();
        for atv in children(seq.body).ok()? {
            if atv.tag != SEQ {
                return None;
            }
            let parts = children(atv.body).ok()?;
            let t = oid(expect(parts.first(), 0x06).ok()?.body);
            let v = parts.get(1)?;
            // Go leaves compound values nil; extra trailing elements are allowed.
            inner.push(value::map(vec![
                ("Type".to_owned(), oid_node(&t)),
                ("Value".to_owned(), asn1_any(v)),
            ]));
        }
        outer.push(nodes_or_null(inner));
    }
    Some(value::map(vec![
        ("Type".to_owned(), oid_node(&ty)),
        ("Value".to_owned(), nodes_or_null(outer)),
    ]))
}

enum Decoded {
    Certificate(Vec<(String, Node)>),
    Request(Node),
}

fn decode_any(pem: &str) -> Result<Decoded, String> {
    let (kind, der) = pem_decode(pem).ok_or_else(|| "failed to decode PEM block".to_owned())?;
    match kind.as_str() {
        "CERTIFICATE" => certificate(&der).map(Decoded::Certificate),
        "CERTIFICATE REQUEST" => certificate_request(&der).map(Decoded::Request),
        _ => Err("PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST".to_owned()),
    }
}

/// The JMESPath `x509_decode` result.
pub(crate) fn decode(pem: &str) -> Result<Node, String> {
    Ok(match decode_any(pem)? {
        Decoded::Certificate(mut e) => {
            e.retain(|(k, _)| k != CEL_SERIAL);
            value::map(e)
        }
        Decoded::Request(n) => n,
    })
}

/// The fields of Kyverno's CEL certificate output struct.
const CEL_FIELDS: &[&str] = &[
    "Raw",
    "RawTBSCertificate",
    "RawSubjectPublicKeyInfo",
    "RawSubject",
    "RawIssuer",
    "Signature",
    "PublicKeyAlgorithm",
    "PublicKey",
    "Issuer",
    "NotBefore",
    "NotAfter",
    "KeyUsage",
    "Extensions",
    "ExtraExtensions",
    "ExtKeyUsage",
    "BasicConstraintsValid",
    "IsCA",
    "MaxPathLen",
    "MaxPathLenZero",
    "AuthorityKeyId",
    "OCSPServer",
    "IssuingCertificateURL",
    "DNSNames",
    "EmailAddresses",
    "IPAddresses",
    "PermittedDNSDomainsCritical",
    "PermittedDNSDomains",
    "ExcludedDNSDomains",
    "PermittedIPRanges",
    "ExcludedIPRanges",
    "PermittedEmailAddresses",
    "ExcludedEmailAddresses",
    "PermittedURIDomains",
    "ExcludedURIDomains",
    "CRLDistributionPoints",
    "PolicyIdentifiers",
];

/// The CEL `x509.decode` result: for a certificate, only the fields of Kyverno's CEL output
/// struct (no `Subject`, `Version` or `SignatureAlgorithm`; `SerialNumber` as an int64); a
/// request is encoded whole, as in the JMESPath function.
pub(crate) fn decode_for_cel(pem: &str) -> Result<Node, String> {
    Ok(match decode_any(pem)? {
        Decoded::Certificate(e) => {
            let mut out = Vec::new();
            for (k, v) in e {
                if k == CEL_SERIAL {
                    out.push(("SerialNumber".to_owned(), v));
                } else if CEL_FIELDS.contains(&k.as_str()) {
                    out.push((k, v));
                }
            }
            value::map(out)
        }
        Decoded::Request(n) => n,
    })
}

/// The value at `path` of a decoded map (tests).
#[cfg(test)]
fn field<'a>(n: &'a Node, path: &[&str]) -> &'a Value {
    &n.get_path(path).unwrap_or_else(|| panic!("{path:?}")).value
}

#[cfg(test)]
mod tests;

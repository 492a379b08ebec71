//! Kyverno's string functions (`pkg/engine/jmespath/functions.go`): case, trimming,
//! splitting, Go RE2 regexes, wildcards, base64, hashes, paths, semver, images, URLs.
//!
//! Regexes use the `regex` crate, whose syntax is RE2's; Go's `\d`, `\w`, `\s`, `\b` are
//! ASCII-only while the crate's are Unicode, which only non-ASCII input can tell.

use sha1::Digest as _;

use super::{Arg, arg_f64, arg_str, generic, iface_to_string, not_of_type};
use crate::base::semver::{Range, Version};
use crate::jmespath::Error;
use crate::jmespath::value;
use crate::yaml::Node;

type R = Result<Node, Error>;

pub(super) fn compare(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (x, y) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?);
    // Go `strings.Compare` returns an `int`, not a JSON number (validate.md §2.1).
    Ok(value::node(crate::yaml::Value::Int(x.cmp(y) as i64)))
}

pub(super) fn equal_fold(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (x, y) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?);
    // Go's EqualFold uses simple case folding, rune by rune.
    let eq = x.chars().count() == y.chars().count()
        && x.chars().zip(y.chars()).all(|(p, q)| {
            p == q || p.to_lowercase().eq(q.to_lowercase()) || p.to_uppercase().eq(q.to_uppercase())
        });
    Ok(value::boolean(eq))
}

pub(super) fn replace(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, old, new) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?, arg_str(n, a, 2)?);
    let count = arg_f64(n, a, 3)? as i64;
    Ok(value::string(go_replace(s, old, new, count)?))
}

/// Go `strings.Replace`: `n < 0` replaces all; an empty `old` matches before every rune and
/// at the end.
/// The text it would build is charged to the evaluation budget first (nested calls grow it
/// geometrically).
fn go_replace(s: &str, old: &str, new: &str, n: i64) -> Result<String, Error> {
    if n == 0 || old == new && !old.is_empty() {
        return Ok(s.to_owned());
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let hits = if old.is_empty() {
        s.chars().count().saturating_add(1)
    } else {
        s.matches(old).count()
    }
    .min(limit);
    let grown = hits.saturating_mul(new.len().saturating_sub(old.len()));
    crate::base::budget::bytes(s.len().saturating_add(grown) as u64)
        .map_err(|e| Error::Eval(e.to_string()))?;
    if old.is_empty() {
        let mut out = String::new();
        let mut done = 0;
        for c in s.chars() {
            if done < limit {
                out.push_str(new);
                done += 1;
            }
            out.push(c);
        }
        if done < limit {
            out.push_str(new);
        }
        return Ok(out);
    }
    Ok(s.replacen(old, new, limit))
}

pub(super) fn replace_all(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, old, new) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?, arg_str(n, a, 2)?);
    Ok(value::string(go_replace(s, old, new, -1)?))
}

pub(super) fn to_upper(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(arg_str(n, a, 0)?.to_uppercase()))
}

pub(super) fn to_lower(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(arg_str(n, a, 0)?.to_lowercase()))
}

pub(super) fn trim(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, cut) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?);
    Ok(value::string(s.trim_matches(|c| cut.contains(c))))
}

pub(super) fn trim_prefix(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, p) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?);
    Ok(value::string(s.strip_prefix(p).unwrap_or(s)))
}

pub(super) fn split(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (s, sep) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?);
    let parts: Vec<Node> = if sep.is_empty() {
        s.chars().map(|c| value::string(c.to_string())).collect()
    } else {
        s.split(sep).map(value::string).collect()
    };
    Ok(value::seq(parts))
}

fn regex(n: &str, pattern: &str) -> Result<regex::Regex, Error> {
    regex::Regex::new(pattern).map_err(|e| generic(n, e))
}

fn str_or_real(n: &str, a: &[Arg<'_, '_>], i: usize) -> Result<String, Error> {
    iface_to_string(a[i].node()).ok_or_else(|| not_of_type(n, i + 1, "String or Real"))
}

pub(super) fn regex_replace_all(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let re = arg_str(n, a, 0)?;
    let src = str_or_real(n, a, 1)?;
    let repl = str_or_real(n, a, 2)?;
    let re = regex(n, re)?;
    Ok(value::string(
        re.replace_all(&src, repl.as_str()).into_owned(),
    ))
}

pub(super) fn regex_replace_all_literal(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let re = arg_str(n, a, 0)?;
    let src = str_or_real(n, a, 1)?;
    let repl = str_or_real(n, a, 2)?;
    let re = regex(n, re)?;
    Ok(value::string(
        re.replace_all(&src, regex::NoExpand(&repl)).into_owned(),
    ))
}

pub(super) fn regex_match(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let re = arg_str(n, a, 0)?;
    let src = str_or_real(n, a, 1)?;
    // `regexp.Match` returns the compile error unwrapped.
    let re = regex::Regex::new(re).map_err(|e| Error::Eval(e.to_string()))?;
    Ok(value::boolean(re.is_match(&src)))
}

pub(super) fn pattern_match(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let pattern = arg_str(n, a, 0)?;
    let src = str_or_real(n, a, 1)?;
    Ok(value::boolean(wildcard(pattern, &src)))
}

/// Kyverno's wildcard match (`*`, `?`; validate.md §5.5).
pub(crate) fn wildcard(pattern: &str, s: &str) -> bool {
    crate::base::wildcard::matches(pattern, s)
}

pub(super) fn to_boolean(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let s = arg_str(n, a, 0)?;
    match s.to_lowercase().as_str() {
        "true" => Ok(value::boolean(true)),
        "false" => Ok(value::boolean(false)),
        _ => Err(generic(
            n,
            format!("lowercase argument must be 'true' or 'false' (provided: '{s}')"),
        )),
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(super) fn base64_encode(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let bytes = arg_str(n, a, 0)?.as_bytes();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    Ok(value::string(out))
}

/// Go `base64.StdEncoding.DecodeString`: padding required, `\r`/`\n` ignored; the error
/// names the offending input byte. Invalid UTF-8 output is kept lossily.
pub(super) fn base64_decode(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let input: Vec<(usize, u8)> = arg_str(n, a, 0)?
        .bytes()
        .enumerate()
        .filter(|(_, b)| *b != b'\r' && *b != b'\n')
        .collect();
    let corrupt = |at: usize| Error::Eval(format!("illegal base64 data at input byte {at}"));
    let mut out = Vec::with_capacity(input.len() / 4 * 3);
    for (q, quad) in input.chunks(4).enumerate() {
        let mut vals = [0u32; 4];
        let mut pad = 0;
        for (i, (pos, b)) in quad.iter().enumerate() {
            if *b == b'=' {
                if i < 2 {
                    return Err(corrupt(*pos));
                }
                pad += 1;
                continue;
            }
            if pad > 0 {
                return Err(corrupt(*pos));
            }
            vals[i] = B64
                .iter()
                .position(|c| c == b)
                .ok_or_else(|| corrupt(*pos))? as u32;
        }
        if quad.len() < 4 {
            let at = quad.last().map_or(0, |(p, _)| *p);
            return Err(corrupt(if quad.len() == 1 { at } else { at + 1 }));
        }
        if pad > 0 && q + 1 != input.len().div_ceil(4) {
            return Err(corrupt(quad[3].0 + 1));
        }
        let v = (vals[0] << 18) | (vals[1] << 12) | (vals[2] << 6) | vals[3];
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Ok(value::string(String::from_utf8_lossy(&out).into_owned()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn sha256(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(hex(&sha2::Sha256::digest(
        arg_str(n, a, 0)?.as_bytes(),
    ))))
}

pub(super) fn sha1(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(hex(&sha1::Sha1::digest(
        arg_str(n, a, 0)?.as_bytes(),
    ))))
}

pub(super) fn md5(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(hex(&md5::Md5::digest(
        arg_str(n, a, 0)?.as_bytes(),
    ))))
}

pub(super) fn path_canonicalize(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let p = arg_str(n, a, 0)?;
    Ok(value::string(if p.is_empty() {
        String::new()
    } else {
        go_clean(p)
    }))
}

/// Go `path/filepath.Clean` on Linux.
fn go_clean(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_owned(),
        (false, false) => body,
    }
}

pub(super) fn truncate(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let s = arg_str(n, a, 0)?;
    let len = arg_f64(n, a, 1)?.max(0.0) as usize;
    Ok(value::string(s.chars().take(len).collect::<String>()))
}

pub(super) fn semver_compare(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (v, r) = (arg_str(n, a, 0)?, arg_str(n, a, 1)?);
    // A version that does not parse is compared as 0.0.0 (the error is ignored upstream).
    let version = Version::parse(v).unwrap_or_default();
    let range = Range::parse(r).map_err(Error::Eval)?;
    Ok(value::boolean(range.matches(&version)))
}

pub(super) fn image_normalize(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let image = arg_str(n, a, 0)?;
    let info = crate::base::image::parse(image).map_err(|e| generic(n, e))?;
    Ok(value::string(info.normalized()))
}

pub(super) fn is_external_url(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let url = arg_str(n, a, 0)?;
    let host = url_hostname(url);
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => Ok(value::boolean(!(ip.is_loopback() || is_private(&ip)))),
        // Kyverno resolves the name with DNS; kpol works offline.
        Err(_) => Err(Error::Eval(format!(
            "lookup {host}: DNS lookups are not available offline"
        ))),
    }
}

fn is_private(ip: &std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_private(),
        std::net::IpAddr::V6(v6) => (v6.segments()[0] & 0xfe00) == 0xfc00,
    }
}

/// `url.Parse(s).Hostname()` for the common shapes (`scheme://[user@]host[:port]/...`).
fn url_hostname(url: &str) -> String {
    let Some((_, rest)) = url.split_once("://") else {
        return String::new();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(inner) = hostport.strip_prefix('[') {
        return inner.split(']').next().unwrap_or("").to_owned();
    }
    hostport.split(':').next().unwrap_or("").to_owned()
}

pub(super) fn random(n: &str, _: &[Arg<'_, '_>], _: u32) -> R {
    Err(generic(
        n,
        "random values are not supported by kpol (results would not be reproducible)",
    ))
}

/// Kyverno returns the decoder's errors unwrapped (no `JMESPath function` prefix).
pub(super) fn x509_decode(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    crate::jmespath::x509::decode(arg_str(n, a, 0)?).map_err(Error::Eval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_helpers() {
        assert_eq!(go_clean("///"), "/");
        assert_eq!(go_clean("/../../"), "/");
        assert_eq!(go_clean("a/b/../c/./d/"), "a/c/d");
        assert_eq!(go_clean("../a"), "../a");
        assert_eq!(go_replace("aaa", "a", "b", 2).unwrap(), "bba");
        assert_eq!(go_replace("ab", "", "-", -1).unwrap(), "-a-b-");
        assert_eq!(url_hostname("https://user@10.0.0.1:8443/x"), "10.0.0.1");
        assert_eq!(url_hostname("http://[::1]:80/"), "::1");
    }
}

//! A finding's stable identity: the same value in SARIF's `partialFingerprints`
//! (`kpolFinding/v1`), in `--format json`'s `fingerprint` and in `kpol explain --finding`. It
//! hashes policy, rule, resource identity and file, never line numbers, so editing elsewhere
//! in the file keeps it.

use super::check::Finding;

/// The finding's fingerprint: 16 hex digits.
pub fn fingerprint(f: &Finding) -> String {
    let file = f.source.as_deref().map_or("", |s| s.name());
    let key = [
        f.policy.as_str(),
        f.rule.as_str(),
        f.api_version.as_str(),
        f.kind.as_str(),
        f.namespace.as_str(),
        f.name.as_str(),
        file,
    ];
    hash(&key)
}

/// FNV-1a over `parts`, NUL-separated, as 16 hex digits.
pub fn hash(parts: &[&str]) -> String {
    let key = parts.join("\u{0}");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::hash;

    #[test]
    fn hash_is_fnv1a_of_the_nul_joined_parts() {
        // FNV-1a 64 of the empty string is its offset basis.
        assert_eq!(hash(&[""]), "cbf29ce484222325");
        assert_ne!(hash(&["a", "b"]), hash(&["ab"]));
    }
}

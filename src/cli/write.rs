//! Writing files a checked tree may have planted links around: `kpol mutate --write`,
//! `kpol mutate -o DIR`, `kpol generate -o DIR` and `kpol check -o FILE`.
//!
//! A file is replaced through a temporary with a random name, created `O_CREAT|O_EXCL` (never
//! through an existing name or link) in the target's own directory, and renamed over the
//! target, so that a reader sees the old file or the new one, never half of one. A target that
//! is a symbolic link is refused unless the user asked to write through links; so are a target
//! that is not a regular file, one with other hard links (replacing it would split them), and a
//! read-only one. The new file keeps the old one's mode, and its owner where the process may
//! set it.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use kpol::diagnostic::{Code, Diagnostic, Location};

use super::discover::io_reason;

/// How a write treats links.
#[derive(Clone, Copy, Debug, Default)]
pub struct Links {
    /// Write through a symbolic link at the target (or, for a directory, below it) instead of
    /// refusing it (`--follow-symlinks`).
    pub follow: bool,
}

/// The error of a write that did not happen, naming the path.
pub fn error(path: &Path, reason: &str) -> Diagnostic {
    Diagnostic::error(
        Code::Io,
        format!("cannot write {}: {reason}", path.display()),
        Some(Location::file(path.display().to_string())),
    )
}

const LINK_REFUSED: &str =
    "it is a symbolic link; kpol does not write through links (--follow-symlinks does)";

/// Replaces (or creates) `path` with `bytes`. With `expected`, the file must still hold those
/// bytes when it is replaced: one edited or removed since it was read is left as it is now.
pub fn replace(
    path: &Path,
    bytes: &[u8],
    expected: Option<&[u8]>,
    links: Links,
) -> Result<(), Diagnostic> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            if !links.follow {
                return Err(error(path, LINK_REFUSED));
            }
            std::fs::canonicalize(path).map_err(|e| error(path, &io_reason(&e)))?
        }
        _ => path.to_path_buf(),
    };
    let old = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if expected.is_some() {
                return Err(error(path, "it was removed since kpol read it"));
            }
            None
        }
        Err(e) => return Err(error(path, &io_reason(&e))),
    };
    if let Some(m) = &old {
        refuse_unreplaceable(path, m)?;
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "kpol".to_owned(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".kpol.tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // A new file gets the usual mode (less the umask), not a temporary file's 0600.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| error(path, &io_reason(&e)))?;
    let written = (|| {
        tmp.write_all(bytes)?;
        if let Some(m) = &old {
            keep_owner_and_mode(tmp.as_file(), m)?;
        }
        tmp.as_file().sync_all()?;
        if let Some(expected) = expected {
            match std::fs::read(&target) {
                Ok(now) if now == expected => {}
                Ok(_) => return Err(std::io::Error::other("it changed since kpol read it")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(std::io::Error::other("it was removed since kpol read it"));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    })();
    // On any error the temporary is removed when `tmp` is dropped.
    written.map_err(|e| error(path, &io_reason(&e)))?;
    tmp.persist(&target)
        .map(|_| ())
        .map_err(|e| error(path, &io_reason(&e.error)))
}

/// Refuses what a rename must not replace: not a regular file, other hard links, read-only.
fn refuse_unreplaceable(path: &Path, m: &std::fs::Metadata) -> Result<(), Diagnostic> {
    if !m.is_file() {
        return Err(error(path, "it is not a regular file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if m.nlink() > 1 {
            return Err(error(
                path,
                &format!(
                    "it has {} hard links; replacing it would split them (left as it is)",
                    m.nlink()
                ),
            ));
        }
    }
    if m.permissions().readonly() {
        return Err(error(path, "the file is read-only"));
    }
    Ok(())
}

/// The old file's owner (where the process may set it) and mode on the new one.
fn keep_owner_and_mode(f: &std::fs::File, old: &std::fs::Metadata) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let now = f.metadata()?;
        if (now.uid(), now.gid()) != (old.uid(), old.gid()) {
            // Only a privileged process may give a file away; anyone may keep its group when
            // they are in it. Failing either, the file is the writer's, as an editor makes it.
            if std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid())).is_err() {
                let _ = std::os::unix::fs::fchown(f, None, Some(old.gid()));
            }
        }
    }
    // After the owner: changing it may clear set-id bits.
    f.set_permissions(old.permissions())
}

/// Creates the directories of `rel` under `root` (`-o DIR`), refusing a symbolic link on the
/// way unless links are followed, so that a link planted in DIR cannot lead a write outside
/// it. `rel` must be relative and free of `..`; the result is `root/rel`.
pub fn confined_path(root: &Path, rel: &Path, links: Links) -> Result<PathBuf, Diagnostic> {
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(error(
            &root.join(rel),
            "the path leaves the output directory",
        ));
    }
    if !root.as_os_str().is_empty() && !root.exists() {
        std::fs::create_dir_all(root).map_err(|e| error(root, &io_reason(&e)))?;
    }
    let mut dir = root.to_path_buf();
    let parents: Vec<_> = rel.parent().map_or_else(Vec::new, |p| {
        p.components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect()
    });
    for c in parents {
        dir.push(c);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_symlink() && !links.follow => {
                return Err(error(&dir, LINK_REFUSED));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(|e| error(&dir, &io_reason(&e)))?;
            }
            Err(e) => return Err(error(&dir, &io_reason(&e))),
        }
    }
    Ok(root.join(rel))
}

/// Opens `path` for writing a report (`kpol check -o FILE`): a symbolic link there is refused
/// unless links are followed (opened `O_NOFOLLOW`, so a link planted after the check is refused
/// too).
pub fn open_report(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if !links.follow {
        use std::os::unix::fs::OpenOptionsExt as _;
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(std::io::Error::other(format!(
                "{}: {LINK_REFUSED}",
                path.display()
            )));
        }
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    let _ = links;
    opts.open(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A file edited or deleted between reading and writing is left as it is now.
    #[test]
    fn write_refuses_files_changed_or_removed_since_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "new: edit\n").unwrap();
        let links = Links::default();
        let e = replace(&p, b"patched\n", Some(b"old\n"), links).unwrap_err();
        assert!(e.message.contains("changed since"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new: edit\n");
        std::fs::remove_file(&p).unwrap();
        let e = replace(&p, b"patched\n", Some(b"old\n"), links).unwrap_err();
        assert!(e.message.contains("removed since"), "{}", e.message);
        assert!(!p.exists());
        std::fs::write(&p, "old\n").unwrap();
        replace(&p, b"patched\n", Some(b"old\n"), links).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "patched\n");
        // No temporary is left behind, whatever happened.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.yaml"]);
    }

    /// Mode and owner survive the rename; a hard-linked file is refused and both links keep
    /// the old bytes.
    #[cfg(unix)]
    #[test]
    fn mode_and_owner_kept_hard_links_refused() {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "old\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        // As root, give the file away first: the rename must keep that owner.
        let root = std::fs::metadata(&p).unwrap().uid() == 0;
        if root {
            std::os::unix::fs::chown(&p, Some(4242), Some(4343)).unwrap();
        }
        replace(&p, b"new\n", None, Links::default()).unwrap();
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.permissions().mode() & 0o7777, 0o640);
        if root {
            assert_eq!((m.uid(), m.gid()), (4242, 4343));
        }
        let twin = dir.path().join("twin.yaml");
        std::fs::hard_link(&p, &twin).unwrap();
        let e = replace(&p, b"newer\n", None, Links::default()).unwrap_err();
        assert!(e.message.contains("2 hard links"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(std::fs::read_to_string(&twin).unwrap(), "new\n");
    }

    /// A link at the target is refused unless followed; followed, the link stays a link and
    /// the file it points to is replaced.
    #[cfg(unix)]
    #[test]
    fn symlinked_target_refused_unless_followed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.yaml");
        let link = dir.path().join("link.yaml");
        std::fs::write(&real, "old\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = replace(&link, b"new\n", None, Links::default()).unwrap_err();
        assert!(e.message.contains("symbolic link"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "old\n");
        replace(&link, b"new\n", None, Links { follow: true }).unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new\n");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    /// A directory link inside `-o DIR` is not written through; `..` never leaves it.
    #[cfg(unix)]
    #[test]
    fn confined_paths_refuse_links_and_parents() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("sub")).unwrap();
        let links = Links::default();
        let e = confined_path(&out, Path::new("sub/a.yaml"), links).unwrap_err();
        assert!(e.message.contains("symbolic link"), "{}", e.message);
        let e = confined_path(&out, Path::new("../a.yaml"), links).unwrap_err();
        assert!(e.message.contains("leaves"), "{}", e.message);
        let p = confined_path(&out, Path::new("new/deeper/a.yaml"), links).unwrap();
        assert!(out.join("new/deeper").is_dir());
        assert_eq!(p, out.join("new/deeper/a.yaml"));
    }

    #[cfg(unix)]
    #[test]
    fn report_output_refuses_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("report.sarif");
        std::fs::write(&real, "keep\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = open_report(&link, Links::default()).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep\n");
        assert!(open_report(&dir.path().join("plain.sarif"), Links::default()).is_ok());
    }
}

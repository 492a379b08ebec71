//! Writes and reads on the file system: links, FIFOs, where output may go.

use super::*;

/// A ConfigMap the embedded `add-default-labels` policy changes.
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// The fixed temporary name earlier versions wrote through, planted as a link to a file
/// outside: `--write` neither follows nor replaces it, and the file outside is untouched.
#[cfg(unix)]
#[test]
fn a_planted_temporary_link_does_not_redirect_a_write() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, outside) = (tmp.path().join("repo"), tmp.path().join("outside"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::write(repo.join("a.yaml"), CM).unwrap();
    std::os::unix::fs::symlink(&victim, repo.join(".a.yaml.kpol.tmp")).unwrap();
    let o = kpol(&[
        "mutate",
        "-p",
        crate::LABELS,
        "--write",
        s(&repo.join("a.yaml")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read(&victim), "precious\n");
    assert!(is_link(&repo.join(".a.yaml.kpol.tmp")));
    assert!(read(&repo.join("a.yaml")).contains("managed-by: kpol"));
}

/// `--write` onto a symbolic link is refused (exit 2) while the other files are written;
/// `--follow-symlinks` replaces the file it points to and keeps the link.
#[cfg(unix)]
#[test]
fn write_onto_a_symlinked_target_is_refused_the_rest_written() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let target = tmp.path().join("target.yaml");
    std::fs::write(&target, CM).unwrap();
    std::os::unix::fs::symlink(&target, repo.join("link.yaml")).unwrap();
    std::fs::write(repo.join("other.yaml"), CM).unwrap();
    let (link, other) = (repo.join("link.yaml"), repo.join("other.yaml"));
    let o = kpol(&[
        "mutate",
        "-p",
        crate::LABELS,
        "--write",
        s(&link),
        s(&other),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot write {}: it is a symbolic link", s(&link))),
        "{err}"
    );
    assert_eq!(read(&target), CM);
    assert!(read(&other).contains("managed-by: kpol"));
    let o = kpol(&[
        "mutate",
        "-p",
        crate::LABELS,
        "--write",
        "--follow-symlinks",
        s(&link),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&target).contains("managed-by: kpol"));
    assert!(is_link(&link));
}

/// `kpol check -o FILE` onto a symbolic link is refused; the file it points to is untouched.
#[cfg(unix)]
#[test]
fn check_output_onto_a_symlink_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.yaml");
    std::fs::write(&good, GOOD_POD).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let report = tmp.path().join("report.json");
    std::os::unix::fs::symlink(&victim, &report).unwrap();
    let o = kpol(&["check", "--format", "json", "-o", s(&report), s(&good)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(read(&victim), "precious\n");
}

/// `kpol mutate -o DIR` and `kpol generate -o DIR` do not write through a directory link
/// planted inside DIR.
#[cfg(unix)]
#[test]
fn output_dirs_are_not_written_through_links() {
    let tmp = tempfile::tempdir().unwrap();
    let (input, out, outside) = (
        tmp.path().join("in"),
        tmp.path().join("out"),
        tmp.path().join("outside"),
    );
    for d in [&input.join("sub"), &out, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(input.join("sub/cm.yaml"), CM).unwrap();
    std::fs::write(input.join("top.yaml"), CM).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("sub")).unwrap();
    let o = kpol(&["mutate", "-p", crate::LABELS, s(&input), "-o", s(&out)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(read(&out.join("top.yaml")).contains("managed-by: kpol"));
}

/// A directory link that leaves the root given on the command line is neither read nor
/// written through (`-v` notes it); a link inside the root still works.
#[cfg(unix)]
#[test]
fn a_directory_link_leaving_the_root_is_not_read_nor_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, outside) = (tmp.path().join("root"), tmp.path().join("outside"));
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("real/good.yaml"), GOOD_POD).unwrap();
    std::fs::write(outside.join("secret.yaml"), CM).unwrap();
    std::fs::write(outside.join("single.yaml"), CM).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.join("single.yaml"), root.join("file-link.yaml")).unwrap();
    std::os::unix::fs::symlink(root.join("real"), root.join("inner")).unwrap();
    let o = kpol(&[
        "check",
        "-v",
        "-p",
        "policies/require-resource-limits.yaml",
        s(&root),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    // real/good.yaml and inner/good.yaml (the link inside the root).
    assert!(text.contains("pass: 2,"), "{text}");
    assert!(!text.contains("secret.yaml:"), "{text}");
    assert!(text.contains("escape"), "{text}");
    assert!(text.contains("leaves"), "{text}");
    assert!(text.contains("file-link.yaml"), "{text}");
    // Without the inner link (two names for one file would be written twice).
    std::fs::remove_file(root.join("inner")).unwrap();
    let o = kpol(&["mutate", "-p", crate::LABELS, "--write", s(&root)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(read(&root.join("real/good.yaml")).contains("managed-by: kpol"));
    assert_eq!(read(&outside.join("secret.yaml")), CM);
    assert_eq!(read(&outside.join("single.yaml")), CM);
    // Named explicitly, a file link is read.
    let o = kpol(&[
        "mutate",
        "-p",
        crate::LABELS,
        "--check",
        s(&root.join("file-link.yaml")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// An explicitly named FIFO (no writer) is an error at once instead of a blocked run; the good
/// file is still checked. `-` stays standard input.
#[cfg(unix)]
#[test]
fn an_explicit_fifo_is_refused_quickly() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo is needed");
    let start = Instant::now();
    assert_reported_beside_good(&fifo, &["error[io]", "pipe.yaml", "not a regular file"]);
    assert!(start.elapsed() < Duration::from_secs(60));
    let o = kpol(&["mutate", "-p", crate::LABELS, "--check", s(&fifo)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

/// `--write` keeps a file's mode; a hard-linked file is reported and left whole (both names
/// keep the old bytes) while the others are written.
#[cfg(unix)]
#[test]
fn write_keeps_mode_and_reports_hard_links() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let (moded, linked) = (
        tmp.path().join("moded.yaml"),
        tmp.path().join("linked.yaml"),
    );
    std::fs::write(&moded, CM).unwrap();
    std::fs::set_permissions(&moded, std::fs::Permissions::from_mode(0o751)).unwrap();
    std::fs::write(&linked, CM).unwrap();
    let twin = tmp.path().join("twin.txt");
    std::fs::hard_link(&linked, &twin).unwrap();
    let o = kpol(&["mutate", "-p", crate::LABELS, "--write", s(tmp.path())]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot write {}: it has 2 hard links", s(&linked))),
        "{err}"
    );
    assert_eq!((read(&linked), read(&twin)), (CM.to_owned(), CM.to_owned()));
    assert!(read(&moded).contains("managed-by: kpol"));
    let mode = std::fs::metadata(&moded).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o751);
}

/// A file mixing CRLF and LF lines: `--write` changes only the inserted line; every other
/// line keeps its bytes, line ending included.
#[test]
fn mixed_line_endings_keep_untouched_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("cm.yaml");
    let body = "apiVersion: v1\r\nkind: ConfigMap\nmetadata:\r\n  name: c # note\r\n  labels:\n    a: b\r\ndata:\n  k: v\r\n";
    std::fs::write(&p, body).unwrap();
    let o = kpol(&["mutate", "-p", crate::LABELS, "--write", s(&p)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let after = std::fs::read(&p).unwrap();
    let lines = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split_inclusive(|&c| c == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (old, new) = (lines(body.as_bytes()), lines(&after));
    let added: Vec<_> = new.iter().filter(|l| !old.contains(l)).collect();
    assert_eq!(added.len(), 1, "{:?}", String::from_utf8_lossy(&after));
    assert!(String::from_utf8_lossy(added[0]).contains("managed-by: kpol"));
    let kept: Vec<_> = new.iter().filter(|l| old.contains(l)).cloned().collect();
    assert_eq!(kept, old);
}

/// A checked tree's `.kpol.yaml` cannot send the report outside its directory: `output`
/// with `..`, absolute, or through a link is refused naming the config file (exit 2), and
/// nothing is written there. An explicit `-o` stays the user's choice.
#[cfg(unix)]
#[test]
fn config_output_outside_the_repository_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("a/b/repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("good.yaml"), GOOD_POD).unwrap();
    std::os::unix::fs::symlink(tmp.path(), repo.join("up")).unwrap();
    let config = repo.join(".kpol.yaml");
    let escape = tmp.path().join("x");
    for output in ["../../x", escape.to_str().unwrap(), "up/x"] {
        std::fs::write(&config, format!("output: {output}\n")).unwrap();
        let o = kpol(&["check", "--config", s(&config), s(&repo.join("good.yaml"))]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{output}: {err}");
        assert!(err.contains(".kpol.yaml:1:9"), "{output}: {err}");
        assert!(err.contains("output"), "{output}: {err}");
        assert!(!escape.exists(), "{output}");
    }
    std::fs::write(&config, "output: reports/kpol.txt\n").unwrap();
    std::fs::create_dir_all(repo.join("reports")).unwrap();
    let o = kpol(&["check", "--config", s(&config), s(&repo.join("good.yaml"))]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(repo.join("reports/kpol.txt").is_file());
    let o = kpol(&[
        "check",
        "--config",
        s(&config),
        "-o",
        s(&escape),
        s(&repo.join("good.yaml")),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(escape.is_file());
}

/// Excludes that leave nothing to check, or a tree without manifests, are not a green run.
#[test]
fn nothing_to_check_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("good.yaml"), GOOD_POD).unwrap();
    let o = kpol(&["check", "--exclude", "*.yaml", s(tmp.path())]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("nothing to check"), "{text}");
    assert!(text.contains("--exclude"), "{text}");
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "x").unwrap();
    let o = kpol(&["check", s(&empty)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("nothing to check"), "{text}");
}

/// `kpol mutate` hands each file on as soon as it and every earlier one are done instead of
/// keeping every file's result: 200 files of 400 KB (80 MB) stay far under the runner's
/// 300 MB (debug build: about 40 MB; keeping them all took 500 MB).
#[test]
fn mutate_memory_stays_flat_in_the_number_of_files() {
    let tmp = tempfile::tempdir().unwrap();
    let blob = "x".repeat(400_000);
    for i in 0..200 {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  blob: {blob}\n"
        );
        std::fs::write(tmp.path().join(format!("cm{i:04}.yaml")), text).unwrap();
    }
    let o = kpol(&["mutate", "-p", crate::LABELS, "--check", s(tmp.path())]);
    let err = stderr(&o);
    // Every file would change (the embedded policy adds a label), and each is named.
    assert_eq!(o.status.code(), Some(1), "{}", &err[..err.len().min(2000)]);
    assert_eq!(err.matches("would change: ").count(), 200);
}

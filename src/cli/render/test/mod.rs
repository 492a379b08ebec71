//! `kpol test`'s outputs, views of its report (src/cli/test/report.rs): the human report and
//! its summary line (`human`), `--format json` (`json`), and the `kyverno test -o` documents
//! (`output`).

pub mod human;
pub mod json;
pub mod output;

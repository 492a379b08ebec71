//! The Kyverno CLI's own input files — `kyverno-test.yaml` (Test), the values file, the
//! userinfo file and the context file (cli-compat.md §2–6) — read strictly, the way the Go CLI reads them.
//!
//! Only the reading lives here; running a test is the `kpol test` command's job.

mod context;
mod fields;
mod spec;
mod values;

pub(crate) use context::{ImageData, parse_context};
pub use fields::LoadError;
pub use spec::{ResultEntry, TestSpec, clean_path, parse_test};
pub use values::user_info;

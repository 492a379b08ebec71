//! Progress on standard error (files done / total) for long runs in a terminal. Never drawn
//! when stderr is not a terminal or in CI (`CI` set), so logs and pipes stay clean.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Fewer inputs than this finish too fast to need a bar.
const MIN_FILES: usize = 50;

/// A progress bar, or nothing.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn new(total: usize) -> Self {
        let wanted = total >= MIN_FILES
            && std::io::stderr().is_terminal()
            && std::env::var_os("CI").is_none();
        if !wanted {
            return Self(None);
        }
        let bar = ProgressBar::with_draw_target(
            Some(total as u64),
            ProgressDrawTarget::stderr_with_hz(10),
        );
        if let Ok(style) = ProgressStyle::with_template("kpol: {pos}/{len} files {wide_bar}") {
            bar.set_style(style);
        }
        Self(Some(bar))
    }

    /// One more file done (callable from any thread).
    pub fn tick(&self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    /// Whether a bar is drawn.
    pub fn is_drawn(&self) -> bool {
        self.0.is_some()
    }

    /// Runs `f` (which writes output) with the bar hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar before the report is written.
    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Short runs never draw, whatever stderr is; ticking a hidden bar is a no-op.
    #[test]
    fn short_runs_have_no_bar() {
        for n in [0, 1, MIN_FILES - 1] {
            let p = Progress::new(n);
            assert!(p.0.is_none());
            p.tick();
            p.finish();
        }
    }
}

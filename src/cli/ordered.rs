//! Parallel work handed back in input order, each result as soon as it and every earlier one
//! are done, so that a run's output streams and its memory does not grow with its inputs.
//!
//! Workers claim inputs in order; a worker waits before claiming an input more than a small
//! window ahead of the first one not yet handed back, so a slow input holds back at most that
//! many finished results. The calling thread works too, between handing results on, so `-j N`
//! runs N threads. The workers are threads of their own, not rayon's: they block on that
//! window, and the work they run may itself use the rayon pool (one large file split by
//! resources), where a blocked worker could hold up the very job it waits for.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};

/// Results that may wait for an earlier, slower input, per worker thread. perf: with 4, a
/// worker soon stood waiting while the calling thread, which also hands results on, worked
/// through a larger input (`-j2` on 2,000 files: 1.66x faster than `-j1`; with 16, 1.94x;
/// docs/PERFORMANCE.md). A waiting result is a file's rendered output or its findings.
const WINDOW_PER_THREAD: usize = 16;

/// Maps `work` over `items` on as many threads as the rayon pool has (`-j`) and gives each
/// result to `sink`, on the calling thread, in the order of `items`.
pub fn for_each<T, R>(items: &[T], work: impl Fn(&T) -> R + Sync, mut sink: impl FnMut(R))
where
    T: Sync,
    R: Send,
{
    for_each_on(rayon::current_num_threads(), items, work, |r| {
        sink(r);
        ControlFlow::Continue(())
    });
}

/// [`for_each`] until `sink` breaks (a closed pipe): no result is handed on after that, and
/// the workers stop once the inputs they were working on are done.
pub fn for_each_until<T, R>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    sink: impl FnMut(R) -> ControlFlow<()>,
) where
    T: Sync,
    R: Send,
{
    for_each_on(rayon::current_num_threads(), items, work, sink);
}

/// [`for_each_until`] on `threads` worker threads.
fn for_each_on<T, R>(
    threads: usize,
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(R) -> ControlFlow<()>,
) where
    T: Sync,
    R: Send,
{
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        for item in items {
            if sink(work(item)).is_break() {
                return;
            }
        }
        return;
    }
    let window = threads * WINDOW_PER_THREAD;
    let gate = Gate::default();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        // The calling thread is one of the workers: `threads - 1` more are spawned.
        for _ in 1..threads {
            let tx = tx.clone();
            let (gate, next, work) = (&gate, &next, &work);
            scope.spawn(move || {
                // A panic in `work` must not leave the others waiting for its result.
                let _abort_on_panic = AbortOnPanic(gate);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() || !gate.wait_for(i, window) {
                        break;
                    }
                    if tx.send((i, work(&items[i]))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let _abort_on_panic = AbortOnPanic(&gate);
        let mut pending = BTreeMap::new();
        let mut wanted = 0;
        while wanted < items.len() {
            while let Ok((i, result)) = rx.try_recv() {
                pending.insert(i, result);
            }
            if let Some(result) = pending.remove(&wanted) {
                if sink(result).is_break() {
                    // Workers waiting on the window, or about to claim more, stop.
                    gate.abort();
                    break;
                }
                wanted += 1;
                gate.advance(wanted);
                continue;
            }
            // Nothing to hand on yet: take an input within the window, or wait for a worker.
            let claim = next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| {
                (i < items.len() && i < wanted + window).then_some(i + 1)
            });
            match claim {
                Ok(i) => {
                    pending.insert(i, work(&items[i]));
                }
                Err(_) => match rx.recv() {
                    Ok((i, result)) => {
                        pending.insert(i, result);
                    }
                    // Every worker is gone before the last result: one panicked (the scope
                    // re-raises it).
                    Err(_) => break,
                },
            }
        }
    });
}

/// How far results have been handed back, for workers waiting to claim more.
#[derive(Default)]
struct Gate {
    done: Mutex<usize>,
    moved: Condvar,
    aborted: AtomicBool,
}

impl Gate {
    /// Waits until input `i` is within `window` of the first result not handed back; false
    /// when the run is aborted.
    fn wait_for(&self, i: usize, window: usize) -> bool {
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        while i >= *done + window {
            if self.aborted.load(Ordering::Relaxed) {
                return false;
            }
            done = self
                .moved
                .wait(done)
                .unwrap_or_else(PoisonError::into_inner);
        }
        !self.aborted.load(Ordering::Relaxed)
    }

    fn advance(&self, done: usize) {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner) = done;
        self.moved.notify_all();
    }

    fn abort(&self) {
        let _held = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        self.aborted.store(true, Ordering::Relaxed);
        self.moved.notify_all();
    }
}

/// Aborts the run when dropped by a panicking worker.
struct AbortOnPanic<'a>(&'a Gate);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in input order whatever finishes first, on any number of threads.
    #[test]
    fn results_arrive_in_input_order() {
        let items: Vec<u64> = (0..200).collect();
        for threads in [1, 2, 8] {
            let mut seen = Vec::new();
            // Early inputs are the slow ones.
            let slow_first = |&n: &u64| {
                std::thread::sleep(std::time::Duration::from_micros((200 - n) * 10));
                n * 2
            };
            for_each_on(threads, &items, slow_first, |r| {
                seen.push(r);
                ControlFlow::Continue(())
            });
            let expected: Vec<u64> = items.iter().map(|n| n * 2).collect();
            assert_eq!(seen, expected, "{threads} threads");
        }
    }

    /// While one input is slow, the others run at most a window ahead of it.
    #[test]
    fn a_slow_input_holds_back_a_bounded_number_of_results() {
        let items: Vec<usize> = (0..100).collect();
        let started = AtomicUsize::new(0);
        let threads = 4;
        let mut first = None;
        let work = |&n: &usize| {
            if n == 0 {
                std::thread::sleep(std::time::Duration::from_millis(50));
                Some(started.load(Ordering::SeqCst))
            } else {
                started.fetch_add(1, Ordering::SeqCst);
                None
            }
        };
        for_each_on(threads, &items, work, |r| {
            first = first.or(r);
            ControlFlow::Continue(())
        });
        let ahead = first.unwrap_or_default();
        assert!(ahead > 0, "the others ran while the first was slow");
        assert!(
            ahead < threads * WINDOW_PER_THREAD,
            "{ahead} inputs started ahead of a slow one"
        );
    }

    /// A panic in the work reaches the caller instead of leaving the run waiting.
    #[test]
    fn a_panicking_input_does_not_hang_the_run() {
        let items: Vec<usize> = (0..100).collect();
        let outcome = std::panic::catch_unwind(|| {
            for_each_on(
                2,
                &items,
                |&n| {
                    assert_ne!(n, 3, "input 3 fails");
                    n
                },
                |_| ControlFlow::Continue(()),
            );
        });
        assert!(outcome.is_err(), "the panic came back");
    }

    /// A sink that breaks gets nothing more, and the run ends without working through every
    /// remaining input.
    #[test]
    fn a_breaking_sink_stops_the_run() {
        let items: Vec<usize> = (0..10_000).collect();
        for threads in [1, 3] {
            let worked = AtomicUsize::new(0);
            let mut seen = Vec::new();
            let work = |&n: &usize| {
                worked.fetch_add(1, Ordering::SeqCst);
                n
            };
            for_each_on(threads, &items, work, |r| {
                seen.push(r);
                if r == 5 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
            assert_eq!(seen, [0, 1, 2, 3, 4, 5], "{threads} threads");
            let worked = worked.load(Ordering::SeqCst);
            assert!(
                worked <= 6 + threads * (WINDOW_PER_THREAD + 1),
                "{worked} inputs worked on after the break"
            );
        }
    }
}

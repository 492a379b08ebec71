//! Context checkpoints (`Checkpoint`/`Restore`/`Reset` upstream) as an undo log: a checkpoint
//! remembers how long the log is, `set_path` logs what each top-level key held before, and a
//! restore puts those values back; the lent variables (`element`, ...) are a short list the
//! checkpoint keeps whole. A snapshot would copy the context per foreach element, with the
//! resource once a query has copied it in (docs/PERFORMANCE.md); the log costs only what the
//! element variables replace.

use super::context::Context;
use super::entries::Pending;
use crate::source::Span;
use crate::yaml::{Node, Value};

/// What a checkpoint saves besides the log length.
#[derive(Clone, Debug)]
pub(super) struct Mark<'r> {
    undo_len: usize,
    pending: Vec<Pending>,
    images_pending: Option<String>,
    lent_top: Vec<(String, &'r Node)>,
}

/// One change since the oldest open checkpoint.
#[derive(Clone, Debug)]
pub(super) enum Undo {
    /// A top-level key that was absent (remove it) or held this entry (put it back).
    Key {
        key: String,
        previous: Option<(Span, Node)>,
    },
    /// The whole root was replaced.
    Root(Node),
}

impl Context<'_> {
    pub(crate) fn checkpoint(&mut self) {
        self.marks.push(Mark {
            undo_len: self.undo.len(),
            pending: self.pending.clone(),
            images_pending: self.images_pending.clone(),
            lent_top: self.lent_top.clone(),
        });
    }

    /// Back to the last checkpoint, which stays for the next restore.
    pub(crate) fn restore(&mut self) {
        if let Some(m) = self.marks.last() {
            let (len, pending, images) = (m.undo_len, m.pending.clone(), m.images_pending.clone());
            let lent = m.lent_top.clone();
            self.undo_to(len);
            self.pending = pending;
            self.images_pending = images;
            self.lent_top = lent;
        }
    }

    /// Back to the last checkpoint and drops it.
    pub(crate) fn reset(&mut self) {
        if let Some(m) = self.marks.pop() {
            self.undo_to(m.undo_len);
            self.pending = m.pending;
            self.images_pending = m.images_pending;
            self.lent_top = m.lent_top;
        }
    }

    /// Sets the top-level `key` to `v`, logging the old entry when a checkpoint is open.
    pub(super) fn set_top(&mut self, key: &str, v: Node) {
        // The new value replaces a lent one (a checkpoint keeps the lent list as it was).
        self.lent_top.retain(|(k, _)| k != key);
        if !matches!(self.root.value, Value::Map(_)) {
            self.log_before(&[]);
            self.root.value = Value::Map(crate::yaml::Map::new());
        }
        let logging = !self.marks.is_empty();
        let Value::Map(m) = &mut self.root.value else {
            return;
        };
        let previous = match m.entries_mut().iter_mut().find(|e| e.key == key) {
            Some(e) => Some((e.key_span, std::mem::replace(&mut e.value, v))),
            None => {
                m.insert(key.to_owned(), Span::EMPTY, v);
                None
            }
        };
        if logging {
            self.undo.push(Undo::Key {
                key: key.to_owned(),
                previous,
            });
        }
    }

    /// Logs the current value of what a deeper `set_path` is about to change.
    pub(super) fn log_before(&mut self, path: &[&str]) {
        if self.marks.is_empty() {
            return;
        }
        let undo = match path.first() {
            None => Undo::Root(self.root.clone()),
            Some(first) => Undo::Key {
                key: (*first).to_owned(),
                previous: match &self.root.value {
                    Value::Map(m) => m.entry(first).map(|e| (e.key_span, e.value.clone())),
                    _ => return self.undo.push(Undo::Root(self.root.clone())),
                },
            },
        };
        self.undo.push(undo);
    }

    fn undo_to(&mut self, len: usize) {
        while self.undo.len() > len {
            let Some(u) = self.undo.pop() else {
                return;
            };
            match u {
                Undo::Root(n) => self.root = n,
                Undo::Key { key, previous } => {
                    if let Value::Map(m) = &mut self.root.value {
                        match previous {
                            Some((span, v)) => m.insert(key, span, v),
                            None => {
                                m.remove(&key);
                            }
                        }
                    }
                }
            }
        }
    }
}

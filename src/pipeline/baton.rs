//! Line numbers and offsets for chunks whose workers read their own bytes (`io::pieces`): a
//! worker knows how many lines and bytes its piece holds only once it has read it, and its
//! lines' numbers only once every piece before it in its source has said the same. Each worker
//! publishes its piece's counts as soon as it has them, then waits for its base: the lines and
//! bytes of its source before it. A piece before it is always in some worker's hands or done,
//! and publishing waits for nothing, so the wait ends.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, PoisonError};

/// The lines and bytes of a source before a chunk, or in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub lines: u64,
    pub bytes: u64,
}

#[derive(Default)]
struct State {
    /// Counts published and not yet resolved, by sequence number, with whether the chunk is
    /// the first of its source and whether it is the last.
    published: HashMap<u64, (Place, Counts)>,
    /// The counts up to the end of resolved chunks whose successor has not yet taken them.
    ends: HashMap<u64, Counts>,
    /// Bases known and not yet taken.
    bases: HashMap<u64, Counts>,
    aborted: bool,
}

/// Where a chunk is in its source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Place {
    pub first: bool,
    pub last: bool,
}

/// See the module's documentation.
#[derive(Default)]
pub(super) struct Baton {
    state: Mutex<State>,
    ready: Condvar,
}

impl Baton {
    /// Publishes chunk `seq`'s counts. The pieces of one source have consecutive sequence
    /// numbers, so chunk `seq`'s base is chunk `seq - 1`'s end, unless it is its source's
    /// first.
    pub(super) fn publish(&self, seq: u64, place: Place, counts: Counts) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.published.insert(seq, (place, counts));
        // Resolve every chunk from here on whose base is now known.
        let mut next = seq;
        while let Some(&(place, counts)) = state.published.get(&next) {
            let base = if place.first {
                Counts::default()
            } else {
                match next
                    .checked_sub(1)
                    .and_then(|before| state.ends.remove(&before))
                {
                    Some(end) => end,
                    None => break,
                }
            };
            state.published.remove(&next);
            state.bases.insert(next, base);
            if !place.last {
                let end = Counts {
                    lines: base.lines + counts.lines,
                    bytes: base.bytes + counts.bytes,
                };
                state.ends.insert(next, end);
            }
            next += 1;
        }
        drop(state);
        self.ready.notify_all();
    }

    /// Waits for chunk `seq`'s base; `None` once the run is stopping.
    pub(super) fn base(&self, seq: u64) -> Option<Counts> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.aborted {
                return None;
            }
            if let Some(base) = state.bases.remove(&seq) {
                return Some(base);
            }
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Wakes every waiting worker with nothing: the run is stopping.
    pub(super) fn abort(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .aborted = true;
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(lines: u64, bytes: u64) -> Counts {
        Counts { lines, bytes }
    }

    #[test]
    fn bases_add_up_in_any_order_of_publishing() {
        let baton = Baton::default();
        let (middle, first, last) = (
            Place::default(),
            Place {
                first: true,
                last: false,
            },
            Place {
                first: false,
                last: true,
            },
        );
        // A source of chunks 5 to 8 and one of 9 and 10, published out of order, the second
        // source's first before the first source is resolved.
        baton.publish(7, middle, counts(1, 10));
        baton.publish(9, first, counts(5, 50));
        baton.publish(8, last, counts(2, 20));
        baton.publish(5, first, counts(3, 30));
        baton.publish(6, middle, counts(4, 40));
        baton.publish(10, last, counts(0, 0));
        assert_eq!(baton.base(5), Some(counts(0, 0)));
        assert_eq!(baton.base(6), Some(counts(3, 30)));
        assert_eq!(baton.base(7), Some(counts(7, 70)));
        assert_eq!(baton.base(8), Some(counts(8, 80)));
        assert_eq!(baton.base(9), Some(counts(0, 0)));
        assert_eq!(baton.base(10), Some(counts(5, 50)));
        let state = baton.state.lock().unwrap();
        assert!(state.published.is_empty() && state.ends.is_empty() && state.bases.is_empty());
    }

    #[test]
    fn an_abort_wakes_a_waiter() {
        let baton = std::sync::Arc::new(Baton::default());
        let waiter = {
            let baton = std::sync::Arc::clone(&baton);
            std::thread::spawn(move || baton.base(3))
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        baton.abort();
        assert_eq!(waiter.join().unwrap(), None);
    }
}

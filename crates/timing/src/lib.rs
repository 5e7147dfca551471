#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use std::collections::VecDeque;

/// Drops the intervals of `v` (the first being number `start`) that end
/// before interval `b` starts, keeping the one just before it.
fn forget_before<T>(v: &mut VecDeque<T>, start: &mut u64, b: u64) {
    while *start + 1 < b && !v.is_empty() {
        v.pop_front();
        *start += 1;
    }
    if v.is_empty() && *start < b {
        *start = b.saturating_sub(1);
    }
}

/// Capacity calendar: a shared resource that can do `cap` units of work in
/// each interval of `bucket_ps`. A reservation takes the room left in the
/// first intervals at or after its time, spilling into later intervals when
/// one is full, so no interval ever holds more than `cap`. Requests that
/// arrive out of time order (one reserved far ahead, then one ready sooner)
/// do not queue behind each other: the earlier one fills the gap, as a
/// reordering scheduler would let it.
#[derive(Debug, Clone)]
pub struct Calendar {
    bucket_ps: u64,
    cap: u64,
    start: u64,
    /// Every interval before this one is full.
    first_open: u64,
    used: VecDeque<u64>,
    busy: u64,
    last_done: u64,
}

impl Calendar {
    /// A free resource of `cap` units per `bucket_ps` picoseconds.
    pub fn new(bucket_ps: u64, cap: u64) -> Calendar {
        Calendar {
            bucket_ps: bucket_ps.max(1),
            cap: cap.max(1),
            start: 0,
            first_open: 0,
            used: VecDeque::new(),
            busy: 0,
            last_done: 0,
        }
    }

    /// Reserves `amount` units at or after `t`; returns when the last of
    /// them is done.
    pub fn reserve(&mut self, t: u64, amount: u64) -> u64 {
        self.busy += amount;
        let b = self.bucket_ps;
        let mut left = amount;
        let mut i = (t / b).max(self.start).max(self.first_open);
        let done = loop {
            let k = (i - self.start) as usize;
            while self.used.len() <= k {
                self.used.push_back(0);
            }
            let room = self.cap - self.used[k];
            let take = room.min(left);
            self.used[k] += take;
            left -= take;
            if left == 0 {
                // Done when this interval has done everything booked in it
                // (as if served in order within the interval) and no sooner
                // than the request's own service time after `t`.
                let fill = (self.used[k] * b).div_ceil(self.cap);
                break (i * b + fill).max(t + (amount * b).div_ceil(self.cap));
            }
            i += 1;
        };
        // Skip past the intervals that are now full.
        let mut f = (self.first_open - self.start) as usize;
        while f < self.used.len() && self.used[f] >= self.cap {
            f += 1;
        }
        self.first_open = self.start + f as u64;
        self.last_done = self.last_done.max(done);
        done
    }

    /// Forgets intervals that end before `t` (reservations earlier than
    /// that are then placed at the oldest interval kept).
    pub fn advance(&mut self, t: u64) {
        forget_before(&mut self.used, &mut self.start, t / self.bucket_ps);
        self.first_open = self.first_open.max(self.start);
    }

    /// Units booked in the intervals from the one holding `t` to the one
    /// holding `t + horizon`: the work queued ahead of a request arriving
    /// at `t`, as far as it can matter to it.
    pub fn booked_within(&self, t: u64, horizon: u64) -> u64 {
        let i = (t / self.bucket_ps).max(self.start);
        let j = ((t + horizon) / self.bucket_ps).max(i);
        let k = (i - self.start) as usize;
        self.used.iter().skip(k).take((j - i + 1) as usize).sum()
    }

    /// Units reserved so far.
    pub fn busy(&self) -> u64 {
        self.busy
    }

    /// The latest completion time handed out.
    pub fn last_done(&self) -> u64 {
        self.last_done
    }

    /// Peak throughput in units per picosecond.
    pub fn peak_per_ps(&self) -> f64 {
        self.cap as f64 / self.bucket_ps as f64
    }
}

/// `k` identical entries (MSHRs, queue slots), booked on a time line.
///
/// The pool counts, for each interval of `bucket_ps`, the holders present
/// at any time in it. A request ready at `t` takes an entry at the first
/// time `>= t` in an interval with fewer than `k` holders, and holds it
/// until [`Pool::release`]. Booked in time order, no more than `k` entries
/// are ever held at once; a hold that ends inside an interval counts for
/// all of it, so an entry may be given out up to one interval late. As
/// with [`Calendar`], requests booked out of time order (one far ahead,
/// then one ready sooner) do not wait behind each other: the earlier one
/// uses the entries that are free at its own time.
#[derive(Debug, Clone)]
pub struct Pool {
    bucket_ps: u64,
    k: u32,
    start: u64,
    /// Every interval before this one is full.
    first_open: u64,
    holders: VecDeque<u32>,
    /// Sum over acquisitions of the time spent waiting for an entry, ps.
    wait_ps: u64,
}

impl Pool {
    /// `k` free entries (at least one), counted in intervals of
    /// `bucket_ps` (a fraction of the shortest hold).
    pub fn new(k: u32, bucket_ps: u64) -> Pool {
        Pool {
            bucket_ps: bucket_ps.max(1),
            k: k.max(1),
            start: 0,
            first_open: 0,
            holders: VecDeque::new(),
            wait_ps: 0,
        }
    }

    /// Takes an entry for a request ready at `t`; returns when the request
    /// holds it (`t`, or later if every entry is held then). Each acquire
    /// is followed by one [`Pool::release`] with the time returned here.
    pub fn acquire(&mut self, t: u64) -> u64 {
        let at = self.free_at(t);
        self.wait_ps += at - t;
        at
    }

    /// The first time at or after `t` at which an entry is free: what
    /// [`Pool::acquire`] would return, without taking it.
    pub fn free_at(&self, t: u64) -> u64 {
        let b = self.bucket_ps;
        let mut i = (t / b).max(self.start).max(self.first_open);
        while self
            .holders
            .get((i - self.start) as usize)
            .is_some_and(|&n| n >= self.k)
        {
            i += 1;
        }
        t.max(i * b)
    }

    /// Counts `ps` of waiting for an entry that the sender spent before
    /// asking (a sender that checks [`Pool::free_at`] first).
    pub fn add_wait(&mut self, ps: u64) {
        self.wait_ps += ps;
    }

    /// Gives back an entry held from `from` (as returned by
    /// [`Pool::acquire`]) to `to`.
    pub fn release(&mut self, from: u64, to: u64) {
        let b = self.bucket_ps;
        let from = from.max(self.start * b);
        let to = to.max(from + 1);
        let (k0, k1) = (
            (from / b - self.start) as usize,
            ((to - 1) / b - self.start) as usize,
        );
        if self.holders.len() <= k1 {
            self.holders.resize(k1 + 1, 0);
        }
        for n in self.holders.range_mut(k0..=k1) {
            *n += 1;
        }
        let mut f = (self.first_open - self.start) as usize;
        while f < self.holders.len() && self.holders[f] >= self.k {
            f += 1;
        }
        self.first_open = self.start + f as u64;
    }

    /// Forgets intervals that end before `t` (requests earlier than that
    /// are then placed at the oldest interval kept).
    pub fn advance(&mut self, t: u64) {
        forget_before(&mut self.holders, &mut self.start, t / self.bucket_ps);
        self.first_open = self.first_open.max(self.start);
    }

    /// Number of entries.
    pub fn size(&self) -> u32 {
        self.k
    }

    /// Total time requests waited for an entry, ps.
    pub fn wait_ps(&self) -> u64 {
        self.wait_ps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn calendar_streams_at_its_peak() {
        // 10 units per 100 ps: 1000 units take 10,000 ps from t = 0.
        let mut c = Calendar::new(100, 10);
        let mut done = 0;
        for _ in 0..100 {
            done = c.reserve(0, 10);
        }
        assert_eq!(done, 10_000);
        assert_eq!(c.busy(), 1000);
    }

    #[test]
    fn calendar_spills_a_large_reservation_over_intervals() {
        let mut c = Calendar::new(100, 10);
        assert_eq!(c.reserve(0, 25), 250);
        // The third interval has 5 units left.
        assert_eq!(c.reserve(0, 5), 300);
        assert_eq!(c.reserve(0, 1), 310);
    }

    #[test]
    fn calendar_lets_an_early_request_fill_a_gap() {
        let mut c = Calendar::new(100, 10);
        assert_eq!(c.reserve(1000, 10), 1100);
        assert_eq!(c.reserve(0, 10), 100, "not behind the later one");
    }

    #[test]
    fn booked_work_within_a_horizon() {
        let mut c = Calendar::new(100, 10);
        c.reserve(0, 25);
        assert_eq!(c.booked_within(0, 1000), 25);
        assert_eq!(c.booked_within(100, 100), 15);
    }

    #[test]
    fn pool_makes_the_k_plus_first_request_wait() {
        let mut p = Pool::new(2, 10);
        let a = p.acquire(0);
        p.release(a, a + 50);
        let b = p.acquire(0);
        p.release(b, b + 70);
        assert_eq!(p.acquire(10), 50);
        assert_eq!(p.wait_ps(), 40);
    }

    #[test]
    fn pool_lets_an_early_request_use_an_entry_free_at_its_time() {
        let mut p = Pool::new(1, 10);
        let a = p.acquire(1000);
        p.release(a, 5000);
        // Booked after, ready before: the entry is free until 1000.
        let b = p.acquire(0);
        assert_eq!(b, 0);
        p.release(b, 900);
        // Ready while the first holds the entry: waits for it.
        assert_eq!(p.free_at(2000), 5000);
        assert_eq!(p.acquire(2000), 5000);
    }

    proptest! {
        /// Whatever the order of requests, the units reserved up to the
        /// latest completion never exceed the peak rate times that time,
        /// and no request finishes faster than its own service time.
        #[test]
        fn calendar_never_exceeds_its_peak(reqs in prop::collection::vec((0u64..5000, 1u64..40), 1..300),
                                           bucket in 1u64..200, cap in 1u64..50) {
            let mut c = Calendar::new(bucket, cap);
            let mut last = 0;
            for (t, a) in reqs {
                let d = c.reserve(t, a);
                prop_assert!(d >= t + (a * bucket).div_ceil(cap));
                last = last.max(d);
            }
            prop_assert!(c.busy() as u128 * bucket as u128 <= cap as u128 * last as u128);
            prop_assert_eq!(c.last_done(), last);
        }

        /// At no time do more than k requests hold entries of a pool of k.
        #[test]
        fn pool_never_has_more_than_k_holders(reqs in prop::collection::vec((0u64..1000, 1u64..300), 1..200),
                                              k in 1u32..8) {
            let mut p = Pool::new(k, 1);
            let mut held: Vec<(u64, u64)> = Vec::new();
            let mut reqs = reqs;
            reqs.sort();
            for (t, dur) in reqs {
                let at = p.acquire(t);
                prop_assert!(at >= t);
                p.release(at, at + dur);
                held.push((at, at + dur));
            }
            for &(s, _) in &held {
                let n = held.iter().filter(|&&(a, b)| a <= s && s < b).count();
                prop_assert!(n <= k as usize);
            }
        }
    }
}

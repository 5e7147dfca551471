#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

/// Division by a divisor fixed at construction, by a multiplication where
/// that is exact (the quotient of every `n < 2^64 / d`), which is what
/// the calendars do for every booking. Quotients and remainders are those
/// of `/` and `%`.
#[derive(Debug, Clone, Copy)]
pub struct Divisor {
    d: u64,
    /// `floor((2^64 - 1) / d) + 1`: `2^64 / d` for a power of two (0 for
    /// 1, which needs no division).
    m: u64,
    /// Dividends below this divide exactly by the multiplication; the
    /// rest (none that a time in picoseconds reaches) take `/`, and
    /// every one where `d` is 1 (`limit` 0) is its own quotient.
    limit: u64,
}

impl Divisor {
    /// Division by `d` (by 1 where `d` is 0).
    pub fn new(d: u64) -> Divisor {
        let d = d.max(1);
        if d == 1 {
            Divisor { d, m: 0, limit: 0 }
        } else if d.is_power_of_two() {
            // n 2^(64-k) / 2^64 = n / 2^k exactly, for every n.
            Divisor {
                d,
                m: 1 << (64 - d.trailing_zeros()),
                limit: u64::MAX,
            }
        } else {
            // With 2^64 = k d + r (0 < r < d), m = k + 1 and
            // n m / 2^64 = n / d + n (d - r) / (d 2^64): the excess stays
            // below 1 / d, so the floor is n / d's, while n < 2^64 / d.
            Divisor {
                d,
                m: u64::MAX / d + 1,
                limit: u64::MAX / d,
            }
        }
    }

    /// `n / d`.
    #[inline]
    pub fn div(&self, n: u64) -> u64 {
        if n < self.limit {
            ((n as u128 * self.m as u128) >> 64) as u64
        } else if self.d == 1 {
            n
        } else {
            n / self.d
        }
    }

    /// `n % d`.
    #[inline]
    pub fn rem(&self, n: u64) -> u64 {
        n - self.div(n) * self.d
    }

    /// `n.div_ceil(d)`.
    #[inline]
    pub fn div_ceil(&self, n: u64) -> u64 {
        match n.checked_add(self.d - 1) {
            Some(x) => self.div(x),
            None => n.div_ceil(self.d),
        }
    }
}

/// A queue kept in one contiguous run of memory, so that a run of its
/// entries is one slice (a booking that spans many intervals updates one
/// slice; a bank's bookings are scanned as one). Dropping from the front
/// moves an offset; the storage is compacted once the dropped part
/// outgrows the live one. Reads go through the slice of live entries.
#[derive(Debug, Clone)]
pub struct Window<T> {
    v: Vec<T>,
    head: usize,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            v: Vec::new(),
            head: 0,
        }
    }
}

impl<T> Window<T> {
    /// Live entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.v.len() - self.head
    }

    /// Whether no entry is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The live entries, oldest first.
    #[inline]
    pub fn slice(&self) -> &[T] {
        &self.v[self.head..]
    }

    /// The live entries, oldest first.
    #[inline]
    pub fn slice_mut(&mut self) -> &mut [T] {
        &mut self.v[self.head..]
    }

    /// Appends an entry.
    #[inline]
    pub fn push(&mut self, x: T) {
        self.v.push(x);
    }

    /// Inserts an entry before the `k`-th live one.
    #[inline]
    pub fn insert(&mut self, k: usize, x: T) {
        self.v.insert(self.head + k, x);
    }

    /// Drops the oldest entry.
    pub fn pop_front(&mut self) {
        self.drop_front(1);
    }

    /// Drops the `n` oldest entries (all of them, if fewer).
    pub fn drop_front(&mut self, n: usize) {
        self.head += n.min(self.len());
        if self.head == self.v.len() {
            self.v.clear();
            self.head = 0;
        } else if self.head >= 32 && 2 * self.head >= self.v.len() {
            self.v.drain(..self.head);
            self.head = 0;
        }
    }
}

impl<T: Clone + Default> Window<T> {
    /// Grows the window to at least `n` entries, the new ones default.
    #[inline]
    pub fn ensure(&mut self, n: usize) {
        if self.len() < n {
            self.v.resize(self.head + n, T::default());
        }
    }
}

impl<T> std::ops::Deref for Window<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.slice()
    }
}

/// Drops the intervals of `v` (the first being number `start`) that end
/// before interval `b` starts, keeping the one just before it.
fn forget_before<T>(v: &mut Window<T>, start: &mut u64, b: u64) {
    if *start + 1 < b {
        let n = (b - 1 - *start).min(v.len() as u64);
        v.drop_front(n as usize);
        *start += n;
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
    by_bucket: Divisor,
    by_cap: Divisor,
    start: u64,
    /// Every interval before this one is full.
    first_open: u64,
    /// Units booked in each interval from `start` on (at most `cap`,
    /// which fits 32 bits: half the memory of wider counts).
    used: Window<u32>,
    busy: u64,
    last_done: u64,
    /// The service time of the amount reserved last: most callers
    /// reserve the same amount every time.
    service: std::cell::Cell<(u64, u64)>,
    /// What [`Calendar::peek`] found last, where one interval took the
    /// whole amount, while nothing has been booked since: a reservation
    /// of the same amount at the same time (a caller that peeks first)
    /// books that interval without walking to it again.
    peeked: std::cell::Cell<Option<Peeked>>,
}

/// A [`Calendar::peek`] whose amount fits one interval.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Peeked {
    t: u64,
    amount: u64,
    /// The interval (from the calendar's `start`) that takes the amount.
    k: usize,
    /// What the reservation returns.
    done: u64,
}

impl Calendar {
    /// A free resource of `cap` units per `bucket_ps` picoseconds (`cap`
    /// at most `u32::MAX`; more is taken as that).
    pub fn new(bucket_ps: u64, cap: u64) -> Calendar {
        let cap = cap.clamp(1, u32::MAX as u64);
        Calendar {
            bucket_ps: bucket_ps.max(1),
            cap,
            by_bucket: Divisor::new(bucket_ps),
            by_cap: Divisor::new(cap),
            start: 0,
            first_open: 0,
            used: Window::default(),
            busy: 0,
            last_done: 0,
            service: std::cell::Cell::new((0, 0)),
            peeked: std::cell::Cell::new(None),
        }
    }

    /// The time `amount` units take alone: `amount` intervals' worth of
    /// capacity, rounded up to a picosecond.
    #[inline]
    fn service(&self, amount: u64) -> u64 {
        let (a, s) = self.service.get();
        if a == amount {
            return s;
        }
        let s = self.by_cap.div_ceil(amount * self.bucket_ps);
        self.service.set((amount, s));
        s
    }

    /// Reserves `amount` units at or after `t`; returns when the last of
    /// them is done.
    pub fn reserve(&mut self, t: u64, amount: u64) -> u64 {
        self.busy += amount;
        let cap = self.cap;
        let done = match self.peeked.take() {
            Some(p) if p.t == t && p.amount == amount => {
                self.used.ensure(p.k + 1);
                self.used.slice_mut()[p.k] += amount as u32;
                p.done
            }
            _ => self.walk(t, amount),
        };
        // Skip past the intervals that are now full.
        let f0 = (self.first_open - self.start) as usize;
        let used = self.used.slice();
        // (`cap` fits 32 bits: `Calendar::new`.)
        if used.get(f0).is_some_and(|&x| x as u64 >= cap) {
            let f = f0 + first_below(&used[f0..], cap as u32);
            self.first_open = self.start + f as u64;
        }
        self.last_done = self.last_done.max(done);
        done
    }

    /// Books `amount` units from the first interval at or after `t` with
    /// room on; returns when the last of them is done.
    #[inline]
    fn walk(&mut self, t: u64, amount: u64) -> u64 {
        let (b, cap) = (self.bucket_ps, self.cap);
        let mut left = amount;
        // (`first_open` is never before `start`.)
        let mut i = self.by_bucket.div(t).max(self.first_open);
        let mut k = (i - self.start) as usize;
        self.used.ensure(k + 1);
        let done = 'walk: loop {
            let used = self.used.slice_mut();
            while k < used.len() {
                let u = &mut used[k];
                let take = (cap - *u as u64).min(left);
                *u += take as u32;
                left -= take;
                if left == 0 {
                    // Done when this interval has done everything booked in
                    // it (as if served in order within the interval) and no
                    // sooner than the request's own service time after `t`.
                    let fill = self.by_cap.div_ceil(*u as u64 * b);
                    break 'walk (i * b + fill).max(t + self.service(amount));
                }
                i += 1;
                k += 1;
            }
            // Past the intervals booked so far: the rest are free, and
            // this many of them take what is left.
            self.used.ensure(k + left.div_ceil(cap) as usize);
        };
        done
    }

    /// What [`Calendar::reserve`] would return for `amount` units at or
    /// after `t`, without reserving them.
    pub fn peek(&self, t: u64, amount: u64) -> u64 {
        let (b, cap) = (self.bucket_ps, self.cap);
        let mut left = amount;
        let mut i = self.by_bucket.div(t).max(self.first_open);
        let used = self.used.slice();
        let mut k = (i - self.start) as usize;
        loop {
            let u = used.get(k).copied().unwrap_or(0) as u64;
            let take = (cap - u).min(left);
            left -= take;
            if left == 0 {
                let fill = self.by_cap.div_ceil((u + take) * b);
                let done = (i * b + fill).max(t + self.service(amount));
                // The intervals before this one took nothing (they are
                // full): a reservation books this one alone.
                if take == amount {
                    self.peeked.set(Some(Peeked { t, amount, k, done }));
                }
                return done;
            }
            i += 1;
            k += 1;
        }
    }

    /// Forgets intervals that end before `t` (reservations earlier than
    /// that are then placed at the oldest interval kept).
    pub fn advance(&mut self, t: u64) {
        self.peeked.set(None);
        forget_before(&mut self.used, &mut self.start, self.by_bucket.div(t));
        self.first_open = self.first_open.max(self.start);
    }

    /// Units booked in the intervals from the one holding `t` to the one
    /// holding `t + horizon`: the work queued ahead of a request arriving
    /// at `t`, as far as it can matter to it.
    pub fn booked_within(&self, t: u64, horizon: u64) -> u64 {
        let i = self.by_bucket.div(t).max(self.start);
        let j = self.by_bucket.div(t + horizon).max(i);
        let k = (i - self.start) as usize;
        let used = self.used.slice();
        let end = (k + (j - i + 1) as usize).min(used.len());
        used.get(k..end)
            .map_or(0, |r| r.iter().map(|&u| u as u64).sum())
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

/// The index of the first count below `k` in `h` (`h.len()` if none):
/// the first interval with room, of a pool or a calendar. Scanned a block
/// of 16 at a time (a test the host does for the whole block at once), as
/// a saturated pool's full intervals run for hundreds.
#[inline]
fn first_below<T: Copy + PartialOrd>(h: &[T], k: T) -> usize {
    const B: usize = 16;
    let mut base = 0;
    for c in h.chunks_exact(B) {
        if c.iter().fold(false, |any, &n| any | (n < k)) {
            break;
        }
        base += B;
    }
    base + h[base..].iter().take_while(|&&n| n >= k).count()
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
///
/// A hold spans many intervals (a line's whole trip to memory and back:
/// 50 to 200 on average in the C1060 and H200 stride runs), but a request
/// looks at the intervals near its own time, mostly finding room in the
/// first. So the intervals up to the furthest one an acquisition has
/// reached keep their count of holders, and those after keep only how the
/// count changes from the one before: a release adds one to the counts it
/// covers there, and marks where it starts and ends past them, whatever
/// its length. An interval's changes are added into its count once, when
/// an acquisition first reaches it ([`Pool::free_at`], which changes
/// nothing, adds them up as it goes). The answers are those of a count
/// kept for every interval.
#[derive(Debug, Clone)]
pub struct Pool {
    bucket_ps: u64,
    by_bucket: Divisor,
    k: u32,
    start: u64,
    /// Every interval before this one is full.
    first_open: u64,
    /// One entry for each interval from `start` on: before `counted`, its
    /// holders; from `counted` on, its holders less those of the interval
    /// before, by the holds not yet counted. 32 bits, wrapping, as a
    /// change may be negative and a count pass [`MAX_ENTRIES`]: the counts
    /// are exact while fewer than 2^32 holds cover one interval (which
    /// takes as many releases), so one with [`MAX_ENTRIES`] or more is
    /// full whatever the pool's size.
    held: Window<u32>,
    /// How many of `held`'s entries are counts.
    counted: usize,
    /// The holders, by holds not yet counted, of the interval just before
    /// `counted`: what its first change adds to.
    carry: u32,
    /// Sum over acquisitions of the time spent waiting for an entry, ps.
    wait_ps: u64,
}

/// The most entries a [`Pool`] has (configs that size a pool check
/// against it).
pub const MAX_ENTRIES: u32 = u16::MAX as u32;

impl Pool {
    /// `k` free entries (at least one, at most [`MAX_ENTRIES`]), counted
    /// in intervals of `bucket_ps` (a fraction of the shortest hold).
    pub fn new(k: u32, bucket_ps: u64) -> Pool {
        Pool {
            bucket_ps: bucket_ps.max(1),
            by_bucket: Divisor::new(bucket_ps),
            k: k.clamp(1, MAX_ENTRIES),
            start: 0,
            first_open: 0,
            held: Window::default(),
            counted: 0,
            carry: 0,
            wait_ps: 0,
        }
    }

    /// Takes an entry for a request ready at `t`; returns when the request
    /// holds it (`t`, or later if every entry is held then). Each acquire
    /// is followed by one [`Pool::release`] with the time returned here.
    pub fn acquire(&mut self, t: u64) -> u64 {
        let i = self.first_to_look_at(t);
        let free = self.count_to_open(i);
        let at = t.max((self.start + free as u64) * self.bucket_ps);
        self.wait_ps += at - t;
        at
    }

    /// The first time at or after `t` at which an entry is free: what
    /// [`Pool::acquire`] would return, without taking it.
    pub fn free_at(&self, t: u64) -> u64 {
        let i = self.first_to_look_at(t);
        let free = self.open_from(i);
        t.max((self.start + free as u64) * self.bucket_ps)
    }

    /// The interval (from `start`) where a request ready at `t` starts
    /// looking for an entry.
    #[inline]
    fn first_to_look_at(&self, t: u64) -> usize {
        let from = self.by_bucket.div(t).max(self.start).max(self.first_open);
        (from - self.start) as usize
    }

    /// Whether interval `i` (from `start`) is counted and has room: most
    /// requests find an entry at once.
    #[inline]
    fn counted_open(&self, i: usize) -> bool {
        i < self.counted && self.held[i] < self.k
    }

    /// The first interval at or after `i` (from `start`) with fewer than
    /// `k` holders, adding up the changes past the counted intervals as it
    /// goes (without keeping the sums: [`Pool::count_to_open`] does).
    #[inline]
    fn open_from(&self, i: usize) -> usize {
        if self.counted_open(i) {
            return i;
        }
        self.open_from_full(i)
    }

    /// [`Pool::open_from`] where interval `i` is full or not counted.
    fn open_from_full(&self, i: usize) -> usize {
        let (h, m) = (self.held.slice(), self.counted);
        if i < m {
            let f = i + first_below(&h[i..m], self.k);
            if f < m {
                return f;
            }
        }
        let mut n = self.carry;
        for (j, &d) in h.iter().enumerate().skip(m) {
            n = n.wrapping_add(d);
            if j >= i && n < self.k {
                return j;
            }
        }
        // None held past the last change.
        i.max(h.len())
    }

    /// [`Pool::open_from`], keeping the counts of the intervals it passes.
    #[inline]
    fn count_to_open(&mut self, i: usize) -> usize {
        if self.counted_open(i) {
            return i;
        }
        self.count_to_open_full(i)
    }

    /// [`Pool::count_to_open`] where interval `i` is full or not counted.
    fn count_to_open_full(&mut self, i: usize) -> usize {
        let m = self.counted;
        if i < m {
            let f = i + first_below(&self.held[i..m], self.k);
            if f < m {
                return f;
            }
        }
        let h = self.held.slice_mut();
        let (mut n, mut j) = (self.carry, m);
        let free = loop {
            let Some(d) = h.get_mut(j) else {
                // None held past the last change.
                break i.max(j);
            };
            n = n.wrapping_add(*d);
            *d = n;
            j += 1;
            if j > i && n < self.k {
                break j - 1;
            }
        };
        (self.counted, self.carry) = (j, n);
        free
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
            (self.by_bucket.div(from) - self.start) as usize,
            (self.by_bucket.div(to - 1) - self.start) as usize,
        );
        let m = self.counted;
        if k1 < m {
            for n in &mut self.held.slice_mut()[k0..=k1] {
                *n = n.wrapping_add(1);
            }
        } else {
            // The counted intervals it covers, then one more holder from
            // the first interval not counted (or its own first) up to its
            // last.
            self.held.ensure(k1 + 2);
            let h = self.held.slice_mut();
            for n in &mut h[k0.min(m)..m] {
                *n = n.wrapping_add(1);
            }
            h[k0.max(m)] = h[k0.max(m)].wrapping_add(1);
            h[k1 + 1] = h[k1 + 1].wrapping_sub(1);
        }
        let f0 = (self.first_open - self.start) as usize;
        if f0 < self.held.len() {
            self.first_open = self.start + self.count_to_open(f0) as u64;
        }
    }

    /// Forgets intervals that end before `t` (requests earlier than that
    /// are then placed at the oldest interval kept).
    pub fn advance(&mut self, t: u64) {
        // The interval just before the one holding `t` is kept.
        let start = self.start.max(self.by_bucket.div(t).saturating_sub(1));
        let n = ((start - self.start) as usize).min(self.held.len());
        if n > self.counted {
            // The changes of forgotten intervals not counted still hold
            // for those kept.
            let d = self.held[self.counted..n]
                .iter()
                .fold(0u32, |s, &d| s.wrapping_add(d));
            self.carry = self.carry.wrapping_add(d);
            self.counted = n;
        }
        self.held.drop_front(n);
        self.counted -= n;
        self.start = start;
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

/// State smaller than this stays in the host's caches (its L2 holds 512
/// KiB to 2 MiB per core on current x86-64 and Arm servers): prefetching
/// it before a lookup only costs instructions, and the models skip it.
pub const HOST_CACHE_BYTES: u64 = 1 << 20;

/// Hints the host CPU to bring `slice` into its caches (x86-64; nothing
/// elsewhere). Changes no state. The models use it to overlap the host's
/// memory latency with work before a lookup.
#[inline]
pub fn prefetch_range<T>(slice: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = slice.as_ptr() as usize;
        let end = start + std::mem::size_of_val(slice);
        let mut p = start & !63;
        while p < end {
            // SAFETY: prefetching is a hint; it never faults and reads nothing
            // observable, and the addresses lie inside `slice`.
            unsafe {
                std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
            }
            p += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slice;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pool as it was before it kept changes past the intervals
    /// looked at: a count of holders for every interval, each release
    /// adding to every interval it covers. The reference that
    /// [`Pool`]'s answers are checked against.
    #[derive(Debug, Clone)]
    struct PlainPool {
        bucket_ps: u64,
        k: u16,
        start: u64,
        first_open: u64,
        holders: Window<u16>,
        wait_ps: u64,
    }

    impl PlainPool {
        fn new(k: u32, bucket_ps: u64) -> PlainPool {
            PlainPool {
                bucket_ps: bucket_ps.max(1),
                k: k.clamp(1, MAX_ENTRIES) as u16,
                start: 0,
                first_open: 0,
                holders: Window::default(),
                wait_ps: 0,
            }
        }

        fn acquire(&mut self, t: u64) -> u64 {
            let at = self.free_at(t);
            self.wait_ps += at - t;
            at
        }

        fn free_at(&self, t: u64) -> u64 {
            let from = (t / self.bucket_ps).max(self.start).max(self.first_open);
            let k = (from - self.start) as usize;
            let free = k + first_below(self.holders.get(k..).unwrap_or(&[]), self.k);
            t.max((self.start + free as u64) * self.bucket_ps)
        }

        fn release(&mut self, from: u64, to: u64) {
            let b = self.bucket_ps;
            let from = from.max(self.start * b);
            let to = to.max(from + 1);
            let (k0, k1) = (
                (from / b - self.start) as usize,
                ((to - 1) / b - self.start) as usize,
            );
            self.holders.ensure(k1 + 1);
            for n in &mut self.holders.slice_mut()[k0..=k1] {
                *n = n.saturating_add(1);
            }
            let f0 = (self.first_open - self.start) as usize;
            let h = self.holders.slice();
            if h.get(f0).is_some_and(|&n| n >= self.k) {
                let f = f0 + first_below(&h[f0..], self.k);
                self.first_open = self.start + f as u64;
            }
        }

        fn advance(&mut self, t: u64) {
            forget_before(&mut self.holders, &mut self.start, t / self.bucket_ps);
            self.first_open = self.first_open.max(self.start);
        }
    }

    /// One step of a pool's use, for [`pool_answers_as_the_plain_pool`]:
    /// times are offsets from a moving "now", so that requests arrive both
    /// in and out of time order and the pool forgets intervals as they
    /// pass.
    #[derive(Debug, Clone)]
    enum PoolStep {
        /// Acquire at now + the offset, release after the hold.
        Hold(u64, u64),
        /// Acquire at now + the offset; the release comes `n` steps later
        /// (or at the end).
        Late(u64, u64, usize),
        /// Ask when an entry is free at now + the offset.
        FreeAt(u64),
        /// Move now forward and forget the intervals before it.
        Advance(u64),
    }

    fn pool_step() -> impl Strategy<Value = PoolStep> {
        prop_oneof![
            4 => (0u64..3000, 1u64..2000).prop_map(|(t, d)| PoolStep::Hold(t, d)),
            2 => (0u64..3000, 1u64..5000, 0usize..20).prop_map(|(t, d, n)| PoolStep::Late(t, d, n)),
            2 => (0u64..4000).prop_map(PoolStep::FreeAt),
            1 => (0u64..1500).prop_map(PoolStep::Advance),
        ]
    }

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

    /// Holders beyond the count's range leave an interval full: a pool of
    /// the largest size held more times over than that still makes a
    /// request wait.
    #[test]
    fn pool_stays_full_beyond_its_largest_count() {
        let mut p = Pool::new(MAX_ENTRIES + 10, 10);
        assert_eq!(p.size(), MAX_ENTRIES);
        for _ in 0..MAX_ENTRIES as u64 + 5 {
            p.release(0, 100);
        }
        assert_eq!(p.free_at(0), 100);
        assert_eq!(p.free_at(55), 100);
        assert_eq!(p.free_at(100), 100);
    }

    /// Beyond the largest count, intervals counted and intervals not yet
    /// counted answer as the plain pool's saturated counts do.
    #[test]
    fn pool_past_its_largest_count_answers_as_the_plain_pool() {
        let (mut p, mut plain) = (Pool::new(MAX_ENTRIES, 10), PlainPool::new(MAX_ENTRIES, 10));
        // An acquisition at 50 ps counts the intervals up to its own.
        for (from, to) in [(0, 60), (50, 60)] {
            assert_eq!(p.acquire(from), plain.acquire(from));
            p.release(from, to);
            plain.release(from, to);
        }
        assert_eq!(p.counted, 6);
        for _ in 0..MAX_ENTRIES as u64 + 5 {
            // Over intervals 0-5, counted, and 6-9, not yet.
            p.release(0, 100);
            plain.release(0, 100);
        }
        for t in (0..200).step_by(5) {
            assert_eq!(p.free_at(t), plain.free_at(t), "{t}");
        }
        for t in [0, 30, 70, 120] {
            assert_eq!(p.acquire(t), plain.acquire(t), "{t}");
        }
        assert_eq!(p.wait_ps(), plain.wait_ps);
    }

    /// Divisors with a path of their own (1, powers of two) and the
    /// dividends at the ends of the multiplication's range.
    #[test]
    fn divisor_is_exact_at_its_edges() {
        for d in [1, 2, 3, 64, 96, 1 << 20, (1 << 40) + 1, 1 << 63, u64::MAX] {
            let q = Divisor::new(d);
            let lim = u64::MAX / d;
            for n in [
                0,
                1,
                d - 1,
                d,
                lim.saturating_sub(1),
                lim,
                lim.saturating_add(1),
                u64::MAX,
            ] {
                assert_eq!(q.div(n), n / d, "{n} / {d}");
                assert_eq!(q.rem(n), n % d, "{n} % {d}");
                assert_eq!(q.div_ceil(n), n.div_ceil(d), "{n} div_ceil {d}");
            }
        }
    }

    proptest! {
        /// The divisor's quotients are the hardware division's.
        #[test]
        fn divisor_is_exact(d in 1u64..1 << 40, n in any::<u64>(), small in 0u64..1 << 50) {
            let q = Divisor::new(d);
            for n in [n, small, n >> 20, d * (small % 1000), d * (small % 1000) + d - 1] {
                prop_assert_eq!(q.div(n), n / d);
                prop_assert_eq!(q.rem(n), n % d);
                prop_assert_eq!(q.div_ceil(n), n.div_ceil(d));
            }
        }

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

        /// Peeking tells what reserving gives, and books nothing.
        #[test]
        fn calendar_peek_is_reserve_without_booking(reqs in prop::collection::vec((0u64..5000, 1u64..40), 1..100),
                                                    bucket in 1u64..200, cap in 1u64..50) {
            let mut c = Calendar::new(bucket, cap);
            for (t, a) in reqs {
                let p = c.peek(t, a);
                prop_assert_eq!(c.peek(t, a), p);
                prop_assert_eq!(c.reserve(t, a), p);
            }
        }

        /// A reservation after a peek at the same time and amount (which
        /// books the interval the peek found) gives what one without the
        /// peek gives, and leaves the calendar the same, whatever was
        /// peeked at, reserved or forgotten between.
        #[test]
        fn reserving_what_was_peeked_books_as_reserving_alone(
            reqs in prop::collection::vec((0u64..5000, 0u64..40, 0u8..4, 0u64..5000), 1..200),
            bucket in 1u64..200, cap in 1u64..50,
        ) {
            let (mut plain, mut peeking) = (Calendar::new(bucket, cap), Calendar::new(bucket, cap));
            for (t, a, how, other) in reqs {
                match how {
                    // Peek at this, or at another, first.
                    0 => { peeking.peek(t, a); }
                    1 => { peeking.peek(other, a); peeking.peek(t, a); }
                    2 => { peeking.peek(t, a); peeking.peek(other, a + 1); }
                    _ => {
                        plain.advance(other);
                        peeking.peek(t, a);
                        peeking.advance(other);
                    }
                }
                prop_assert_eq!(peeking.reserve(t, a), plain.reserve(t, a));
                prop_assert_eq!(peeking.used.slice(), plain.used.slice());
                prop_assert_eq!((peeking.start, peeking.first_open, peeking.busy, peeking.last_done),
                                (plain.start, plain.first_open, plain.busy, plain.last_done));
            }
        }

        /// The blocked scan finds what a plain one finds.
        #[test]
        fn first_below_is_the_plain_scan(h in prop::collection::vec(0u16..6, 0..80), k in 0u16..7) {
            let plain = h.iter().take_while(|&&n| n >= k).count();
            prop_assert_eq!(first_below(&h, k), plain);
        }

        /// The pool gives the answers of the plain one (a count for every
        /// interval) whatever the order of requests, their holds, and the
        /// intervals forgotten: the same times, the same waits.
        #[test]
        fn pool_answers_as_the_plain_pool(steps in prop::collection::vec(pool_step(), 1..300),
                                          k in 1u32..12, bucket in 1u64..300, back in 0u64..2000) {
            let (mut p, mut plain) = (Pool::new(k, bucket), PlainPool::new(k, bucket));
            let mut now = 0;
            let mut late: Vec<(usize, u64, u64)> = Vec::new();
            for (n, step) in steps.into_iter().enumerate() {
                // Releases whose time has come, in the order they were due.
                while let Some(i) = late.iter().position(|&(due, _, _)| due <= n) {
                    let (_, at, end) = late.remove(i);
                    p.release(at, end);
                    plain.release(at, end);
                }
                match step {
                    PoolStep::Hold(dt, hold) | PoolStep::Late(dt, hold, 0) => {
                        // Some requests come from before the intervals kept.
                        let t = (now + dt).saturating_sub(back);
                        let at = p.acquire(t);
                        prop_assert_eq!(at, plain.acquire(t));
                        p.release(at, at + hold);
                        plain.release(at, at + hold);
                    }
                    PoolStep::Late(dt, hold, after) => {
                        let t = now + dt;
                        let at = p.acquire(t);
                        prop_assert_eq!(at, plain.acquire(t));
                        late.push((n + after, at, at + hold));
                    }
                    PoolStep::FreeAt(dt) => {
                        let t = (now + dt).saturating_sub(back);
                        prop_assert_eq!(p.free_at(t), plain.free_at(t));
                    }
                    PoolStep::Advance(dt) => {
                        now += dt;
                        p.advance(now);
                        plain.advance(now);
                    }
                }
                prop_assert_eq!(p.first_open, plain.first_open);
                prop_assert_eq!(p.start, plain.start);
                // The intervals counted hold the plain pool's counts.
                for (j, &n) in p.held[..p.counted].iter().enumerate() {
                    let plain_n = plain.holders.get(j).copied().unwrap_or(0);
                    prop_assert!(n == plain_n as u32 || (plain_n == u16::MAX && n > plain_n as u32));
                }
                prop_assert_eq!(p.wait_ps(), plain.wait_ps);
            }
            for (_, at, end) in late {
                p.release(at, end);
                plain.release(at, end);
            }
            for t in (now.saturating_sub(back)..now + 8000).step_by(97) {
                prop_assert_eq!(p.free_at(t), plain.free_at(t));
            }
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

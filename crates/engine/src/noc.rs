//! The interconnect between the SMs and the L2 slices (or, on cards
//! without an L2 for global data, the memory controllers).
//!
//! ```text
//!   SM[i] ── request port (header + store data) ──▶ hop ──▶ L2 slice / controller
//!   SM[i] ◀─ response port (header + load data, acks) ◀── hop ◀──
//! ```
//!
//! Each SM has one port per direction; each carries at most
//! `sm_port_bytes_per_cycle` bytes per SM cycle, so the peak of each
//! direction is `sm.count x sm_port_bytes_per_cycle x clock`. Every packet
//! carries `header_bytes` of address and control. `hop` is the one-way
//! latency (half the unloaded L2 hit latency, or half the path through the
//! memory controller where there is no L2).
//!
//! With `in_order_replies` (a what-if; no shipped config sets it), an SM
//! takes in the data of its loads in the order it sent them: a load's data
//! enters the SM no sooner than the data of the loads sent before it, so
//! an L2 hit sent after a miss waits for the miss. Acknowledgements of
//! stores are not ordered with them. The H200's hits wait for their SM's
//! misses less than this, and its misses not for each other
//! (`tools/measure/sides`, DEVIATIONS.md 29).

use crate::spec::DeviceSpec;
use timing::Calendar;

/// Both directions of every SM's port.
#[derive(Debug, Clone)]
pub struct Noc {
    req: Vec<Calendar>,
    resp: Vec<Calendar>,
    hop_ps: u64,
    header: u64,
    /// Per SM, when the data of the last load it sent entered it, where
    /// replies to loads enter in order (`in_order_replies`).
    load_front: Option<Vec<u64>>,
}

impl Noc {
    /// Idle ports; `hop_ps` is the one-way latency.
    pub fn new(dev: &DeviceSpec, hop_ps: u64) -> Noc {
        let cy = dev.cycle_ps();
        // 32-cycle intervals; the interval is rounded up and the capacity
        // down, so a port is never modelled faster than its peak.
        let bucket = (32.0 * cy).ceil() as u64;
        let cap = (dev.interconnect.sm_port_bytes_per_cycle * 32.0).floor() as u64;
        let port = Calendar::new(bucket, cap.max(1));
        let n = dev.sm.count as usize;
        Noc {
            req: vec![port.clone(); n],
            resp: vec![port; n],
            hop_ps,
            header: dev.interconnect.header_bytes as u64,
            load_front: dev.interconnect.in_order_replies.then(|| vec![0; n]),
        }
    }

    /// Sends a packet with `payload` bytes from SM `sm` at `t`; returns its
    /// arrival at the far end.
    pub fn send(&mut self, sm: usize, t: u64, payload: u64) -> u64 {
        self.req[sm].reserve(t, self.header + payload) + self.hop_ps
    }

    /// Returns a packet with `payload` bytes to SM `sm`, leaving the far end
    /// at `t`; returns when it has entered the SM.
    pub fn reply(&mut self, sm: usize, t: u64, payload: u64) -> u64 {
        self.resp[sm].reserve(t + self.hop_ps, self.header + payload)
    }

    /// Returns a load's data (`payload` bytes) to SM `sm`, leaving the far
    /// end at `t`; returns when it has entered the SM: with in-order
    /// replies, no sooner than the data of the loads the SM sent before.
    pub fn reply_load(&mut self, sm: usize, t: u64, payload: u64) -> u64 {
        let d = self.reply(sm, t, payload);
        match &mut self.load_front {
            Some(front) => {
                let d = d.max(front[sm]);
                front[sm] = d;
                d
            }
            None => d,
        }
    }

    /// Forgets port intervals before `t`.
    pub fn advance(&mut self, t: u64) {
        for c in self.req.iter_mut().chain(self.resp.iter_mut()) {
            c.advance(t);
        }
    }

    /// Bytes carried so far in each direction (requests, responses).
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.req.iter().map(|c| c.busy()).sum(),
            self.resp.iter().map(|c| c.busy()).sum(),
        )
    }

    /// The latest time any port is busy.
    pub fn last_done(&self) -> u64 {
        self.req
            .iter()
            .chain(self.resp.iter())
            .map(|c| c.last_done())
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_carries_at_most_its_peak_and_headers_count() {
        let d = crate::load_device(&std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/c2050.ron"
        )))
        .unwrap();
        let mut n = Noc::new(&d, 0);
        let mut last = 0;
        for _ in 0..1000 {
            last = n.send(0, 0, 128);
        }
        let (req, resp) = n.bytes();
        assert_eq!((req, resp), (1000 * (128 + 8), 0));
        let peak_bytes_per_ps = d.interconnect.sm_port_bytes_per_cycle / d.cycle_ps();
        assert!(req as f64 <= peak_bytes_per_ps * last as f64 * (1.0 + 1e-9));
    }

    #[test]
    fn in_order_replies_make_a_hit_wait_for_a_miss_sent_before_it() {
        let dev = |in_order: bool| {
            let mut d = crate::load_device(&std::path::PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../configs/h200.ron"
            )))
            .unwrap();
            d.interconnect.in_order_replies = in_order;
            d
        };
        for in_order in [false, true] {
            let mut n = Noc::new(&dev(in_order), 0);
            // SM 0 sends a miss (its data leaves the L2 at 1,000,000 ps),
            // then a hit (ready at 300,000 ps); SM 1 sends only a hit.
            let miss = n.reply_load(0, 1_000_000, 128);
            let hit = n.reply_load(0, 300_000, 128);
            let other = n.reply_load(1, 300_000, 128);
            assert!(miss >= 1_000_000 && other < 1_000_000);
            assert_eq!(hit >= miss, in_order, "in order: {in_order}");
            // Acknowledgements are not ordered with loads.
            assert!(n.reply(0, 300_000, 0) < miss);
        }
    }
}

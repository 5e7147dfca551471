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
//! `reply_order` says whether an SM takes in the data of its loads in the
//! order it sent them: `Any` (as it arrives), `AfterPrevious` (no sooner
//! than the data of the load sent just before it) or `Strict` (no sooner
//! than that of every load sent before it), so that an L2 hit sent after a
//! miss waits for the miss. Acknowledgements of stores are not ordered
//! with them (`tools/measure/sides`, DEVIATIONS.md 29).

use crate::spec::{DeviceSpec, ReplyOrder};
use timing::Calendar;

/// Both directions of every SM's port.
#[derive(Debug, Clone)]
pub struct Noc {
    req: Vec<Calendar>,
    resp: Vec<Calendar>,
    hop_ps: u64,
    header: u64,
    order: ReplyOrder,
    /// Per SM, when the data of the last load it sent arrived
    /// (`AfterPrevious`) or entered it (`Strict`).
    last_load: Vec<u64>,
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
            order: dev.interconnect.reply_order,
            last_load: vec![0; n],
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
    /// end at `t`; returns when it has entered the SM, after the data of
    /// the loads sent before it as the reply order says.
    pub fn reply_load(&mut self, sm: usize, t: u64, payload: u64) -> u64 {
        let d = self.reply(sm, t, payload);
        match self.order {
            ReplyOrder::Any => d,
            ReplyOrder::AfterPrevious => d.max(std::mem::replace(&mut self.last_load[sm], d)),
            ReplyOrder::Strict => {
                let d = d.max(self.last_load[sm]);
                self.last_load[sm] = d;
                d
            }
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
    fn a_reply_order_makes_a_hit_wait_for_a_miss_sent_before_it() {
        let dev = |order: ReplyOrder| {
            let mut d = crate::load_device(&std::path::PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../configs/h200.ron"
            )))
            .unwrap();
            d.interconnect.reply_order = order;
            d
        };
        for order in [
            ReplyOrder::Any,
            ReplyOrder::AfterPrevious,
            ReplyOrder::Strict,
        ] {
            let mut n = Noc::new(&dev(order), 0);
            // SM 0 sends a miss (its data leaves the L2 at 1,000,000 ps),
            // then two hits (ready at 300,000 ps); SM 1 sends only a hit.
            let miss = n.reply_load(0, 1_000_000, 128);
            let hit = n.reply_load(0, 300_000, 128);
            let next = n.reply_load(0, 300_000, 128);
            let other = n.reply_load(1, 300_000, 128);
            assert!(miss >= 1_000_000 && other < 1_000_000);
            assert_eq!(hit >= miss, order != ReplyOrder::Any, "{order:?}");
            assert_eq!(next >= miss, order == ReplyOrder::Strict, "{order:?}");
            // Acknowledgements are not ordered with loads.
            assert!(n.reply(0, 300_000, 0) < miss);
        }
    }
}

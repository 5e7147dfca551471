//! A progress bar on stderr for runs longer than about a second.
//!
//! The bar stays hidden for the first second (short runs print nothing),
//! and is never shown when stderr is not a terminal or with `--quiet`. It is
//! cleared before the table is printed, so the two never mix.

use crossbeam_channel::{bounded, Sender};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

pub struct Progress {
    bar: ProgressBar,
    stop: Option<Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn start(total: u64, quiet: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if quiet || !std::io::stderr().is_terminal() {
            return Progress {
                bar,
                stop: None,
                thread: None,
            };
        }
        // No estimate of the time left before a point has finished: it
        // would say 0 s while the first, perhaps long, point runs.
        bar.set_style(style(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} points",
        ));
        let (tx, rx) = bounded::<()>(1);
        let b = bar.clone();
        let thread = std::thread::spawn(move || {
            // Show the bar only if the run is still going after a second.
            if rx.recv_timeout(Duration::from_secs(1)).is_err() {
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(Duration::from_millis(200));
                let _ = rx.recv();
            }
        });
        Progress {
            bar,
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    pub fn inc(&self) {
        self.bar.inc(1);
        if self.bar.position() == 1 {
            self.bar.set_style(style(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} points (ETA {eta})",
            ));
        }
    }

    /// Changes the number of points to run (e.g. once a resumed run knows
    /// how many are left).
    pub fn set_total(&self, total: u64) {
        self.bar.set_length(total);
    }

    /// A line on stderr, above the bar when it is shown.
    pub fn println(&self, msg: &str) {
        if self.bar.is_hidden() {
            eprintln!("{msg}");
        } else {
            self.bar.println(msg);
        }
    }

    pub fn finish(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

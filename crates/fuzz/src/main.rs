//! `gpusim-fuzz`: runs a fuzz campaign over gpusim's inputs.
//!
//! ```text
//! gpusim-fuzz [TARGET|all] [ITERATIONS] [SEED] [--out DIR] [--timeout-ms MS]
//! ```
//!
//! TARGET is `device`, `workload`, `set`, `expr` or `config-set` (default `all`, each
//! target in turn with ITERATIONS each, default 100000). A panic writes
//! the input to `DIR/panic-TARGET-N.txt` (default `fuzz-findings/`); an
//! input that runs longer than the timeout (default 5000 ms) is written
//! to `DIR/hang-TARGET.txt` and ends the campaign with exit status 2.
//! Run it from the repository root (it reads `configs/` and `workloads/`).

use fuzz::{campaign, Seeds, Target};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut opt = |name: &str| -> Option<String> {
        let i = args.iter().position(|a| a == name)?;
        let v = args.get(i + 1).cloned();
        args.drain(i..(i + 2).min(args.len()));
        v
    };
    let out = PathBuf::from(opt("--out").unwrap_or_else(|| "fuzz-findings".into()));
    let timeout_ms: u64 = opt("--timeout-ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let targets: Vec<Target> = match args.first().map(String::as_str) {
        None | Some("all") => Target::ALL.to_vec(),
        Some(t) => match Target::from_name(t) {
            Some(t) => vec![t],
            None => {
                eprintln!("unknown target `{t}` (device, workload, set, expr, config-set or all)");
                std::process::exit(1);
            }
        },
    };
    let iters: u64 = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let seed: u64 = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(1);
    let seeds = Seeds::from_repo(&PathBuf::from("."));
    if seeds.devices.is_empty() || seeds.workloads.is_empty() {
        eprintln!("no configs/ or workloads/ here: run from the repository root");
        std::process::exit(1);
    }
    std::fs::create_dir_all(&out).expect("findings folder");
    std::panic::set_hook(Box::new(|_| {}));

    // The watchdog: the input being run and when it started.
    let current: Arc<Mutex<(String, String)>> = Arc::default();
    let started = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    {
        let (current, started, out) = (current.clone(), started.clone(), out.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let t0 = started.load(Ordering::Relaxed);
            let now = epoch.elapsed().as_millis() as u64;
            // (t0 is set 1 ms ahead, so `now` may be just below it.)
            if t0 > 0 && now.saturating_sub(t0) > timeout_ms {
                let (name, input) = current.lock().map(|c| c.clone()).unwrap_or_default();
                let f = out.join(format!("hang-{name}.txt"));
                let _ = std::fs::write(&f, input);
                eprintln!("an input ran over {timeout_ms} ms: {}", f.display());
                std::process::exit(2);
            }
        });
    }

    let mut total = 0;
    let mut failed = false;
    for t in targets {
        let t0 = Instant::now();
        let st = campaign(t, &seeds, iters, seed, 100, &mut |input| {
            if let Ok(mut c) = current.lock() {
                *c = (t.name().to_string(), input.to_string());
            }
            started.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        });
        started.store(0, Ordering::Relaxed);
        for (i, (input, msg)) in st.panics.iter().enumerate() {
            let f = out.join(format!("panic-{}-{i}.txt", t.name()));
            let _ = std::fs::write(&f, format!("{input}\n\n// panic: {msg}\n"));
            eprintln!("panic ({msg}): {}", f.display());
        }
        failed |= !st.panics.is_empty();
        total += st.execs;
        println!(
            "{:<8} {:>10} executions, {:>9} accepted, {} panics, {:.1} s ({:.0}/s)",
            t.name(),
            st.execs,
            st.accepted,
            st.panics.len(),
            t0.elapsed().as_secs_f64(),
            st.execs as f64 / t0.elapsed().as_secs_f64()
        );
    }
    println!("total    {total:>10} executions");
    if failed {
        std::process::exit(1);
    }
}

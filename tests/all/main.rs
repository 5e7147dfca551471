//! End-to-end tests: one test binary, one module per concern.

mod cli;
mod functional;
mod hostile;
mod laws;
mod plot;
mod reference;
mod sampling;
mod seed_rules;
mod shapes;
mod shared;
mod sweep;
mod validate;
mod whatif;

use engine::{DeviceSpec, LoadedWorkload, PointResult};
use std::path::PathBuf;

/// A path inside the repository.
pub fn repo(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
}

pub fn device(name: &str) -> DeviceSpec {
    engine::load_device(&repo(&format!("configs/{name}.ron"))).expect("config loads")
}

pub fn workload(name: &str) -> LoadedWorkload {
    engine::load_workload(&repo(&format!("workloads/{name}.ron"))).expect("workload loads")
}

/// Runs `wl` on `dev` with parameters pinned by `sets`.
pub fn run(dev: &DeviceSpec, wl: &LoadedWorkload, sets: &[(&str, &[i64])]) -> Vec<PointResult> {
    let sets: Vec<(String, Vec<i64>)> = sets
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_vec()))
        .collect();
    let points = wl.points(&sets).expect("points");
    engine::run_sweep(std::slice::from_ref(dev), wl, &points, &|| {}).expect("runs")
}

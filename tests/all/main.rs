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

/// A directory of the test's own under the system's temporary directory,
/// removed with everything in it when dropped (also when the test fails).
/// Each one is new: tests run in parallel in one process.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("gpusim-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temporary directory");
        TempDir(d)
    }
}

/// Reads as its path.
impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file written in a [`TempDir`] of its own, removed with it; it reads
/// as its path.
pub struct TempFile {
    _dir: TempDir,
    path: String,
}

impl TempFile {
    pub fn new(dir: &str, name: &str, contents: impl AsRef<[u8]>) -> TempFile {
        let d = TempDir::new(dir);
        let p = d.join(name);
        std::fs::write(&p, contents).expect("temporary file");
        TempFile {
            path: p.display().to_string(),
            _dir: d,
        }
    }
}

impl std::ops::Deref for TempFile {
    type Target = str;
    fn deref(&self) -> &str {
        &self.path
    }
}

impl AsRef<std::path::Path> for TempFile {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.path)
    }
}

impl AsRef<std::ffi::OsStr> for TempFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        std::ffi::OsStr::new(&self.path)
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

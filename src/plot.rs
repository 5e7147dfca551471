//! Bandwidth plots (SVG, or PNG).

use engine::{DeviceSpec, Diag, PointResult, Workload};
use std::path::Path;

pub fn plot(
    path: &Path,
    _wl: &Workload,
    _devs: &[DeviceSpec],
    _results: &[PointResult],
) -> Result<(), Diag> {
    Err(Diag::msg(format!(
        "{}: plotting is not available yet",
        path.display()
    )))
}

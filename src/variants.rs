//! Device variants from `--config-set`: one device per combination of the
//! overridden fields' values, and the CSV/JSON columns that say which.

use engine::config_set::{combinations, load_device_with, parse_config_set, ConfigSet};
use engine::{DeviceSpec, Diag, PointResult};
use std::collections::BTreeMap;
use std::path::Path;

/// The varied device fields and each variant's values of them.
#[derive(Debug, Default, Clone)]
pub struct Variants {
    /// Field paths, in the order given: one CSV column each.
    pub paths: Vec<String>,
    /// Device (variant) name to its values, in `paths` order.
    pub values: BTreeMap<String, Vec<String>>,
}

impl Variants {
    /// The extra columns of a result (empty for a device without overrides).
    pub fn columns(&self, r: &PointResult) -> Vec<String> {
        match self.values.get(&r.device) {
            Some(v) => v.clone(),
            None => vec![String::new(); self.paths.len()],
        }
    }
}

/// Parses `--config-set` arguments.
pub fn parse(args: &[String]) -> Result<Vec<ConfigSet>, Diag> {
    let sets: Vec<ConfigSet> = args
        .iter()
        .map(|a| parse_config_set(a))
        .collect::<Result<_, _>>()?;
    for (i, s) in sets.iter().enumerate() {
        if sets[..i].iter().any(|t| t.path == s.path) {
            return Err(Diag::msg(format!(
                "--config-set {}: given twice; list the values in one (PATH=V1,V2,...)",
                s.path
            )));
        }
    }
    Ok(sets)
}

/// Loads `file` once per combination of the sets' values (device-major
/// order: the first set varies slowest).
pub fn load(file: &Path, sets: &[ConfigSet], out: &mut Variants) -> Result<Vec<DeviceSpec>, Diag> {
    if out.paths.is_empty() {
        out.paths = sets.iter().map(|s| s.path.clone()).collect();
    }
    let mut devs = Vec::new();
    for combo in combinations(sets) {
        let dev = load_device_with(file, &combo)?;
        if !combo.is_empty() {
            out.values.insert(
                dev.name.clone(),
                combo.iter().map(|(_, v)| v.clone()).collect(),
            );
        }
        devs.push(dev);
    }
    Ok(devs)
}

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
    /// Device (variant) name to the device it derives from.
    pub base: BTreeMap<String, DeviceSpec>,
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
        if let Some(t) = sets[..i].iter().find(|t| nested(&t.path, &s.path)) {
            return Err(Diag::msg(format!(
                "--config-set {} and --config-set {} overlap: {}; set one of them",
                t.path,
                s.path,
                overlap(&t.path, &s.path)
            )));
        }
    }
    Ok(sets)
}

/// Whether one field path lies inside the other (`l2` and `l2.slices`).
fn nested(a: &str, b: &str) -> bool {
    let inside =
        |x: &str, y: &str| y.len() > x.len() && y.starts_with(x) && y[x.len()..].starts_with('.');
    inside(a, b) || inside(b, a)
}

/// Why two nested overrides cannot both hold: the outer value replaces
/// the inner field, or (applied the other way round) has none.
fn overlap(a: &str, b: &str) -> String {
    let (outer, inner) = if a.len() < b.len() { (a, b) } else { (b, a) };
    format!("the value given for `{outer}` is the whole of it, `{inner}` included")
}

/// Field paths and their values, as RON text.
type Overrides = Vec<(String, String)>;

/// A named set of device overrides (a study's `variants`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Named {
    /// Names the variant in the device column and the `variant` column.
    pub name: String,
    /// `PATH=VALUE` overrides, one value each.
    #[serde(default)]
    pub config_set: Vec<String>,
}

/// Loads `file` once per named variant (or once, if there are none) and
/// combination of the sets' values (the variant varies slowest, then the
/// first set).
pub fn load(
    file: &Path,
    named: &[Named],
    sets: &[ConfigSet],
    out: &mut Variants,
) -> Result<Vec<DeviceSpec>, Diag> {
    let mut fixed: Vec<(Option<&str>, Overrides)> = Vec::new();
    for (i, n) in named.iter().enumerate() {
        if named[..i].iter().any(|m| m.name == n.name) {
            return Err(Diag::msg(format!(
                "variant `{}` is named twice: its rows could not be told apart",
                n.name
            )));
        }
        let mut list = Vec::new();
        for a in &n.config_set {
            let c = parse_config_set(a)?;
            if c.values.len() != 1 {
                return Err(Diag::msg(format!(
                    "variant `{}`: --config-set {a}: a variant takes one value per field",
                    n.name
                )));
            }
            if let Some(set) = sets
                .iter()
                .find(|s| s.path == c.path || nested(&s.path, &c.path))
            {
                return Err(Diag::msg(format!(
                    "variant `{}` sets {}, which a --config-set (or the study's `config_set`) \
                     also sets, {}={}: give the field in one place",
                    n.name,
                    c.path,
                    set.path,
                    set.values.join(",")
                )));
            }
            if let Some((p, _)) = list
                .iter()
                .find(|(p, _): &&(String, String)| *p == c.path || nested(p, &c.path))
            {
                return Err(Diag::msg(format!(
                    "variant `{}` sets {p} and {}: give each field once, and not a field \
                     beside the whole that holds it",
                    n.name, c.path
                )));
            }
            list.push((c.path, c.values[0].clone()));
        }
        fixed.push((Some(n.name.as_str()), list));
    }
    if fixed.is_empty() {
        fixed.push((None, Vec::new()));
    }
    if out.paths.is_empty() {
        if !named.is_empty() {
            out.paths.push("variant".into());
        }
        for (_, list) in &fixed {
            for (p, _) in list {
                if !out.paths.contains(p) {
                    out.paths.push(p.clone());
                }
            }
        }
        for s in sets {
            if !out.paths.contains(&s.path) {
                out.paths.push(s.path.clone());
            }
        }
    }
    let base = engine::load_device(file)?;
    let mut devs = Vec::new();
    for (label, list) in &fixed {
        for combo in combinations(sets) {
            let mut all = list.clone();
            all.retain(|(p, _)| !combo.iter().any(|(q, _)| q == p));
            all.extend(combo.iter().cloned());
            let mut dev = load_device_with(file, &all)?;
            if let Some(label) = label {
                let mut shown = vec![(*label).to_string()];
                shown.extend(combo.iter().map(|(p, v)| format!("{p}={v}")));
                dev.name = format!("{}[{}]", base.name, shown.join(" "));
                dev.full_name = format!("{} ({})", base.full_name, shown.join(", "));
            }
            if label.is_some() || !combo.is_empty() {
                let row = out
                    .paths
                    .iter()
                    .map(|p| {
                        if p == "variant" && label.is_some() {
                            return label.unwrap_or_default().to_string();
                        }
                        all.iter()
                            .find(|(q, _)| q == p)
                            .map(|(_, v)| v.clone())
                            .unwrap_or_default()
                    })
                    .collect();
                out.values.insert(dev.name.clone(), row);
                out.base.insert(dev.name.clone(), base.clone());
            }
            devs.push(dev);
        }
    }
    Ok(devs)
}

impl Variants {
    /// Puts the varied device field `path` among the points' parameters (its
    /// values must be integers), so that a plot can use it as its x axis:
    /// each result's device becomes the variant without that field.
    pub fn field_as_param(
        &self,
        path: &str,
        devs: &[DeviceSpec],
        results: &[PointResult],
    ) -> Result<(Vec<DeviceSpec>, Vec<PointResult>), Diag> {
        let k = self.paths.iter().position(|p| p == path).ok_or_else(|| {
            Diag::msg(format!(
                "--plot-x {path}: no such parameter or --config-set"
            ))
        })?;
        let renamed = |name: &str| -> Result<(DeviceSpec, i64), Diag> {
            let (Some(vals), Some(base)) = (self.values.get(name), self.base.get(name)) else {
                return Err(Diag::msg(format!(
                    "--plot-x {path}: device {name} does not vary it"
                )));
            };
            let x = vals[k].parse::<i64>().map_err(|_| {
                Diag::msg(format!(
                    "--plot-x {path}: the value `{}` is not an integer, so it cannot be an axis",
                    vals[k]
                ))
            })?;
            let rest: Vec<(String, String)> = self
                .paths
                .iter()
                .zip(vals)
                .enumerate()
                .filter(|(i, _)| *i != k)
                .map(|(_, (p, v))| (p.clone(), v.clone()))
                .collect();
            let mut d = base.clone();
            d.name = engine::config_set::variant_name(&base.name, &rest);
            if !rest.is_empty() {
                let parts: Vec<String> = rest.iter().map(|(p, v)| format!("{p}={v}")).collect();
                d.full_name = format!("{} ({})", base.full_name, parts.join(", "));
            }
            Ok((d, x))
        };
        let mut new_devs: Vec<DeviceSpec> = Vec::new();
        for d in devs {
            let (nd, _) = renamed(&d.name)?;
            if !new_devs.iter().any(|x| x.name == nd.name) {
                new_devs.push(nd);
            }
        }
        let mut out = Vec::with_capacity(results.len());
        for r in results {
            let (nd, x) = renamed(&r.device)?;
            let mut r = r.clone();
            r.device = nd.name;
            r.point.insert(0, (path.to_string(), x));
            out.push(r);
        }
        Ok((new_devs, out))
    }
}

//! `gpusim study FILE`: a what-if study written down once and rerun with
//! one command: base devices, device fields to vary, workloads and their
//! parameters, and the plot's axis.

use engine::Diag;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub const HELP: &str = "\
A study file (studies/*.ron) is one `Study(...)`:

    Study(
        name: \"c2050-dlcm\",                 // names the outputs: NAME.csv, NAME.svg
        description: \"what it asks\",
        devices: [\"../configs/c2050.ron\"],   // paths are relative to the study file
        variants: [                          // optional: overrides that go together
            (name: \"ca\", config_set: []),
            (name: \"cg\", config_set: [\"load_rule=Lines(bytes: 32)\", \"l1=None\"]),
        ],
        config_set: [\"l2.slice.size_bytes=65536,131072\"],  // optional: as --config-set
        workloads: [\"../workloads/stride.ron\"],
        set: [\"elem=4\", \"stride=1..=32\"],   // as --set
        plot_x: Some(\"stride\"),             // optional: as --plot-x
    )

Without `variants` it runs exactly as

    gpusim run DEVICES... WORKLOADS... --config-set ... --set ... \
        --csv OUT/NAME.csv --plot OUT/NAME.svg [--plot-x X]

would. Each variant (or the device as it is, without variants) combined with each
combination of the config_set values is one device: the CSV has a column `variant` and one
per overridden field, and the device column names it (c2050[cg l2.slice.size_bytes=65536]).
Points run in parallel with a progress bar, and the output does not depend on -j. With
several workloads, one plot per workload (NAME-WORKLOAD.svg).

EXAMPLE:
    gpusim study studies/h100-l2-size.ron --out docs/studies";

/// A study file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename = "Study")]
pub struct Study {
    /// Names the output files.
    pub name: String,
    /// What the study asks.
    #[serde(default)]
    pub description: String,
    /// Device configs, relative to the study file.
    pub devices: Vec<String>,
    /// Named device variants, each a set of single-valued overrides that go
    /// together (e.g. `-dlcm=cg`: 32-byte loads and no L1).
    #[serde(default)]
    pub variants: Vec<crate::variants::Named>,
    /// Device overrides, as `--config-set` takes them.
    #[serde(default)]
    pub config_set: Vec<String>,
    /// Workloads, relative to the study file.
    pub workloads: Vec<String>,
    /// Workload parameters, as `--set` takes them.
    #[serde(default)]
    pub set: Vec<String>,
    /// The plot's x axis, as `--plot-x`.
    #[serde(default)]
    pub plot_x: Option<String>,
}

/// What `gpusim study` runs: the files, resolved, and the output paths.
pub struct Plan {
    pub study: Study,
    pub files: Vec<PathBuf>,
    pub csv: PathBuf,
    pub plot: PathBuf,
}

/// Reads a study and resolves its paths.
pub fn load(path: &Path, out: &Path) -> Result<Plan, Diag> {
    let study: Study = engine::load_ron(path)?;
    let file = path.display().to_string();
    let fail = |field: &str, m: String| Diag {
        file: Some(file.clone()),
        ..Diag::field(field, m)
    };
    if study.name.is_empty()
        || !study
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(fail(
            "name",
            format!(
                "`{}` cannot name files: use letters, digits, `-` and `_`",
                study.name
            ),
        ));
    }
    if study.devices.is_empty() {
        return Err(fail("devices", "no device config listed".into()));
    }
    if study.workloads.is_empty() {
        return Err(fail("workloads", "no workload listed".into()));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut files = Vec::new();
    for (field, list) in [("devices", &study.devices), ("workloads", &study.workloads)] {
        for f in list {
            let p = dir.join(f);
            if !p.is_file() {
                return Err(fail(
                    field,
                    format!("`{f}` is not a file (looked for {})", p.display()),
                ));
            }
            files.push(p);
        }
    }
    Ok(Plan {
        csv: out.join(format!("{}.csv", study.name)),
        plot: out.join(format!("{}.svg", study.name)),
        study,
        files,
    })
}

/// An error of a study's run, told as the study's: the study's `set` and
/// `config_set` lists stand where the command line's `--set` and
/// `--config-set` would, so a message naming those options names the
/// study's fields instead, and an error with no file of its own (a bad
/// `set` value) is in the study file. An error in a device or workload
/// file that came from the study's lists also names the study.
pub fn blame(d: Diag, study: &Path) -> Diag {
    let file = study.display().to_string();
    let named = d.message.contains("--set ") || d.message.contains("--config-set ");
    let message = d
        .message
        .replace("--config-set ", "config_set ")
        .replace("--set ", "set ");
    match d.file {
        None => Diag {
            file: Some(file),
            message,
            ..d
        },
        Some(f) if named && f != file => Diag {
            file: Some(f),
            message: format!("{message} (in the study {file})"),
            ..d
        },
        Some(f) => Diag {
            file: Some(f),
            message,
            ..d
        },
    }
}

//! `gpusim merge`: the shards of a sweep back into the whole run's output.
//!
//! Each shard says which sweep it belongs to and which rows it holds (its
//! `gpusim-shard` line). The shards are put in row order and concatenated,
//! so the result is byte for byte what the unsharded run writes, in
//! whatever order the shards are given; shards of another sweep, and rows
//! missing or given twice, are refused with the rows and files named.

use crate::output::{self, ROWS_KEY, SHARD_KEY};
use crate::sweep::ShardTag;
use engine::Diag;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const HELP: &str = "\
EXAMPLES:
  A sweep in 4 parts (on 4 machines, or as a SLURM job array), then merged:
      gpusim run configs/h200.ron workloads/stride.ron --shard 1/4 --csv part1.csv
      ...
      gpusim run configs/h200.ron workloads/stride.ron --shard 4/4 --csv part4.csv
      gpusim merge stride.csv part*.csv
  scripts/slurm/sweep.sbatch and merge.sbatch do this on a SLURM cluster (see README).

WHAT IS CHECKED:
  Every shard starts with a line `gpusim-shard sweep=ID shard=I/N points=A..B/TOTAL` (a `#`
  comment in CSV, the `gpusim_shard` key in JSON). ID is a hash of the gpusim version, the
  contents of the device and workload files, the --set values, the devices as the
  --config-set values make them and the run options (--sample, --max-warp-instructions):
  shards with different IDs are refused. The rows A..B of all shards must cover 0..TOTAL exactly once: missing and
  duplicated rows are named (rows are numbered from 0 in output order; A..B holds A but not B).
  The output is the unsharded run's, byte for byte.";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    Csv,
    Json,
}

struct Part {
    file: PathBuf,
    tag: ShardTag,
    format: Format,
    /// CSV: the header line.
    header: String,
    /// CSV: row lines with their newline; JSON: row values.
    csv_rows: Vec<String>,
    json_rows: Vec<serde_json::Value>,
}

fn err(file: &Path, line: Option<usize>, msg: impl Into<String>) -> Diag {
    Diag {
        file: Some(file.display().to_string()),
        pos: line.map(|l| (l, 1)),
        ..Diag::msg(msg.into())
    }
}

fn read(file: &Path) -> Result<Part, Diag> {
    let text =
        std::fs::read_to_string(file).map_err(|e| err(file, None, format!("cannot read: {e}")))?;
    let not_shard = || {
        err(
            file,
            Some(1),
            "not a shard: it has no `gpusim-shard` line (write shards with `gpusim run --shard I/N`)",
        )
    };
    let tag_of = |s: &str, line| s.parse::<ShardTag>().map_err(|e| err(file, line, e));
    let part = if let Some(rest) = text.strip_prefix("# ") {
        let mut lines = rest.split_inclusive('\n');
        let tag_line = lines.next().unwrap_or("").trim_end();
        if !tag_line.starts_with("gpusim-shard") {
            return Err(not_shard());
        }
        let tag = tag_of(tag_line, Some(1))?;
        let header = lines
            .next()
            .ok_or_else(|| err(file, Some(2), "no CSV header"))?;
        let csv_rows: Vec<String> = lines.map(str::to_string).collect();
        if let Some(k) = csv_rows.iter().position(|l| !l.ends_with('\n')) {
            return Err(err(file, Some(k + 3), "the last line is cut short"));
        }
        let fields = |l: &str| l.split(',').count();
        if let Some(k) = csv_rows.iter().position(|l| fields(l) != fields(header)) {
            return Err(err(
                file,
                Some(k + 3),
                format!(
                    "the row has {} fields, the header {}: the file is damaged",
                    fields(&csv_rows[k]),
                    fields(header)
                ),
            ));
        }
        Part {
            file: file.into(),
            tag,
            format: Format::Csv,
            header: header.to_string(),
            csv_rows,
            json_rows: Vec::new(),
        }
    } else if text.trim_start().starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| err(file, Some(e.line()), format!("not valid JSON: {e}")))?;
        let tag = v
            .get(SHARD_KEY)
            .and_then(|t| t.as_str())
            .ok_or_else(not_shard)?;
        let tag = tag_of(tag, None)?;
        let rows = v
            .get(ROWS_KEY)
            .and_then(|r| r.as_array())
            .ok_or_else(|| err(file, None, format!("no `{ROWS_KEY}` array")))?;
        Part {
            file: file.into(),
            tag,
            format: Format::Json,
            header: String::new(),
            csv_rows: Vec::new(),
            json_rows: rows.clone(),
        }
    } else {
        return Err(not_shard());
    };
    let n = part.csv_rows.len() + part.json_rows.len();
    if n != part.tag.end - part.tag.start {
        return Err(err(
            file,
            None,
            format!(
                "holds {n} rows but its `gpusim-shard` line says {} (points {}..{}): the file is damaged",
                part.tag.end - part.tag.start,
                part.tag.start,
                part.tag.end
            ),
        ));
    }
    Ok(part)
}

fn names(parts: &[&Part]) -> String {
    parts
        .iter()
        .map(|p| p.file.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks that `parts` are of one sweep and cover it once, in row order.
fn check(parts: &mut [Part]) -> Result<(), Diag> {
    parts.sort_by_key(|p| (p.tag.start, p.tag.end));
    // One sweep, one format.
    let mut sweeps: BTreeMap<String, Vec<&Part>> = BTreeMap::new();
    for p in parts.iter() {
        sweeps.entry(p.tag.sweep.to_string()).or_default().push(p);
    }
    if sweeps.len() > 1 {
        let mut m = String::from(
            "the shards are of different sweeps (a sweep's ID is a hash of the gpusim version, \
             its device and workload files, its --set and --config-set values and run options):",
        );
        for (id, ps) in &sweeps {
            let _ = write!(m, "\n  sweep {id}: {}", names(ps));
        }
        return Err(Diag::msg(m));
    }
    let first = &parts[0];
    if let Some(p) = parts.iter().find(|p| p.format != first.format) {
        return Err(Diag::msg(format!(
            "{} is {:?} but {} is {:?}: merge shards of one format",
            first.file.display(),
            first.format,
            p.file.display(),
            p.format
        )));
    }
    if let Some(p) = parts.iter().find(|p| p.header != first.header) {
        return Err(err(
            &p.file,
            Some(2),
            format!(
                "its CSV header differs from that of {}",
                first.file.display()
            ),
        ));
    }
    // Cover 0..total once.
    let total = first.tag.total;
    let mut problems: Vec<String> = Vec::new();
    let mut covered = 0usize;
    let mut holder: Option<usize> = None;
    for (k, p) in parts.iter().enumerate() {
        let (a, b) = (p.tag.start, p.tag.end);
        if a > covered {
            problems.push(format!(
                "missing: points {covered}..{a} of {total}: no shard given holds them"
            ));
        } else if a < covered && a < b {
            let h = &parts[holder.unwrap_or(k)];
            problems.push(if h.file == p.file {
                format!(
                    "duplicated: {} is given twice (shard {}, points {a}..{b} of {total})",
                    p.file.display(),
                    p.tag.shard
                )
            } else {
                format!(
                    "duplicated: points {a}..{} of {total} are in both {} (shard {}) and {} (shard {})",
                    covered.min(b),
                    h.file.display(),
                    h.tag.shard,
                    p.file.display(),
                    p.tag.shard
                )
            });
        }
        if b > covered {
            covered = b;
            holder = Some(k);
        }
    }
    if covered < total {
        problems.push(format!(
            "missing: points {covered}..{total} of {total}: no shard given holds them"
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    // Name the shards not given when all given are parts of one N.
    let n = first.tag.shard.count;
    if parts.iter().all(|p| p.tag.shard.count == n) {
        let absent: Vec<String> = (1..=n)
            .filter(|i| !parts.iter().any(|p| p.tag.shard.index == *i))
            .map(|i| format!("{i}/{n}"))
            .collect();
        if !absent.is_empty() {
            // A long list says little past its start.
            const SHOWN: usize = 20;
            let more = absent.len().saturating_sub(SHOWN);
            let mut list = absent[..absent.len().min(SHOWN)].join(", ");
            if more > 0 {
                let _ = write!(list, " and {more} more");
            }
            problems.push(format!("shards not given: {list}"));
        }
    }
    Err(Diag::msg(format!(
        "the shards do not make up the sweep {} once:\n  {}",
        first.tag.sweep,
        problems.join("\n  ")
    )))
}

/// Merges `shards` into `out` ("-" for stdout).
pub fn merge(out: &Path, shards: &[PathBuf]) -> Result<(), Diag> {
    let mut parts = shards
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<Part>, Diag>>()?;
    if parts.is_empty() {
        return Err(Diag::msg("no shard given"));
    }
    let format = parts[0].format;
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let wanted = match ext.as_deref() {
        Some("csv") => Some(Format::Csv),
        Some("json") => Some(Format::Json),
        _ => None,
    };
    if wanted.is_some_and(|w| w != format) {
        return Err(err(
            out,
            None,
            format!(
                "the shards are {format:?}: the merged file is too (name it .{})",
                match format {
                    Format::Csv => "csv",
                    Format::Json => "json",
                }
            ),
        ));
    }
    check(&mut parts)?;
    let text = match format {
        Format::Csv => {
            let mut s = parts[0].header.clone();
            for p in &parts {
                for r in &p.csv_rows {
                    s.push_str(r);
                }
            }
            s
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = parts
                .iter()
                .flat_map(|p| p.json_rows.iter().cloned())
                .collect();
            output::json_text(&rows)
        }
    };
    output::write_file(out, &text)
}

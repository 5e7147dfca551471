//! Tables, CSV and JSON.

use crate::sweep::ShardTag;
use crate::variants::Variants;
use engine::{csv_header, csv_row, DeviceSpec, Diag, PointResult, Workload};
use std::fmt::Write as _;
use std::path::Path;

/// Writes `text` to `path`, or to stdout for "-". The file is written
/// under a temporary name beside it and renamed at the end, so that it is
/// either whole or absent (never half-written, whatever stops the run).
pub fn write_file(path: &Path, text: &str) -> Result<(), Diag> {
    if path.as_os_str() == "-" {
        print!("{text}");
        return Ok(());
    }
    let fail = |what: &str, e: std::io::Error| Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(format!("cannot {what}: {e}"))
    };
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        // A device or a pipe (/dev/null, /dev/stdout, a FIFO): written in
        // place, as renaming a file over it would replace it.
        use std::io::Write;
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| fail("write", e));
    }
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .map_err(|e| fail("write", e))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| fail("rename into place", e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The header and one row per result, with a column per varied device
/// field after `workload`.
fn table_cells(
    params: &[String],
    variants: &Variants,
    results: &[PointResult],
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = csv_header(params);
    header.splice(2..2, variants.paths.iter().cloned());
    let rows = results
        .iter()
        .map(|r| {
            let mut row = csv_row(r, params);
            row.splice(2..2, variants.columns(r));
            row
        })
        .collect();
    (header, rows)
}

/// A CSV field, quoted where it holds a comma or a quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// All columns as CSV, with a column per varied device field.
pub fn csv_with(params: &[String], variants: &Variants, results: &[PointResult]) -> String {
    let (header, rows) = table_cells(params, variants, results);
    let line = |cells: &[String]| {
        cells
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut s = line(&header);
    s.push('\n');
    for r in rows {
        s.push_str(&line(&r));
        s.push('\n');
    }
    s
}

/// All columns as a JSON array of objects (numbers as numbers), with a
/// field per varied device field.
pub fn json_with(params: &[String], variants: &Variants, results: &[PointResult]) -> String {
    json_text(&json_rows(params, variants, results))
}

/// A shard's CSV: a `# gpusim-shard ...` line saying which rows of which
/// sweep it holds, then the CSV the whole run would write for those rows.
pub fn csv_shard(tag: &ShardTag, whole: &str) -> String {
    format!("# {tag}\n{whole}")
}

/// A shard's JSON: `{"gpusim_shard": "gpusim-shard ...", "rows": [...]}`,
/// the rows as in the whole run's array.
pub fn json_shard(
    tag: &ShardTag,
    params: &[String],
    variants: &Variants,
    results: &[PointResult],
) -> String {
    let mut m = serde_json::Map::new();
    m.insert(SHARD_KEY.into(), tag.to_string().into());
    m.insert(ROWS_KEY.into(), json_rows(params, variants, results).into());
    let mut s = serde_json::to_string_pretty(&m).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// The keys of a shard's JSON object.
pub const SHARD_KEY: &str = "gpusim_shard";
pub const ROWS_KEY: &str = "rows";

/// The whole run's JSON text for these rows.
pub fn json_text(rows: &[serde_json::Value]) -> String {
    let mut s = serde_json::to_string_pretty(rows).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

fn json_rows(
    params: &[String],
    variants: &Variants,
    results: &[PointResult],
) -> Vec<serde_json::Value> {
    let (header, cells) = table_cells(params, variants, results);
    cells
        .into_iter()
        .zip(results)
        .map(|(row, r)| {
            let mut m = serde_json::Map::new();
            for (k, v) in header.iter().zip(row) {
                if v.is_empty() {
                    continue;
                }
                let val = if let Ok(i) = v.parse::<i64>() {
                    serde_json::Value::from(i)
                } else if let Ok(f) = v.parse::<f64>() {
                    serde_json::Value::from(f)
                } else {
                    serde_json::Value::from(v)
                };
                m.insert(k.clone(), val);
            }
            // Which load of the kernel waits: each global load instruction
            // (by its index in program order) with its mean latency and
            // its latencies' 10th, 50th, 90th and 99th percentiles.
            let sites: Vec<serde_json::Value> = r
                .load_sites
                .iter()
                .map(|l| {
                    serde_json::json!({
                        "pc": l.pc,
                        "statement": l.path,
                        "loads": l.loads,
                        "latency_cycles": (l.latency_cycles * 1000.0).round() / 1000.0,
                        "latency_p10_cycles": l.latency_percentiles_cycles[0],
                        "latency_p50_cycles": l.latency_percentiles_cycles[1],
                        "latency_p90_cycles": l.latency_percentiles_cycles[2],
                        "latency_p99_cycles": l.latency_percentiles_cycles[3],
                    })
                })
                .collect();
            m.insert("load_sites".into(), sites.into());
            // The kernel's course: when each whole wave of the blocks timed
            // had retired, ns from the launch.
            let waves: Vec<serde_json::Value> = r
                .wave_ends_ps
                .iter()
                .map(|&t| (t as f64 / 1000.0).into())
                .collect();
            m.insert("wave_ends_ns".into(), waves.into());
            // How evenly the SMs shared the work: per SM (by number), the
            // blocks timed that ran there and their loads' mean latency.
            let per_sm: Vec<serde_json::Value> = r
                .per_sm
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "blocks": p.blocks,
                        "load_latency_cycles": (p.load_latency_cycles * 1000.0).round() / 1000.0,
                    })
                })
                .collect();
            m.insert("per_sm".into(), per_sm.into());
            serde_json::Value::Object(m)
        })
        .collect()
}

fn busiest(r: &PointResult) -> String {
    let b = &r.bottlenecks;
    let units = [
        ("lsu", b.lsu_util),
        ("noc", b.noc_util),
        ("l2", b.l2_util),
        ("dram", b.dram_util),
    ];
    let (name, u) = units
        .iter()
        .copied()
        .fold(("-", -1.0), |a, x| if x.1 > a.1 { x } else { a });
    format!("{name} {:.0}%", (u * 100.0).min(999.0))
}

/// The human-readable table.
pub fn table(wl: &Workload, devs: &[DeviceSpec], results: &[PointResult]) -> String {
    let params: Vec<&str> = wl.params.iter().map(|p| p.name.as_str()).collect();
    // Shared-memory wavefronts and bank conflicts, for kernels that use it.
    let shared = !wl.shared.is_empty();
    let mut head: Vec<String> = vec!["device".into()];
    head.extend(params.iter().map(|p| p.to_string()));
    head.extend(
        [
            "time_us",
            "GB/s",
            "ld_req",
            "ld_sect",
            "st_sect",
            "L1_hit",
            "L2_rd",
            "DRAM_rd_MB",
            "DRAM_wr_MB",
        ]
        .map(String::from),
    );
    if shared {
        head.extend(["sh_wavefronts", "sh_conflicts"].map(String::from));
    }
    head.extend(["busiest", "occ", "lat_cyc"].map(String::from));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for r in results {
        let c = &r.counters;
        let mut row = vec![r.device.clone()];
        row.extend(r.point.iter().map(|(_, v)| v.to_string()));
        row.extend([
            format!("{:.2}", r.time_ns() / 1000.0),
            format!("{:.1}", r.bandwidth_gbps()),
            c.requests_ld.to_string(),
            c.sectors_ld.to_string(),
            c.sectors_st.to_string(),
            c.l1_hits_ld.to_string(),
            c.l2_read_sectors.to_string(),
            format!("{:.2}", c.dram_bytes_read as f64 / 1e6),
            format!("{:.2}", c.dram_bytes_write as f64 / 1e6),
        ]);
        if shared {
            row.extend([
                (c.shared_wavefronts_ld + c.shared_wavefronts_st).to_string(),
                (c.shared_conflicts_ld + c.shared_conflicts_st).to_string(),
            ]);
        }
        row.extend([
            busiest(r),
            format!("{:.2}", r.bottlenecks.achieved_occupancy),
            format!("{:.0}", r.bottlenecks.load_latency_cycles),
        ]);
        rows.push(row);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    let names: Vec<String> = devs
        .iter()
        .map(|d| {
            format!(
                "{} ({}, CC {}.{}, {:.0} GB/s peak)",
                d.name,
                d.full_name,
                d.compute_capability.0,
                d.compute_capability.1,
                d.peak_gbps()
            )
        })
        .collect();
    let _ = writeln!(s, "# {} on {}", wl.name, names.join("; "));
    let line = |s: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 || i == cells.len() - 3 {
                    format!("{:<w$}", c, w = widths[i])
                } else {
                    format!("{:>w$}", c, w = widths[i])
                }
            })
            .collect();
        let _ = writeln!(s, "{}", parts.join("  ").trim_end());
    };
    line(&mut s, &head);
    for r in &rows {
        line(&mut s, r);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--csv /dev/null` writes into the device, and leaves it a device
    /// (a file renamed over it would replace it, for every program).
    #[cfg(unix)]
    #[test]
    fn writing_to_a_device_leaves_it_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        let is_device = || std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device());
        if !is_device() {
            return; // nothing to check on a machine without the device
        }
        write_file(null, "device,workload\n").unwrap();
        assert!(is_device(), "/dev/null is no longer a device");
    }
}

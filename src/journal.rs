//! The journal: every finished point of a run, one line each, so that a
//! run stopped by Ctrl-C, a time limit, a kill or a node failure resumes
//! where it stopped (`--resume`).
//!
//! ```text
//! gpusim-journal format=2 gpusim-shard sweep=5c1d...e2 shard=2/4 points=16..32/64
//! 17<TAB>{"device":"c2050",...}<TAB>9a3f...   (row index, result, FNV-1a of the two)
//! 16<TAB>{"device":"c2050",...}<TAB>41c0...
//! ```
//!
//! Lines are appended as points finish (in any order) with one write each,
//! straight to the file, so that a killed process leaves at worst a torn
//! last line; a line whose checksum does not match is ignored and its point
//! is run again. Results are kept exactly (floats by their bits), so a
//! resumed run writes the same bytes as one that was never stopped. The
//! journal lives beside the first output file (`out.csv.journal`) and is
//! removed once the output is written. The header's `format` changes with
//! the results' fields: a journal of another format (another version of
//! gpusim) cannot be read back and is refused with that reason.

use crate::sweep::{checksum, ShardTag};
use engine::{Bottlenecks, Counters, Diag, PointResult};
use serde_json::{json, Value};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: &str = "gpusim-journal";
/// The results' encoding: 2 since `dram_row_hit_rate` (format 1, with no
/// `format=` in the header, had eleven bottleneck fields).
const FORMAT: u32 = 2;

pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
}

fn err(path: &Path, msg: String) -> Diag {
    Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(msg)
    }
}

/// The journal of the run whose first output file is `out`.
pub fn path_for(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".journal");
    PathBuf::from(s)
}

/// The journal of a run writing `outputs` (its --csv and --json paths, in
/// that order): beside the first that is, or will be, a file. Standard
/// output ("-") and what exists but is not a file (/dev/null, a pipe) get
/// none: a run into them has nothing to resume, and a journal beside them
/// would be left in a system directory.
pub fn for_outputs<'a>(outputs: impl IntoIterator<Item = &'a Path>) -> Option<PathBuf> {
    outputs
        .into_iter()
        .find(|p| p.as_os_str() != "-" && std::fs::metadata(p).map_or(true, |m| m.is_file()))
        .map(path_for)
}

impl Journal {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the journal of the run `tag` at `path`: a new one, or with
    /// `resume` the one there, with the points it holds. A journal that is
    /// there without `resume`, or that is of another run, is an error (a
    /// forgotten `--resume` must not throw away hours of work).
    pub fn open(
        path: &Path,
        tag: &ShardTag,
        resume: bool,
    ) -> Result<(Journal, Vec<(usize, PointResult)>), Diag> {
        let header = format!("{MAGIC} format={FORMAT} {tag}");
        let mut have: Vec<(usize, PointResult)> = Vec::new();
        let mut ignored = 0usize;
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let mut lines = text.split_inclusive('\n');
                let first = lines.next().unwrap_or("");
                let theirs = first.trim_end_matches('\n');
                let Some(their_tag) = theirs.strip_prefix(MAGIC).map(str::trim) else {
                    return Err(err(
                        path,
                        "is in the way: it is not a gpusim journal (move it away)".into(),
                    ));
                };
                let (format, their_tag) = match their_tag.strip_prefix("format=") {
                    Some(rest) => {
                        let (n, t) = rest.split_once(' ').unwrap_or((rest, ""));
                        (n.parse::<u32>().unwrap_or(0), t.trim())
                    }
                    None => (1, their_tag),
                };
                if format != FORMAT {
                    return Err(err(
                        path,
                        format!(
                            "was written by another version of gpusim (journal format \
                             {format}; this one reads format {FORMAT}): its results cannot \
                             be read back; delete it to run the points again"
                        ),
                    ));
                }
                if !resume {
                    let n = lines.count();
                    return Err(err(
                        path,
                        format!(
                            "holds {n} finished point{} of a run that did not complete: add \
                             --resume to continue it, or delete the file to start over",
                            if n == 1 { "" } else { "s" }
                        ),
                    ));
                }
                if their_tag != tag.to_string() {
                    return Err(err(
                        path,
                        format!(
                            "is the journal of another run ({their_tag}), not of this one \
                             ({tag}): an input file, a --set value or --shard changed since; \
                             delete the file to start over"
                        ),
                    ));
                }
                let mut seen = vec![false; tag.end - tag.start];
                for line in lines {
                    match decode_line(line, tag) {
                        Some((i, r)) if !seen[i - tag.start] => {
                            seen[i - tag.start] = true;
                            have.push((i, r));
                        }
                        Some(_) => {}
                        None => ignored += 1,
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(path, format!("cannot read: {e}"))),
        }
        if ignored > 0 {
            eprintln!(
                "{}: ignoring {ignored} damaged line(s) (a run killed while writing); \
                 their points run again",
                path.display()
            );
        }
        // Start the file anew with the good lines only, so that appending
        // never continues a torn line.
        have.sort_by_key(|(i, _)| *i);
        let mut text = format!("{header}\n");
        for (i, r) in &have {
            text.push_str(&encode_line(*i, r));
        }
        crate::output::write_file(path, &text)?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| err(path, format!("cannot open for appending: {e}")))?;
        Ok((
            Journal {
                path: path.to_path_buf(),
                file: Mutex::new(file),
            },
            have,
        ))
    }

    /// Records a finished point: one write of one whole line.
    pub fn append(&self, index: usize, r: &PointResult) -> Result<(), Diag> {
        let line = encode_line(index, r);
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line.as_bytes())
            .map_err(|e| err(&self.path, format!("cannot write: {e}")))
    }

    /// The run is complete and its output written: the journal goes.
    pub fn remove(self) -> Result<(), Diag> {
        drop(self.file);
        std::fs::remove_file(&self.path).map_err(|e| err(&self.path, format!("cannot remove: {e}")))
    }
}

fn encode_line(index: usize, r: &PointResult) -> String {
    let body = format!("{index}\t{}", encode(r));
    let sum = checksum(&body);
    format!("{body}\t{sum}\n")
}

fn decode_line(line: &str, tag: &ShardTag) -> Option<(usize, PointResult)> {
    let line = line.strip_suffix('\n')?;
    let (body, sum) = line.rsplit_once('\t')?;
    if checksum(body) != sum {
        return None;
    }
    let (index, json) = body.split_once('\t')?;
    let index: usize = index.parse().ok()?;
    if !(tag.start..tag.end).contains(&index) {
        return None;
    }
    Some((index, decode(&serde_json::from_str(json).ok()?)?))
}

/// A result as JSON, floats by their bits so that they come back exact.
fn encode(r: &PointResult) -> String {
    let c = &r.counters;
    let b = &r.bottlenecks;
    let bits = [
        b.lsu_util,
        b.l1_util,
        b.noc_util,
        b.l2_util,
        b.dram_util,
        b.lsu_stall,
        b.inflight_stall,
        b.l2_mshr_stall,
        b.dram_queue_stall,
        b.load_latency_cycles,
        b.achieved_occupancy,
        b.dram_row_hit_rate,
    ]
    .map(f64::to_bits);
    json!({
        "device": r.device,
        "workload": r.workload,
        "point": r.point,
        "bytes": r.bytes,
        "counters": [
            c.requests_ld, c.requests_st, c.sectors_ld, c.sectors_st, c.l1_hits_ld,
            c.l2_read_sectors, c.l2_write_sectors, c.l2_read_hits, c.dram_bytes_read,
            c.dram_bytes_write, c.time_ps, c.transactions[0], c.transactions[1],
            c.transactions[2], c.warp_instructions, c.shared_requests_ld,
            c.shared_requests_st, c.shared_wavefronts_ld, c.shared_wavefronts_st,
            c.shared_conflicts_ld, c.shared_conflicts_st,
        ],
        "bottleneck_bits": bits,
        "blocks_per_sm": b.blocks_per_sm,
        "sample": [r.sample.blocks, r.sample.blocks_timed, r.sample.time_error_ps],
        "load_sites": r.load_sites.iter().map(|l| {
            let p = l.latency_percentiles_cycles.map(f64::to_bits);
            json!([l.pc, l.path, l.loads, l.latency_cycles.to_bits(), p[0], p[1], p[2], p[3]])
        }).collect::<Vec<_>>(),
        "wave_ends_ps": r.wave_ends_ps,
        "per_sm": r.per_sm.iter().map(|p| {
            json!([p.blocks, p.load_latency_cycles.to_bits()])
        }).collect::<Vec<_>>(),
    })
    .to_string()
}

fn decode(v: &Value) -> Option<PointResult> {
    let u64s = |key: &str, n: usize| -> Option<Vec<u64>> {
        let a = v.get(key)?.as_array()?;
        let out: Option<Vec<u64>> = a.iter().map(Value::as_u64).collect();
        out.filter(|o| o.len() == n)
    };
    let c = u64s("counters", 21)?;
    let smp = u64s("sample", 3)?;
    let b: Vec<f64> = u64s("bottleneck_bits", 12)?
        .into_iter()
        .map(f64::from_bits)
        .collect();
    let point = v
        .get("point")?
        .as_array()?
        .iter()
        .map(|p| Some((p.get(0)?.as_str()?.to_string(), p.get(1)?.as_i64()?)))
        .collect::<Option<Vec<_>>>()?;
    // Every field named: a field added to either struct must be added here.
    Some(PointResult {
        device: v.get("device")?.as_str()?.to_string(),
        workload: v.get("workload")?.as_str()?.to_string(),
        point,
        bytes: v.get("bytes")?.as_u64()?,
        counters: Counters {
            requests_ld: c[0],
            requests_st: c[1],
            sectors_ld: c[2],
            sectors_st: c[3],
            l1_hits_ld: c[4],
            l2_read_sectors: c[5],
            l2_write_sectors: c[6],
            l2_read_hits: c[7],
            dram_bytes_read: c[8],
            dram_bytes_write: c[9],
            time_ps: c[10],
            transactions: [c[11], c[12], c[13]],
            warp_instructions: c[14],
            shared_requests_ld: c[15],
            shared_requests_st: c[16],
            shared_wavefronts_ld: c[17],
            shared_wavefronts_st: c[18],
            shared_conflicts_ld: c[19],
            shared_conflicts_st: c[20],
        },
        bottlenecks: Bottlenecks {
            lsu_util: b[0],
            l1_util: b[1],
            noc_util: b[2],
            l2_util: b[3],
            dram_util: b[4],
            lsu_stall: b[5],
            inflight_stall: b[6],
            l2_mshr_stall: b[7],
            dram_queue_stall: b[8],
            load_latency_cycles: b[9],
            achieved_occupancy: b[10],
            dram_row_hit_rate: b[11],
            blocks_per_sm: u32::try_from(v.get("blocks_per_sm")?.as_u64()?).ok()?,
        },
        sample: engine::SampleInfo {
            blocks: smp[0],
            blocks_timed: smp[1],
            time_error_ps: smp[2],
        },
        load_sites: v
            .get("load_sites")?
            .as_array()?
            .iter()
            .map(|l| {
                let l = l.as_array()?;
                Some(engine::LoadSite {
                    pc: u32::try_from(l.first()?.as_u64()?).ok()?,
                    path: l.get(1)?.as_str()?.to_string(),
                    loads: l.get(2)?.as_u64()?,
                    latency_cycles: f64::from_bits(l.get(3)?.as_u64()?),
                    latency_percentiles_cycles: [
                        f64::from_bits(l.get(4)?.as_u64()?),
                        f64::from_bits(l.get(5)?.as_u64()?),
                        f64::from_bits(l.get(6)?.as_u64()?),
                        f64::from_bits(l.get(7)?.as_u64()?),
                    ],
                })
            })
            .collect::<Option<Vec<_>>>()?,
        // A journal written before the wave ends were kept has none: its
        // points resume without them rather than run again as damaged.
        wave_ends_ps: match v.get("wave_ends_ps") {
            None => Vec::new(),
            Some(w) => w
                .as_array()?
                .iter()
                .map(Value::as_u64)
                .collect::<Option<Vec<_>>>()?,
        },
        // Likewise for a journal written before the SMs' shares were kept.
        per_sm: match v.get("per_sm") {
            None => Vec::new(),
            Some(w) => w
                .as_array()?
                .iter()
                .map(|p| {
                    let p = p.as_array()?;
                    Some(engine::SmShare {
                        blocks: p.first()?.as_u64()?,
                        load_latency_cycles: f64::from_bits(p.get(1)?.as_u64()?),
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Shard, SweepId};

    fn sample(i: u64) -> PointResult {
        PointResult {
            device: "c2050".into(),
            workload: "offset".into(),
            point: vec![("elem".into(), 4), ("offset".into(), -(i as i64))],
            bytes: 1 << 21,
            counters: Counters {
                requests_ld: i,
                time_ps: 123_456_789 + i,
                transactions: [1, 2, 3],
                ..Counters::default()
            },
            bottlenecks: Bottlenecks {
                // Values with no short decimal form must come back exactly.
                lsu_util: 0.1 + 0.2,
                load_latency_cycles: std::f64::consts::PI * i as f64,
                achieved_occupancy: 1.0 / 3.0,
                blocks_per_sm: 8,
                ..Bottlenecks::default()
            },
            sample: engine::SampleInfo {
                blocks: 100 + i,
                blocks_timed: 40,
                time_error_ps: 7 * i,
            },
            load_sites: vec![engine::LoadSite {
                pc: 3,
                path: "kernel[2].body[0]".into(),
                loads: 1000 + i,
                latency_cycles: 0.1 + i as f64,
                latency_percentiles_cycles: [4.0, 12.0 + i as f64, 100.0, 1004.0],
            }],
            wave_ends_ps: vec![1_000_000 + i, 2_000_003 + i],
            per_sm: vec![
                engine::SmShare {
                    blocks: 3 + i,
                    load_latency_cycles: 812.625,
                },
                engine::SmShare::default(),
            ],
        }
    }

    fn tag() -> ShardTag {
        ShardTag {
            sweep: SweepId(42),
            shard: Shard { index: 1, count: 2 },
            start: 0,
            end: 4,
            total: 8,
        }
    }

    #[test]
    fn a_result_comes_back_exactly() {
        let r = sample(3);
        let line = encode_line(2, &r);
        assert_eq!(decode_line(&line, &tag()), Some((2, r)));
    }

    #[test]
    fn torn_or_foreign_lines_are_ignored() {
        let line = encode_line(2, &sample(3));
        // Cut anywhere: never accepted.
        for cut in 0..line.len() - 1 {
            assert_eq!(decode_line(&line[..cut], &tag()), None, "cut at {cut}");
        }
        // A flipped digit fails the checksum.
        let bad = line.replacen("123456792", "123456793", 1);
        assert_ne!(bad, line);
        assert_eq!(decode_line(&bad, &tag()), None);
        // A row outside the shard is not this run's.
        assert_eq!(decode_line(&encode_line(5, &sample(3)), &tag()), None);
    }

    /// A file path of its own in the temporary directory, removed when
    /// the returned guard is dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    impl AsRef<Path> for Scratch {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl std::ops::Deref for Scratch {
        type Target = PathBuf;
        fn deref(&self) -> &PathBuf {
            &self.0
        }
    }

    fn scratch(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("gpusim-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        Scratch(p)
    }

    #[test]
    fn resume_keeps_whole_lines_and_drops_a_torn_one() {
        let p = scratch("torn.journal");
        let (j, have) = Journal::open(&p, &tag(), false).unwrap();
        assert!(have.is_empty());
        j.append(3, &sample(3)).unwrap();
        j.append(0, &sample(0)).unwrap();
        drop(j);
        // A kill in the middle of the next line.
        let torn = encode_line(1, &sample(1));
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&torn.as_bytes()[..torn.len() / 2]).unwrap();
        drop(f);
        // Without --resume the journal is not thrown away.
        let e = Journal::open(&p, &tag(), false).err().unwrap();
        assert!(e.message.contains("--resume"), "{e}");
        let (j, have) = Journal::open(&p, &tag(), true).unwrap();
        assert_eq!(have, vec![(0, sample(0)), (3, sample(3))]);
        // Appending after the repair gives whole lines.
        j.append(1, &sample(1)).unwrap();
        drop(j);
        let (j, have) = Journal::open(&p, &tag(), true).unwrap();
        assert_eq!(have.len(), 3);
        j.remove().unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn no_journal_beside_standard_output_or_a_device() {
        let dev_null = Path::new("/dev/null");
        let file = scratch("out.csv");
        assert_eq!(for_outputs([Path::new("-")]), None);
        if dev_null.exists() {
            assert_eq!(for_outputs([dev_null]), None);
            // The JSON file gets it when the CSV goes to the device.
            assert_eq!(for_outputs([dev_null, &file]), Some(path_for(&file)));
        }
        // A file not written yet gets one.
        assert_eq!(for_outputs([file.as_path()]), Some(path_for(&file)));
    }

    #[test]
    fn a_journal_of_another_format_is_refused_with_that_reason() {
        let p = scratch("old.journal");
        let (j, _) = Journal::open(&p, &tag(), false).unwrap();
        j.append(1, &sample(1)).unwrap();
        drop(j);
        // The same run's journal as an older gpusim wrote it.
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replacen(" format=2", "", 1)).unwrap();
        for resume in [false, true] {
            let e = Journal::open(&p, &tag(), resume).err().unwrap();
            assert!(e.message.contains("another version of gpusim"), "{e}");
            assert!(e.message.contains("format 1"), "{e}");
        }
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_journal_of_another_run_is_refused() {
        let p = scratch("other.journal");
        let (j, _) = Journal::open(&p, &tag(), false).unwrap();
        drop(j);
        let other = ShardTag {
            sweep: SweepId(43),
            ..tag()
        };
        let e = Journal::open(&p, &other, true).err().unwrap();
        assert!(e.message.contains("another run"), "{e}");
        std::fs::remove_file(&p).unwrap();
    }
}

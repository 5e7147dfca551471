//! The functional pass's shortcut for block-affine kernels
//! (`engine::functional`) against running every warp.

use super::{device, repo};

/// Every shipped workload, on a Tesla, a Fermi and a Hopper device, at up
/// to eight points of its sweep (1 MiB where it has `nMB`, 4 trips where it
/// has `trips`): the counts from one traced block are the counts of every
/// warp, field for field; and the kernels the shortcut is for (offsets,
/// strides, streams, transposes, a reduction whose conditional body is
/// predicated) take it.
#[test]
fn one_traced_block_counts_what_every_warp_counts() {
    let mut names: Vec<String> = std::fs::read_dir(repo("workloads"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "ron").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    let mut traced = Vec::new();
    for dev in ["c870", "c2050", "h200"].map(device) {
        for name in &names {
            let wl = super::workload(name);
            // Small points: 1 MiB, and a few trips of a loop whose trip
            // count is a parameter (whether one block's trace is every
            // warp's does not hang on how often a loop runs; shared_pred's
            // 512 trips are 200 million warp instructions a point).
            let small: Vec<(String, Vec<i64>)> = wl
                .workload
                .params
                .iter()
                .filter_map(|p| match p.name.as_str() {
                    "nMB" => Some((p.name.clone(), vec![1])),
                    "trips" => Some((p.name.clone(), vec![4])),
                    _ => None,
                })
                .collect();
            let points = wl.points(&small).unwrap();
            let pick = points.len().div_ceil(8);
            for point in points.iter().step_by(pick) {
                let inst = wl.workload.instantiate(point).unwrap();
                let prog = &inst.program;
                if prog.blocks() * prog.threads_per_block() as u64 > 1 << 22 {
                    continue;
                }
                // Where the shortcut does not apply there is nothing to
                // compare, and every warp need not run.
                let short = engine::functional::count_affine(&dev, prog, u64::MAX);
                if matches!(short, Ok(None)) {
                    continue;
                }
                let every = engine::sim::count_each_warp(&dev, prog, u64::MAX);
                match (every, short) {
                    (Ok(e), Ok(Some(s))) => {
                        assert_eq!(e, s, "{} {name} {point:?}", dev.name);
                        traced.push(name.clone());
                    }
                    (e, s) => panic!("{} {name} {point:?}: {e:?} against {s:?}", dev.name),
                }
            }
        }
    }
    for name in [
        "offset",
        "stride",
        "stream_copy",
        "lines_st",
        "transpose_tiled",
        "clear_four",
        "reduce",
    ] {
        assert!(
            traced.iter().any(|t| t == name),
            "{name} is block-affine and takes the shortcut"
        );
    }
}

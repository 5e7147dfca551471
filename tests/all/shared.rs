//! Shared memory, barriers and buffers with declared contents: the bank
//! rule against the H200's counts, values against the H200's buffers, and
//! every bad input refused with the file, field and reason.

use super::cli::gpusim;
use super::{device, repo, run, workload};

fn temp(name: &str, text: &str) -> super::TempFile {
    super::TempFile::new("shared", name, text)
}

/// A small workload with `buffers`, `shared` and `kernel` substituted.
fn wl(buffers: &str, shared: &str, kernel: &str) -> String {
    format!(
        r#"Workload(
    name: "t",
    params: [(name: "n", default: 1024, doc: "elements")],
    buffers: [{buffers}],
    shared: [{shared}],
    grid: ["n / 256"],
    block: ["256"],
    regs_per_thread: 16,
    useful_bytes: "n * 4",
    kernel: [
        Let("i", "blockIdx.x * blockDim.x + threadIdx.x"),
{kernel}
    ],
)"#
    )
}

/// Runs `text` as a workload on the H200; the error output when it fails.
fn refused(name: &str, text: &str) -> String {
    let path = temp(name, text);
    let (ok, out, err) = gpusim(&["run", "configs/h200.ron", &path, "-q"]);
    assert!(!ok, "{name} ran:\n{out}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(&*path), "the file is named: {err}");
    err
}

#[test]
fn the_window_permutation_gives_the_values_the_h200_was_given() {
    // tools/measure/shared/results/micro.txt: idx as filled by the host of
    // the measurement program, printed there.
    let text =
        std::fs::read_to_string(repo("tools/measure/shared/results/micro.txt")).expect("micro.txt");
    let mut seen = 0;
    for l in text
        .lines()
        .filter(|l| l.starts_with("idx n=") && l.contains("first 8:"))
    {
        let num = |k: &str| -> u64 {
            let v = l
                .split(k)
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap();
            v.parse().unwrap()
        };
        let (n, w, seed) = (num("n="), num("w="), num("seed="));
        let want: Vec<u64> = l
            .split("first 8:")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let got: Vec<u64> = (0..8)
            .map(|i| simt_core::data::window_permutation(i, n, w, seed))
            .collect();
        assert_eq!(got, want, "n={n} w={w}");
        seen += 1;
    }
    assert_eq!(seen, 2);
}

#[test]
fn a_gather_reads_the_lines_its_loaded_indices_name() {
    let dev = device("h200");
    let g = workload("gather");
    // w = 1: the identity, so a copy: 4 sectors per warp instruction.
    let r = &run(&dev, &g, &[("n", &[1 << 16]), ("w", &[1])])[0];
    assert_eq!(r.counters.requests_ld, 2 * (1 << 16) / 32);
    assert_eq!(r.counters.sectors_ld, 2 * (1 << 16) / 8);
    // w = n: 32 distinct lines per warp almost always.
    let r = &run(&dev, &g, &[("n", &[1 << 16]), ("w", &[1 << 16])])[0];
    let per_warp = (r.counters.sectors_ld - (1 << 16) / 8) as f64 / ((1 << 16) / 32) as f64;
    assert!(per_warp > 31.0, "{per_warp} sectors per gathering warp");
}

#[test]
fn the_tiled_transpose_conflicts_32_ways_and_the_padded_one_not_at_all() {
    let dev = device("h200");
    for (name, ld_per_inst) in [("transpose_tiled", 32), ("transpose_tiled_padded", 1)] {
        let r = &run(&dev, &workload(name), &[("n", &[1024])])[0];
        let c = &r.counters;
        // 1024 x 1024 floats, 4 per thread: 32768 warp instructions each way.
        assert_eq!(c.shared_requests_ld, 32768);
        assert_eq!(c.shared_requests_st, 32768);
        assert_eq!(c.shared_wavefronts_ld, 32768 * ld_per_inst, "{name}");
        assert_eq!(c.shared_conflicts_ld, 32768 * (ld_per_inst - 1), "{name}");
        assert_eq!(c.shared_wavefronts_st, 32768);
        assert_eq!(c.shared_conflicts_st, 0);
    }
}

#[test]
fn shared_memory_limits_the_blocks_per_sm() {
    // 256 threads and 100 KiB each: 2 blocks of the H200's 228 KiB.
    let text = wl(
        r#"(name: "a", bytes: "n * 4")"#,
        r#"(name: "s", bytes: "102400")"#,
        r#"        Store(buf: "s", index: "threadIdx.x", width: "4"),"#,
    );
    let path = temp("occupancy.ron", &text);
    let w = engine::load_workload(std::path::Path::new(&path)).unwrap();
    let r = &run(&device("h200"), &w, &[])[0];
    assert_eq!(r.bottlenecks.blocks_per_sm, 2);
}

#[test]
fn explain_shows_the_banks_of_the_tiled_transpose() {
    let (ok, out, err) = gpusim(&[
        "explain",
        "configs/h200.ron",
        "workloads/transpose_tiled.ron",
        "--set",
        "n=1024",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("[barrier] __syncthreads()"), "{out}");
    assert!(
        out.contains("bank 0 serves 32 distinct words") && out.contains("31 conflict(s)"),
        "{out}"
    );
    assert!(
        out.contains("total: 32 wavefront(s), 31 bank conflict(s)"),
        "{out}"
    );
}

#[test]
fn a_shared_buffer_larger_than_the_device_allows_is_refused() {
    let err = refused(
        "big_shared.ron",
        &wl(
            r#"(name: "a", bytes: "n * 4")"#,
            r#"(name: "s", bytes: "300000")"#,
            r#"        Store(buf: "s", index: "threadIdx.x", width: "4"),"#,
        ),
    );
    assert!(
        err.contains("shared memory (300000 bytes)") && err.contains("shared.max_bytes_per_block"),
        "{err}"
    );
}

#[test]
fn a_shared_access_out_of_bounds_is_refused() {
    let err = refused(
        "oob.ron",
        &wl(
            r#"(name: "a", bytes: "n * 4")"#,
            r#"(name: "s", bytes: "1000")"#,
            r#"        Load(buf: "s", index: "threadIdx.x", width: "4"),"#,
        ),
    );
    assert!(
        err.contains("kernel[1]") && err.contains("out-of-bounds") && err.contains("`s`"),
        "{err}"
    );
}

#[test]
fn an_index_loaded_from_an_uninitialised_buffer_is_refused() {
    let err = refused(
        "uninit.ron",
        &wl(
            r#"(name: "idx", bytes: "n * 4"), (name: "a", bytes: "n * 4")"#,
            "",
            r#"        Load(buf: "idx", index: "i", width: "4", dst: "j"),
        Load(buf: "a", index: "j", width: "4"),"#,
        ),
    );
    assert!(
        err.contains("kernel[2].Load.index") && err.contains("declares no contents"),
        "{err}"
    );
}

#[test]
fn a_barrier_under_divergence_is_refused() {
    let err = refused(
        "divergent.ron",
        &wl(
            r#"(name: "a", bytes: "n * 4")"#,
            "",
            r#"        If(cond: "threadIdx.x % 2 == 0", then: [Sync]),"#,
        ),
    );
    assert!(err.contains("barrier under divergence"), "{err}");
    assert!(err.contains("kernel[1].then[0]"), "{err}");
}

#[test]
fn warps_that_reach_different_barriers_are_refused() {
    // Uniform in each warp, but not across the block.
    let err = refused(
        "mismatch.ron",
        &wl(
            r#"(name: "a", bytes: "n * 4")"#,
            "",
            r#"        If(cond: "threadIdx.x < 64", then: [Sync]),"#,
        ),
    );
    assert!(err.contains("do not reach the same barriers"), "{err}");
}

#[test]
fn a_permutation_of_a_buffer_that_is_not_whole_elements_is_refused() {
    let err = refused(
        "ragged.ron",
        &wl(
            r#"(name: "idx", bytes: "n * 4 + 2", init: Permutation(elem: 4, seed: 1))"#,
            "",
            r#"        Load(buf: "idx", index: "i", width: "4", dst: "j"),"#,
        ),
    );
    assert!(
        err.contains("buffers[0].bytes") && err.contains("not a whole number of 4-byte elements"),
        "{err}"
    );
}

#[test]
fn bad_contents_are_refused_with_their_field() {
    for (name, buf, kernel, want) in [
        (
            "window.ron",
            r#"(name: "idx", bytes: "n * 4", init: WindowPermutation(elem: 4, window: "n + 1", seed: 1))"#,
            r#"        Load(buf: "idx", index: "i", width: "4"),"#,
            "buffers[0].init.window",
        ),
        (
            "elem.ron",
            r#"(name: "idx", bytes: "n * 4", init: Iota(elem: 2))"#,
            r#"        Load(buf: "idx", index: "i", width: "4"),"#,
            "buffers[0].init.elem",
        ),
        (
            "range.ron",
            r#"(name: "idx", bytes: "n * 4", init: Const(elem: 4, value: "4294967296"))"#,
            r#"        Load(buf: "idx", index: "i", width: "4"),"#,
            "does not fit in a 4-byte element",
        ),
        (
            "readonly.ron",
            r#"(name: "idx", bytes: "n * 4", init: Iota(elem: 4))"#,
            r#"        Store(buf: "idx", index: "i", width: "4"),"#,
            "read-only",
        ),
        (
            "file.ron",
            r#"(name: "idx", bytes: "n * 4", init: File(elem: 4, path: "no-such-file.bin"))"#,
            r#"        Load(buf: "idx", index: "i", width: "4"),"#,
            "buffers[0].init.path",
        ),
    ] {
        let err = refused(name, &wl(buf, "", kernel));
        assert!(err.contains(want), "{name}: {err}");
    }
}

#[test]
fn values_from_a_file_feed_addresses() {
    // idx[i] = n - 1 - i, as raw little-endian words.
    let n = 1024u32;
    let bytes: Vec<u8> = (0..n).flat_map(|i| (n - 1 - i).to_le_bytes()).collect();
    // The workload names its data file relative to itself: both in one folder.
    let dir = super::TempDir::new("shared-file");
    std::fs::write(dir.join("rev.bin"), bytes).unwrap();
    let text = wl(
        r#"(name: "idx", bytes: "n * 4", init: File(elem: 4, path: "rev.bin")), (name: "a", bytes: "n * 4")"#,
        "",
        r#"        Load(buf: "idx", index: "i", width: "4", dst: "j"),
        Load(buf: "a", index: "j", width: "4"),"#,
    );
    let path = dir.join("reverse.ron");
    std::fs::write(&path, text).unwrap();
    let w = engine::load_workload(&path).unwrap();
    let r = &run(&device("h200"), &w, &[])[0];
    // A reversed warp still reads one line of 4 sectors per instruction.
    assert_eq!(r.counters.requests_ld, 2 * 1024 / 32);
    assert_eq!(r.counters.sectors_ld, 2 * 1024 / 8);
}

#[test]
fn sampled_runs_keep_the_shared_counters_exact() {
    // 40 waves of blocks, each warp a 32-way conflicting store and load.
    let text = wl(
        r#"(name: "a", bytes: "n * 4")"#,
        r#"(name: "s", bytes: "4096")"#,
        r#"        Store(buf: "s", index: "threadIdx.x % 32 * 32", width: "4"),
        Sync,
        Load(buf: "s", index: "threadIdx.x % 32 * 32", width: "4", dst: "v"),
        Store(buf: "a", index: "i", width: "4", src: ["v"]),"#,
    );
    let path = temp("sampled.ron", &text);
    let w = engine::load_workload(std::path::Path::new(&path)).unwrap();
    let n = 256 * 1056 * 40;
    let point = w.points(&[("n".into(), vec![n])]).unwrap().remove(0);
    let opts = engine::RunOptions {
        sampling: engine::Sampling::On,
        ..Default::default()
    };
    // On the H100: the H200's SM, without the DRAM refresh that keeps
    // this short kernel's waves from settling within its 40 on the H200
    // (it is then timed whole, which would leave nothing to check here).
    let r = engine::run_point_with(&device("h100"), &w, &point, &opts).unwrap();
    assert!(r.sample.fraction() < 1.0, "not sampled: {:?}", r.sample);
    let c = &r.counters;
    let warps = n as u64 / 32;
    assert_eq!(c.shared_requests_ld, warps);
    assert_eq!(c.shared_requests_st, warps);
    assert_eq!(c.shared_wavefronts_ld, 32 * warps);
    assert_eq!(c.shared_conflicts_st, 31 * warps);
}

#[test]
fn a_load_whose_address_is_loaded_waits_for_it() {
    // One warp: a[idx[i]] against a[i] with idx the identity (same
    // addresses): the dependent load starts a whole memory round trip later.
    let time = |index: &str| {
        let text = format!(
            r#"Workload(
    name: "chain",
    params: [],
    buffers: [
        (name: "idx", bytes: "128", init: Iota(elem: 4)),
        (name: "a", bytes: "128"),
        (name: "out", bytes: "128"),
    ],
    grid: ["1"],
    block: ["32"],
    useful_bytes: "128",
    kernel: [
        Let("i", "threadIdx.x"),
        Load(buf: "idx", index: "i", width: "4", dst: "j"),
        Load(buf: "a", index: "{index}", width: "4", dst: "v"),
        Store(buf: "out", index: "i", width: "4", src: ["v"]),
    ],
)"#
        );
        let path = temp(&format!("chain-{index}.ron"), &text);
        let w = engine::load_workload(std::path::Path::new(&path)).unwrap();
        run(&device("h200"), &w, &[])[0].time_ns()
    };
    let (dep, indep) = (time("j"), time("i"));
    let dev = device("h200");
    let miss_ns = dev.dram_latency_cycles as f64 / dev.sm.clock_mhz * 1000.0;
    assert!(
        dep - indep > 0.9 * miss_ns,
        "dependent {dep} ns, independent {indep} ns, a miss {miss_ns} ns"
    );
}

#[test]
fn back_to_back_barriers_cost_what_the_h200_measured() {
    // tools/measure/shared/results/micro.txt: one block, 1024
    // __syncthreads() in a row (unrolled by 64 in the SASS): 14.2, 28.2
    // and 76.2 cycles each for 1, 8 and 32 warps. The two sm.barrier_*
    // fields come from the first two; the third checks the mechanism.
    let dev = device("h200");
    let kernel = |threads: u32, trips: u32| {
        let syncs = vec!["Sync"; 64].join(", ");
        let text = format!(
            r#"Workload(
    name: "barriers",
    params: [],
    buffers: [(name: "a", bytes: "4")],
    grid: ["1"],
    block: ["{threads}"],
    useful_bytes: "0",
    kernel: [For(var: "k", from: "0", to: "{trips}", body: [{syncs}])],
)"#
        );
        let path = temp(&format!("barriers-{threads}-{trips}.ron"), &text);
        let w = engine::load_workload(std::path::Path::new(&path)).unwrap();
        run(&dev, &w, &[])[0].counters.time_ps as f64
    };
    for (warps, measured) in [(1u32, 14.2), (8, 28.2), (32, 76.2)] {
        let per_ps = (kernel(32 * warps, 17) - kernel(32 * warps, 1)) / 1024.0;
        let cycles = per_ps * dev.sm.clock_mhz / 1e6;
        assert!(
            (cycles - measured).abs() / measured < 0.05,
            "{warps} warps: {cycles:.1} cycles per barrier, measured {measured}"
        );
    }
}

//! Hostile input: each found by hand or by `gpusim-fuzz`, each refused
//! with a message that names the file, field and reason (no crash, no
//! hang, no silently wrong result).

use super::cli::gpusim;

fn temp(name: &str, text: &str) -> super::TempFile {
    super::TempFile::new("hostile", name, text)
}

/// A workload with `grid`, `bytes` and loop bound `to` substituted.
fn kernel(grid: &str, bytes: &str, to: &str) -> String {
    format!(
        r#"Workload(
    name: "hostile",
    description: "a kernel built to run too long",
    params: [(name: "n", default: 1024, doc: "elements")],
    buffers: [(name: "v", bytes: "{bytes}")],
    grid: ["{grid}"],
    block: ["256"],
    regs_per_thread: 8,
    useful_bytes: "n * 4",
    kernel: [
        Let("id", "blockIdx.x * blockDim.x + threadIdx.x"),
        For(var: "k", from: "0", to: "{to}", body: [
            Store(buf: "v", index: "id", width: "4"),
        ]),
    ],
)"#
    )
}

/// `gpusim run`'s arguments for seed 002's stride kernel on `config`, 1 MiB
/// of floats, at `strides`, then `extra`.
fn stride_run(config: &str, strides: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        config,
        "workloads/stride.ron",
        "--set",
        "nMB=1",
        "--set",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(["elem=4".into(), "--set".into(), format!("stride={strides}")]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn refused(args: &[&str], want: &[&str]) {
    let t0 = std::time::Instant::now();
    let (ok, _, err) = gpusim(args);
    assert!(!ok, "accepted: {args:?}");
    for w in want {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    // Refused up front, not after running (generous for a loaded machine).
    assert!(t0.elapsed().as_secs() < 10, "{:?}", t0.elapsed());
}

#[test]
fn a_loop_of_ten_to_the_twelve_iterations_is_refused_before_it_runs() {
    let f = temp("loop.ron", &kernel("n / 256", "n * 4", "1000000000000"));
    refused(
        &["run", "configs/h200.ron", &f],
        &[
            &f,
            "at least",
            "warp instructions",
            "--max-warp-instructions",
        ],
    );
}

#[test]
fn a_grid_of_two_to_the_thirty_one_blocks_is_refused_before_it_runs() {
    let f = temp("grid.ron", &kernel("2147483648", "8796093022208", "1"));
    refused(
        &["run", "configs/h200.ron", &f],
        &[&f, "2147483648 blocks", "--max-warp-instructions"],
    );
}

#[test]
fn the_budget_can_be_lowered() {
    refused(
        &[
            "run",
            "configs/c2050.ron",
            "workloads/offset.ron",
            "--max-warp-instructions",
            "1000",
        ],
        &["budget of 1000"],
    );
}

/// Found by the fuzzer: 100,000 nested parentheses overflowed the
/// parser's stack (an abort, not an error).
#[test]
fn a_deeply_nested_expression_is_an_error_not_a_stack_overflow() {
    let src = std::fs::read_to_string(super::repo("workloads/offset.ron")).unwrap();
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let f = temp(
        "deep.ron",
        &src.replacen("useful_bytes: \"", &format!("useful_bytes: \"{deep} + "), 1),
    );
    refused(
        &["run", "configs/h200.ron", &f],
        &[&f, "useful_bytes", "expression too long"],
    );
    let f = temp(
        "deep2.ron",
        &src.replacen(
            "useful_bytes: \"",
            &format!("useful_bytes: \"{} 1 + ", "-".repeat(200)),
            1,
        ),
    );
    refused(&["run", "configs/h200.ron", &f], &["nested more than 64"]);
}

/// Found by the fuzzer: an ALU latency of 2^31 cycles made every calendar
/// span seconds of picoseconds, allocating gigabytes.
#[test]
fn absurd_device_values_are_refused_with_the_field() {
    let src = std::fs::read_to_string(super::repo("configs/h200.ron")).unwrap();
    for (from, to, field) in [
        (
            "alu_latency_cycles: 4",
            "alu_latency_cycles: 2147483647",
            "sm.alu_latency_cycles",
        ),
        ("clock_mhz: ", "clock_mhz: NaN, // ", "sm.clock_mhz"),
        ("clock_mhz: ", "clock_mhz: 0.0, // ", "sm.clock_mhz"),
        ("clock_mhz: ", "clock_mhz: -inf, // ", "sm.clock_mhz"),
        (
            "data_rate_gbps: ",
            "data_rate_gbps: 1e-300, // ",
            "data_rate_gbps",
        ),
    ] {
        assert!(src.contains(from), "{from}");
        let f = temp("dev.ron", &src.replacen(from, to, 1));
        refused(&["run", &f, "workloads/offset.ron"], &[&f, field]);
    }
}

/// A range whose width overflowed 64 bits was accepted by a subtraction
/// that wrapped.
#[test]
fn a_range_wider_than_sixty_four_bits_is_refused() {
    refused(
        &[
            "run",
            "configs/h200.ron",
            "workloads/offset.ron",
            "--set",
            "offset=-9223372036854775808..=9223372036854775807",
        ],
        &["huge range"],
    );
    // Found by the fuzzer: the same in --config-set.
    refused(
        &[
            "run",
            "configs/h200.ron",
            "workloads/offset.ron",
            "--config-set",
            "sm.count=-9223372036854775808..=655360",
        ],
        &["more than 10000 values"],
    );
}

/// Workload text with one part of the default kernel replaced.
fn variant(from: &str, to: &str) -> String {
    let src = kernel("n / 256", "n * 4", "1");
    assert!(src.contains(from), "{from}");
    src.replacen(from, to, 1)
}

/// Found by the fuzzer (with overflow checks): each overflowed 64- or
/// 32-bit arithmetic, which a release build wraps silently.
#[test]
fn overflowing_workload_numbers_are_errors() {
    for (from, to, want) in [
        (
            r#"default: 1024, doc"#,
            r#"default: 1024, sweep: Range(from: -9223372036854775808, to: 9223372036854775807), doc"#,
            "more than a million values",
        ),
        (
            r#"buffers: [(name: "v", bytes: "n * 4")]"#,
            r#"buffers: [(name: "v", bytes: "n * 4"), (name: "w", bytes: "9223372036854775807"), (name: "x", bytes: "9223372036854775807")]"#,
            "64-bit address space",
        ),
        (
            "regs_per_thread: 8",
            "regs_per_thread: 4294967295",
            "the device lets a thread use at most 63",
        ),
        (
            r#"block: ["256"]"#,
            r#"block: ["65536", "65536", "2"]"#,
            "threads; at most",
        ),
    ] {
        let f = temp("overflow.ron", &variant(from, to));
        refused(&["run", "configs/c2050.ron", &f, "-j", "1"], &[&f, want]);
    }
}

#[test]
fn a_parameter_named_like_a_built_in_or_unusable_is_refused() {
    // `warpSize` as a parameter was 64 in the grid and 32 in the kernel:
    // half the array untouched, and no error.
    for (name, want) in [
        ("warpSize", "is a built-in"),
        ("blockDim.x", "not a name expressions can use"),
        ("a b", "not a name expressions can use"),
        ("", "not a name expressions can use"),
        ("2n", "not a name expressions can use"),
    ] {
        let text = kernel("n / 256", "n * 4", "1").replace(
            r#"params: [(name: "n", default: 1024, doc: "elements")],"#,
            &format!(r#"params: [(name: "n", default: 1024), (name: "{name}", default: 64)],"#),
        );
        let f = temp(&format!("param{}.ron", name.len()), &text);
        refused(
            &["run", "configs/h200.ron", &f],
            &[&f, "params[1].name", want],
        );
    }
}

/// A workload of `grid` blocks whose kernel is empty.
fn empty_kernel(grid: &str) -> String {
    format!(
        r#"Workload(
    name: "empty",
    params: [(name: "n", default: 1024)],
    buffers: [(name: "v", bytes: "n * 4")],
    grid: [{grid}],
    block: ["256"],
    useful_bytes: "n * 4",
    kernel: [],
)"#
    )
}

#[test]
fn a_huge_grid_of_empty_warps_is_refused_before_it_runs() {
    // No instruction to count, yet every warp is work: with every block
    // timed this ran for hours.
    let f = temp("empty_grid.ron", &empty_kernel(r#""65535", "65535""#));
    refused(
        &["run", "configs/h200.ron", &f, "--sample", "off"],
        &[
            &f,
            "4294836225 blocks",
            "at least 1 each",
            "--max-warp-instructions",
        ],
    );
}

#[test]
fn a_kernel_too_long_to_count_in_picoseconds_is_an_error_not_a_wrapped_time() {
    // 2^62 blocks: the extrapolated time passed 2^64 ps and wrapped to a
    // plausible 13.7 us, with exit status 0. (About 2^63 blocks, the
    // largest grid compute capability 3.0 and later launch.)
    let f = temp(
        "wrap.ron",
        &empty_kernel(r#""2147483647", "65535", "65535""#),
    );
    refused(
        &[
            "run",
            "configs/h200.ron",
            &f,
            "--max-warp-instructions",
            "18446744073709551615",
        ],
        &[&f, "longer than gpusim can count in picoseconds"],
    );
}

#[test]
fn devices_and_variants_whose_rows_could_not_be_told_apart_are_refused() {
    // Two files naming one device: their rows and plot series merged.
    let same = std::fs::read_to_string("configs/c2050.ron")
        .unwrap()
        .replace("count: 14,", "count: 7,");
    let f = temp("c2050_7.ron", &same);
    let args = ["--set", "nMB=1", "--set", "elem=4", "--set", "stride=1"];
    let mut run = vec!["run", "configs/c2050.ron", &f, "workloads/stride.ron"];
    run.extend(args);
    refused(
        &run,
        &["configs/c2050.ron", &f, "both name a device `c2050`"],
    );
    // Two variants of one name: the second's values labelled both.
    let root = env!("CARGO_MANIFEST_DIR");
    let study = |variants: &str, sets: &str| {
        format!(
            r#"Study(name: "s", description: "d", devices: ["{root}/configs/c2050.ron"],
    variants: [{variants}], config_set: [{sets}],
    workloads: ["{root}/workloads/stride.ron"], set: ["nMB=1", "elem=4", "stride=1"])"#
        )
    };
    let dir = super::TempDir::new("hostile-study");
    let out = dir.to_str().unwrap();
    let f = temp(
        "dupvariant.ron",
        &study(
            r#"(name: "a", config_set: []), (name: "a", config_set: ["sm.count=7"])"#,
            "",
        ),
    );
    refused(
        &["study", &f, "--out", out],
        &[&f, "variant `a` is named twice"],
    );
    // A variant's field that the study's config_set also sets was dropped.
    let f = temp(
        "conflict.ron",
        &study(
            r#"(name: "a", config_set: ["sm.count=7"])"#,
            r#""sm.count=5,6""#,
        ),
    );
    refused(
        &["study", &f, "--out", out],
        &[&f, "variant `a` sets sm.count"],
    );
}

#[test]
fn explain_stops_a_long_warp_instead_of_growing_without_bound() {
    // Each of 10^12 trips loads: the text grew past a gigabyte.
    let f = temp(
        "explain_loop.ron",
        &kernel("n / 256", "n * 4", "1000000000000"),
    );
    let t0 = std::time::Instant::now();
    let (ok, out, err) = gpusim(&["explain", "configs/c2050.ron", &f]);
    assert!(ok, "{err}");
    assert!(out.ends_with("the first 1000 memory instructions shown; the warp goes on\n"));
    assert!(out.len() < 1 << 20, "{} bytes", out.len());
    assert!(t0.elapsed().as_secs() < 10, "{:?}", t0.elapsed());
    // A loop without memory instructions ends in the warp's own limit.
    let alu = kernel("n / 256", "n * 4", "1000000000000").replace(
        r#"Store(buf: "v", index: "id", width: "4"),"#,
        r#"Let("x", "k + 1"),"#,
    );
    let f = temp("explain_alu.ron", &alu);
    let (ok, _, err) = gpusim(&["explain", "configs/c2050.ron", &f]);
    assert!(!ok && err.contains("a loop that does not end?"), "{err}");
}

#[test]
fn outputs_that_would_be_lost_or_destroy_an_input_are_refused_before_the_run() {
    let dev = temp(
        "victim.ron",
        &std::fs::read_to_string("configs/c2050.ron").unwrap(),
    );
    let out = temp("out.csv", "");
    let with = |extra: &[&str]| stride_run(&dev, "1", extra);
    let refused = |args: Vec<String>, want: &[&str]| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&a, want)
    };
    // The device file was replaced by the CSV, exit status 0.
    refused(with(&["--csv", &dev]), &["--csv", "an input of this run"]);
    refused(with(&["--csv", &out, "--json", &out]), &["both write"]);
    refused(
        with(&["--csv", "-", "--json", "-"]),
        &["only one output can go to stdout"],
    );
    let dir = std::env::temp_dir();
    refused(with(&["--csv", dir.to_str().unwrap()]), &["is a directory"]);
    refused(with(&["--plot", "out.pdf"]), &[".svg or .png"]);
    refused(with(&["--plot-x", "stride"]), &["give --plot as well"]);
    // A repeated --set kept its last value only.
    refused(with(&["--set", "nMB=2"]), &["--set nMB is given twice"]);
    assert!(std::fs::read_to_string(&*dev).unwrap().starts_with("//"));
}

#[test]
fn a_shard_row_missing_a_field_is_refused_by_merge() {
    let dir = super::TempDir::new("hostile-merge");
    let shard = |i: &str| {
        let p = dir.join(format!("s{}.csv", &i[..1]));
        let args = stride_run(
            "configs/c2050.ron",
            "1,2",
            &["--shard", i, "--csv", p.to_str().unwrap(), "--quiet"],
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = gpusim(&args);
        assert!(ok, "{err}");
        p
    };
    let (a, b) = (shard("1/2"), shard("2/2"));
    // Drop the last field of the row: it was merged as it was.
    let text = std::fs::read_to_string(&a).unwrap();
    let cut: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(k, l)| {
            if k == 2 {
                l[..l.rfind(',').unwrap()].to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&a, cut.join("\n") + "\n").unwrap();
    let out = dir.join("out.csv");
    let (ok, _, err) = gpusim(&[
        "merge",
        out.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains(":3:") && err.contains("fields, the header"),
        "{err}"
    );
}

/// A cache of another line or sector size than the coalescer's was
/// accepted and ran as if it had the coalescer's: the what-if changed
/// nothing.
#[test]
fn a_cache_geometry_the_model_does_not_have_is_refused_not_ignored() {
    let ours = "128-byte lines of four 32-byte sectors";
    for (set, want) in [
        ("l2.slice.sector_bytes=64", ["l2.slice.sector_bytes", ours]),
        ("l2.slice.line_bytes=64", ["l2.slice.line_bytes", ours]),
        ("l1.cache.line_bytes=64", ["l1.cache.line_bytes", ours]),
        ("l2.slice.line_bytes=256", ["l2.slice", "1 to 4 sectors"]),
    ] {
        refused(
            &[
                "run",
                "configs/h200.ron",
                "workloads/offset.ron",
                "--config-set",
                set,
            ],
            &want,
        );
    }
}

/// A grid past the compute capability's limits cannot launch on the
/// device; it was timed as if it could.
#[test]
fn a_grid_the_compute_capability_cannot_launch_is_refused() {
    refused(
        &[
            "run",
            "configs/c870.ron",
            "workloads/offset.ron",
            "--set",
            "nMB=256",
            "--set",
            "offset=0",
            "--set",
            "elem=4",
        ],
        &["x dimension is 262144", "1.0's limit of 65535"],
    );
    // The same grid launches from compute capability 3.0 on.
    let (ok, _, err) = gpusim(&[
        "run",
        "configs/p100.ron",
        "workloads/empty.ron",
        "--set",
        "blocks=262144",
        "--set",
        "block=32",
        "--quiet",
    ]);
    assert!(ok, "{err}");
}

/// A study's bad `set` or `config_set` value was reported as the command
/// line's `--set` or `--config-set`, which the user never typed.
#[test]
fn a_studys_bad_values_are_named_as_the_studys_fields() {
    let root = env!("CARGO_MANIFEST_DIR");
    let study = |sets: &str, config_sets: &str| {
        format!(
            r#"Study(name: "s", devices: ["{root}/configs/c2050.ron"], config_set: [{config_sets}],
    workloads: ["{root}/workloads/stride.ron"], set: [{sets}])"#
        )
    };
    let dir = super::TempDir::new("hostile-study-fields");
    let out = dir.to_str().unwrap();
    let f = temp("badset.ron", &study(r#""nMB=abc""#, ""));
    refused(
        &["study", &f, "--out", out],
        &[&f, "set nMB=abc: `abc` is not an integer"],
    );
    let f = temp("badconfig.ron", &study(r#""nMB=1""#, r#""l1=Nonsense""#));
    refused(
        &["study", &f, "--out", out],
        &["configs/c2050.ron", "(from config_set l1=Nonsense)", &f],
    );
    let (_, _, err) = gpusim(&["study", &f, "--out", out]);
    assert!(!err.contains("--"), "{err}");
}

/// `--config-set l2.slices=4 --config-set l2=None` ran without an L2 and
/// labelled its rows `l2.slices=4`; the other order was refused. A field
/// and the whole that holds it cannot both be set, in either order, nor a
/// field twice within one variant.
#[test]
fn overrides_of_a_field_and_the_whole_holding_it_are_refused() {
    for (a, b) in [("l2.slices=4", "l2=None"), ("l2=None", "l2.slices=4")] {
        refused(
            &[
                "run",
                "configs/h200.ron",
                "workloads/offset.ron",
                "--config-set",
                a,
                "--config-set",
                b,
            ],
            &["overlap", "the value given for `l2` is the whole of it"],
        );
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = super::TempDir::new("hostile-nested");
    let out = dir.to_str().unwrap();
    for (variant, global) in [
        (r#""l2=None", "l2.slices=4""#, ""),
        (r#""sm.count=7", "sm.count=8""#, ""),
        (r#""l2.slices=4""#, r#""l2=None""#),
    ] {
        let f = temp(
            "nested.ron",
            &format!(
                r#"Study(name: "s", devices: ["{root}/configs/h200.ron"],
    variants: [(name: "a", config_set: [{variant}])], config_set: [{global}],
    workloads: ["{root}/workloads/offset.ron"], set: ["nMB=1"])"#
            ),
        );
        refused(&["study", &f, "--out", out], &[&f, "variant `a`"]);
    }
}

/// Found by the fuzzer: a column time longer than the refresh interval
/// left a bank no room for an access between refreshes, and each access
/// booked refresh after refresh until memory ran out (24 GB for a 1 MiB
/// kernel).
#[test]
fn a_bank_with_no_room_between_refreshes_is_refused() {
    refused(
        &[
            "run",
            "configs/h200.ron",
            "workloads/offset.ron",
            "--set",
            "nMB=1",
            "--config-set",
            "dram.t_ccd_l_ns=5000",
        ],
        &["t_refi_ns", "no room for one access between refreshes"],
    );
}

/// A tFAW of 100 us kept a 1 MiB kernel's backlog of activations in the
/// DRAM's calendars: 789 MB on the H200, and more with the kernel.
#[test]
fn a_dram_command_rate_far_beyond_any_gpu_is_refused() {
    refused(
        &[
            "run",
            "configs/h200.ron",
            "workloads/offset.ron",
            "--config-set",
            "dram.t_faw_ns=100000",
        ],
        &["dram.t_faw_ns"],
    );
}

/// Found by the fuzzer: a 1 MHz SM beside a 65535-bit DRAM bus (a burst of
/// 1 ps) made each request's hold span hundreds of millions of the
/// DRAM's intervals; two blocks ran for minutes.
#[test]
fn an_sm_clock_and_a_dram_burst_a_thousand_times_apart_are_refused() {
    for sets in [
        ["sm.clock_mhz=1", "dram.channel_bits=65535"],
        ["sm.clock_mhz=100000", "dram.data_rate_gbps=0.01"],
    ] {
        refused(
            &[
                "run",
                "configs/c2050.ron",
                "workloads/offset.ron",
                "--config-set",
                sets[0],
                "--config-set",
                sets[1],
            ],
            &["sm.clock_mhz", "more than 1000 times apart"],
        );
    }
}

/// Found by the fuzzer: an access at byte 2^63 - 1 of a buffer overflowed
/// while its error was written (the end of the bytes it named).
#[test]
fn an_access_at_the_last_byte_offset_is_an_error_with_its_range() {
    let f = temp(
        "far.ron",
        r#"Workload(
    name: "far",
    params: [(name: "n", default: 32)],
    buffers: [(name: "v", bytes: "n")],
    grid: ["1"],
    block: ["1"],
    useful_bytes: "n",
    kernel: [Load(buf: "v", byte: "threadIdx.x + 9223372036854775807", width: "1", dst: "x")],
)"#,
    );
    refused(
        &["run", "configs/h200.ron", &f],
        &["out-of-bounds access: bytes 9223372036854775807..9223372036854775808"],
    );
}

/// Found by the fuzzer: 4096 channels of 65536 banks each (each within its
/// own range) asked for 2^28 banks' bookings.
#[test]
fn more_banks_over_all_channels_than_the_model_keeps_are_refused() {
    refused(
        &[
            "run",
            "configs/v100.ron",
            "workloads/offset.ron",
            "--config-set",
            "dram.channels=4096",
            "--config-set",
            "dram.banks=65536",
        ],
        &["dram.banks", "(over all channels)", "268435456"],
    );
}

/// A parameter value the kernel has no meaning for is refused before the
/// run by the workload's `requires`, naming the condition, its line and
/// the point: misalign's mode 9 used to run an empty kernel and report a
/// bandwidth, latmix's v = 9 (before it was given a meaning) to fail
/// mid-run on a division by zero.
#[test]
fn a_parameter_value_the_kernel_has_no_meaning_for_is_refused() {
    refused(
        &[
            "run",
            "configs/h200.ron",
            "workloads/misalign.ron",
            "--set",
            "nMB=1",
            "--set",
            "mode=9",
        ],
        &[
            "workloads/misalign.ron:",
            "requires[0]",
            "`mode >= 0 && mode <= 8` does not hold at",
            "mode=9",
            "mode is one of 0-8",
        ],
    );
    refused(
        &[
            "run",
            "configs/h200.ron",
            "workloads/latmix.ron",
            "--set",
            "nMB=1",
            "--set",
            "v=0..=11",
        ],
        &["workloads/latmix.ron:", "v=11", "v is one of 0-10"],
    );
    // A condition that cannot be evaluated is named like any expression.
    let bad = temp(
        "requires.ron",
        &kernel("4", "4096", "1").replace(
            "    buffers:",
            "    requires: [(\"n > m\", \"n is larger than m\")],\n    buffers:",
        ),
    );
    refused(
        &["run", "configs/h200.ron", &bad],
        &["requires[0].0", "unknown name `m`"],
    );
}

/// A register allocation unit or warp step of 0 is refused, naming the
/// field (it was taken as 1).
#[test]
fn a_register_allocation_of_zero_units_is_refused() {
    let src = std::fs::read_to_string(super::repo("configs/h200.ron")).unwrap();
    for (from, to, field) in [
        (
            "unit: 256, warp_step: 4",
            "unit: 0, warp_step: 4",
            "sm.register_allocation.unit",
        ),
        (
            "unit: 256, warp_step: 4",
            "unit: 256, warp_step: 0",
            "sm.register_allocation.warp_step",
        ),
    ] {
        assert!(src.contains(from));
        let f = temp("zero.ron", &src.replace(from, to));
        refused(&["describe", &f], &[&f, field, "must be at least 1"]);
    }
}

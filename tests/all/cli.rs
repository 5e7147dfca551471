//! The command line, as a user runs it.

use super::*;
use std::process::Command;

pub fn gpusim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .current_dir(repo(""))
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_teaches() {
    let (ok, out, _) = gpusim(&["run", "--help"]);
    assert!(ok);
    assert!(out.contains("EXAMPLES"), "{out}");
    assert!(out.contains("--set"));
}

/// `--json` gives each point's load sites with their mean latency and its
/// percentiles, in order, the mean between the 10th and the 99th.
#[test]
fn json_load_sites_have_latency_percentiles() {
    let (ok, out, err) = gpusim(&[
        "run",
        "configs/h200.ron",
        "workloads/offset.ron",
        "--set",
        "nMB=4",
        "--set",
        "elem=4",
        "--set",
        "offset=0",
        "--json",
        "-",
        "--quiet",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sites = v[0]["load_sites"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{out}");
    let s = &sites[0];
    let q: Vec<f64> = ["p10", "p50", "p90", "p99"]
        .iter()
        .map(|p| s[format!("latency_{p}_cycles")].as_f64().unwrap())
        .collect();
    assert!(q[0] > 0.0 && q.windows(2).all(|w| w[0] <= w[1]), "{s}");
    let mean = s["latency_cycles"].as_f64().unwrap();
    assert!(q[0] <= mean && mean <= q[3], "{s}");
}

#[test]
fn csv_has_the_documented_columns() {
    let dir = super::TempDir::new("cli");
    let csv = dir.join("o.csv");
    let (ok, _, err) = gpusim(&[
        "run",
        "configs/c2050.ron",
        "workloads/offset.ron",
        "--set",
        "nMB=1",
        "--set",
        "offset=0,1",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let head = text.lines().next().unwrap();
    assert!(head.starts_with(
        "device,workload,nMB,elem,block,offset,bytes,time_ns,bandwidth_gbps,\
         l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    ));
    for col in [
        "gpu__time_duration.sum",
        "transactions_32b",
        "transactions_128b",
        "dram__bytes_write.sum",
    ] {
        assert!(head.contains(col), "{col}");
    }
    assert_eq!(text.lines().count(), 1 + 4, "elem 4, 8 x offset 0, 1");
}

#[test]
fn output_is_identical_for_one_and_two_threads() {
    let args = |j: &'static str| {
        vec![
            "run",
            "configs/h200.ron",
            "workloads/stride.ron",
            "--set",
            "nMB=1",
            "--csv",
            "-",
            "-j",
            j,
        ]
    };
    let (ok1, a, e1) = gpusim(&args("1"));
    let (ok2, b, e2) = gpusim(&args("2"));
    assert!(ok1 && ok2, "{e1}{e2}");
    assert_eq!(a.lines().count(), 65);
    assert_eq!(a, b);
}

/// Writes `text` to a temporary file named `name` and runs gpusim on it; returns stderr.
fn bad(kind: &str, name: &str, text: &str, extra: &[&str]) -> String {
    let dir = super::TempDir::new("bad");
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    let f = f.to_str().unwrap().to_string();
    let mut args: Vec<&str> = vec!["run"];
    if kind == "config" {
        args.extend([f.as_str(), "workloads/offset.ron"]);
    } else {
        args.extend(["configs/h200.ron", f.as_str()]);
    }
    args.extend(extra);
    let (ok, _, err) = gpusim(&args);
    assert!(!ok, "should fail: {name}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn offset_with(from: &str, to: &str) -> String {
    std::fs::read_to_string(repo("workloads/offset.ron"))
        .unwrap()
        .replace(from, to)
}

#[test]
fn bad_input_gets_a_clear_error() {
    // Malformed RON: file, line and column.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("grid: [", "grid: ("),
        &["--set", "nMB=1"],
    );
    assert!(e.contains("w.ron:") && e.contains(":"), "{e}");
    // Unknown field.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("regs_per_thread", "regs_per_threads"),
        &[],
    );
    assert!(e.contains("regs_per_threads"), "{e}");
    // Missing field.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("useful_bytes: \"2 * n * elem\",", ""),
        &[],
    );
    assert!(e.contains("useful_bytes"), "{e}");
    // Zero size.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("(n + 32) * elem", "0 * n"),
        &[],
    );
    assert!(
        e.contains("buffers[0].bytes") && e.contains("positive"),
        "{e}"
    );
    // Negative size through a parameter.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("", ""),
        &["--set", "nMB=-4"],
    );
    assert!(e.contains("grid[0]") || e.contains("bytes"), "{e}");
    // Out-of-bounds access: the kernel's location, the block and thread.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("(n + 32) * elem", "n * elem"),
        &["--set", "nMB=1", "--set", "offset=1", "--set", "elem=4"],
    );
    assert!(
        e.contains("out-of-bounds") && e.contains("kernel[1]") && e.contains("blockIdx"),
        "{e}"
    );
    // Misaligned 8-byte access.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with(
            "index: \"i\", width: \"elem\", dst",
            "byte: \"i * 4\", width: \"elem\", dst",
        ),
        &["--set", "nMB=1", "--set", "elem=8"],
    );
    assert!(e.contains("misaligned 8-byte"), "{e}");
    // Division by zero (constant: caught when compiling, with the expression).
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("\"n / block\"", "\"n / (block - 256)\""),
        &[],
    );
    assert!(
        e.contains("division by zero") && e.contains("grid[0]"),
        "{e}"
    );
    // Division by zero in one lane at run time.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("+ offset\")", "+ offset / (threadIdx.x - 5)\")"),
        &["--set", "nMB=1"],
    );
    assert!(
        e.contains("division by zero") && e.contains("threadIdx=(5,0,0)"),
        "{e}"
    );
    // Unknown name in an expression: line and column.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("+ offset\")", "+ ofset\")"),
        &[],
    );
    assert!(
        e.contains("unknown name `ofset`") && e.contains("kernel[0]"),
        "{e}"
    );
    // --set of an unknown parameter.
    let e = bad(
        "workload",
        "w.ron",
        &offset_with("", ""),
        &["--set", "strid=2"],
    );
    assert!(e.contains("no parameter `strid`"), "{e}");
    // A config value that makes no sense.
    let cfg = std::fs::read_to_string(repo("configs/h200.ron")).unwrap();
    let e = bad(
        "config",
        "d.ron",
        &cfg.replace("count: 132,", "count: 0,"),
        &[],
    );
    assert!(e.contains("sm.count"), "{e}");
    let e = bad(
        "config",
        "d.ron",
        &cfg.replace("ways: 20,", "ways: 0,"),
        &[],
    );
    assert!(e.contains("l2.slice"), "{e}");
}

#[test]
fn explain_shows_the_transactions() {
    let (ok, out, err) = gpusim(&[
        "explain",
        "configs/c1060.ron",
        "workloads/offset.ron",
        "--set",
        "offset=1",
        "--set",
        "elem=4",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("1 x 128-B transaction"), "{out}");
    assert!(out.contains("1 x 64-B transaction"), "{out}");
}

/// A fault in several points of a parallel sweep used to be reported from
/// whichever point failed first in time; it must be the first in order.
#[test]
fn error_report_does_not_depend_on_thread_count() {
    let dir = super::TempDir::new("err");
    let f = dir.join("w.ron");
    std::fs::write(
        &f,
        offset_with(
            "index: \"i\", width: \"elem\", dst",
            "byte: \"i * 4\", width: \"elem\", dst",
        ),
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let run = |j: &str| {
        gpusim(&[
            "run",
            "configs/c2050.ron",
            f,
            "--set",
            "nMB=1",
            "-q",
            "-j",
            j,
        ])
    };
    let (ok1, _, e1) = run("1");
    let (ok2, _, e2) = run("2");
    assert!(!ok1 && !ok2);
    assert_eq!(e1, e2);
    assert!(e1.contains("elem=8 block=256 offset=0"), "{e1}");
}

#[test]
fn several_workloads_in_one_command() {
    let (ok, out, err) = gpusim(&[
        "run",
        "configs/c870.ron",
        "workloads/offset.ron",
        "workloads/stride.ron",
        "--set",
        "nMB=1",
        "--set",
        "elem=4",
        "--set",
        "offset=0,1",
        "--set",
        "stride=1,2",
        "--csv",
        "-",
    ]);
    assert!(ok, "{err}");
    let mut lines = out.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("device,workload,nMB,elem,block,offset,stride,bytes"),
        "{head}"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 4);
    assert!(
        rows[0].starts_with("c870,offset,1,4,256,0,,"),
        "{}",
        rows[0]
    );
    assert!(
        rows[3].starts_with("c870,stride,1,4,256,,2,"),
        "{}",
        rows[3]
    );
    let (ok, _, err) = gpusim(&["run", "configs/c870.ron", "README.md"]);
    assert!(!ok && err.contains("expected a device config"), "{err}");
}

//! Sweeps in parts: --shard, gpusim merge, the journal and --resume.

use super::cli::gpusim;
use super::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> TempDir {
    TempDir::new(&format!("sweep-{name}"))
}

/// 2 element sizes x 8 offsets on a Fermi card: 16 points, well under a second.
const SWEEP: [&str; 6] = [
    "configs/c2050.ron",
    "workloads/offset.ron",
    "--set",
    "nMB=1",
    "--set",
    "offset=0..=7",
];

fn run_ok(extra: &[&str]) -> String {
    let mut args = vec!["run"];
    args.extend(SWEEP);
    args.extend(extra);
    args.push("--quiet");
    let (ok, out, err) = gpusim(&args);
    assert!(ok, "{err}");
    out
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn merged_shards_are_the_whole_run_byte_for_byte_in_any_order() {
    let d = scratch("merge");
    let (csv, json) = (d.join("whole.csv"), d.join("whole.json"));
    run_ok(&["--csv", p(&csv), "--json", p(&json), "-j", "2"]);
    let mut shards = Vec::new();
    for i in 1..=3 {
        let (c, j) = (d.join(format!("s{i}.csv")), d.join(format!("s{i}.json")));
        // One thread here, two for the whole run: the output must not care.
        run_ok(&[
            "--shard",
            &format!("{i}/3"),
            "--csv",
            p(&c),
            "--json",
            p(&j),
            "-j",
            "1",
        ]);
        let tag = read(&c).lines().next().unwrap().to_string();
        assert!(tag.starts_with("# gpusim-shard sweep="), "{tag}");
        assert!(tag.contains(&format!(" shard={i}/3 ")), "{tag}");
        shards.push((c, j));
    }
    // Every shard has the whole run's header, then its own rows.
    let header = read(&csv).lines().next().unwrap().to_string();
    let rows: usize = shards
        .iter()
        .map(|(c, _)| {
            let text = read(c);
            assert_eq!(text.lines().nth(1).unwrap(), header);
            text.lines().count() - 2
        })
        .sum();
    assert_eq!(rows, 16);
    for (kind, whole) in [("csv", &csv), ("json", &json)] {
        let pick = |k: usize| {
            let (c, j) = &shards[k];
            p(if kind == "csv" { c } else { j }).to_string()
        };
        let out = d.join(format!("merged.{kind}"));
        let args = ["merge", p(&out), &pick(2), &pick(0), &pick(1)];
        let (ok, _, err) = gpusim(&args);
        assert!(ok, "{err}");
        assert_eq!(read(&out), read(whole), "{kind}");
    }
}

#[test]
fn merge_names_missing_duplicated_and_foreign_shards() {
    let d = scratch("refuse");
    let s = |i: usize| d.join(format!("s{i}.csv"));
    for i in 1..=3 {
        run_ok(&["--shard", &format!("{i}/3"), "--csv", p(&s(i))]);
    }
    let other = d.join("other.csv");
    run_ok(&["--shard", "2/3", "--csv", p(&other), "--set", "block=128"]);
    let out = d.join("m.csv");
    let merge = |files: &[&Path]| {
        let mut args = vec!["merge", p(&out)];
        args.extend(files.iter().map(|f| p(f)));
        let (ok, _, err) = gpusim(&args);
        assert!(!ok, "merge of {files:?} must fail");
        assert!(!out.exists(), "no output on failure");
        err
    };
    let e = merge(&[&s(1), &s(3)]);
    assert!(
        e.contains("missing: points") && e.contains("shards not given: 2/3"),
        "{e}"
    );
    let e = merge(&[&s(1), &s(2), &s(3), &s(2)]);
    assert!(
        e.contains("duplicated:") && e.contains("given twice"),
        "{e}"
    );
    let e = merge(&[&s(1), &other, &s(3)]);
    assert!(
        e.contains("different sweeps") && e.contains(p(&other)),
        "{e}"
    );
    let whole = d.join("whole.csv");
    run_ok(&["--csv", p(&whole)]);
    let e = merge(&[&whole]);
    assert!(e.contains("not a shard"), "{e}");
}

/// The sweep identity in a shard's first line.
fn sweep_id(args: &[&str]) -> String {
    let d = scratch("id");
    let c = d.join("s.csv");
    let mut all = vec!["run", "--shard", "1/2", "--csv", p(&c), "--quiet"];
    all.extend(args);
    let (ok, _, err) = gpusim(&all);
    assert!(ok, "{err}");
    let id = read(&c).split_whitespace().nth(2).unwrap().to_string();
    id
}

#[test]
fn the_sweep_identity_follows_file_contents_and_set_values_not_paths() {
    let base = [
        "configs/c2050.ron",
        "workloads/offset.ron",
        "--set",
        "nMB=1",
        "--set",
        "offset=0,1",
    ];
    let id = sweep_id(&base);
    // Another path to the same bytes, and the same values written as a range.
    let d = scratch("copy");
    let copy = d.join("my-offset.ron");
    let src = read(&repo("workloads/offset.ron"));
    std::fs::write(&copy, &src).unwrap();
    let mut same = base;
    same[1] = p(&copy);
    assert_eq!(sweep_id(&same), id);
    same[5] = "offset=0..=1";
    assert_eq!(sweep_id(&same), id);
    // One changed byte in a file, or another value.
    std::fs::write(&copy, format!("// a comment\n{src}")).unwrap();
    assert_ne!(sweep_id(&same), id);
    let mut other = base;
    other[5] = "offset=0,2";
    assert_ne!(sweep_id(&other), id);
}

/// Starts the sweep writing `csv`, waits until its journal holds `lines`
/// finished points, then sends `signal` (by kill(1)). Returns the exit
/// status and stderr.
fn interrupt(csv: &Path, lines: usize, signal: &str) -> (Option<i32>, String) {
    let journal = PathBuf::from(format!("{}.journal", csv.display()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("run")
        .args(SWEEP)
        .args(["--csv", p(csv), "-j", "1", "--quiet"])
        .current_dir(repo(""))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let n = std::fs::read_to_string(&journal)
            .map(|t| t.matches('\n').count())
            .unwrap_or(0);
        if n > lines {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep finished before it could be stopped"
        );
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(2));
    }
    let st = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn resume(csv: &Path) -> String {
    let mut args = vec!["run"];
    args.extend(SWEEP);
    args.extend(["--csv", p(csv), "--resume", "--quiet"]);
    let (ok, _, err) = gpusim(&args);
    assert!(ok, "{err}");
    err
}

/// "resuming: K of 16 points are in the journal, 16-K to run" -> K.
fn resumed_points(err: &str) -> usize {
    let at = err.find("resuming: ").expect(err) + "resuming: ".len();
    let k: usize = err[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        err.contains(&format!(
            "{k} of 16 points are in the journal, {} to run",
            16 - k
        )),
        "{err}"
    );
    k
}

#[test]
fn a_killed_sweep_resumes_to_the_same_bytes() {
    let d = scratch("kill");
    let whole = d.join("whole.csv");
    run_ok(&["--csv", p(&whole)]);
    let csv = d.join("k.csv");
    let journal = d.join("k.csv.journal");
    let (code, _) = interrupt(&csv, 3, "-KILL");
    assert_eq!(code, None, "killed by a signal");
    assert!(!csv.exists(), "no output file from a killed run");
    // A write torn by the kill: half a line at the end.
    let mut text = read(&journal);
    let last = text.lines().last().unwrap().to_string();
    text.push_str(&last[..last.len() / 2]);
    std::fs::write(&journal, text).unwrap();
    // Without --resume the journal is kept, not overwritten.
    let mut args = vec!["run"];
    args.extend(SWEEP);
    args.extend(["--csv", p(&csv), "--quiet"]);
    let (ok, _, err) = gpusim(&args);
    assert!(!ok && err.contains("add --resume"), "{err}");
    let err = resume(&csv);
    assert!(err.contains("ignoring 1 damaged line"), "{err}");
    assert!(resumed_points(&err) >= 3);
    assert_eq!(read(&csv), read(&whole));
    assert!(
        !journal.exists(),
        "the journal goes once the output is written"
    );
}

#[test]
fn ctrl_c_leaves_a_journal_that_resumes() {
    let d = scratch("int");
    let whole = d.join("whole.csv");
    run_ok(&["--csv", p(&whole)]);
    let csv = d.join("k.csv");
    let (code, err) = interrupt(&csv, 2, "-INT");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("interrupted after") && err.contains("--resume"),
        "{err}"
    );
    assert!(!csv.exists(), "no half-written CSV");
    let err = resume(&csv);
    assert!(resumed_points(&err) >= 2);
    assert_eq!(read(&csv), read(&whole));
}

#[test]
fn shard_and_resume_mistakes_are_explained() {
    let (ok, _, err) = gpusim(&["run", SWEEP[0], SWEEP[1], "--shard", "0/4"]);
    assert!(!ok && err.contains("numbered 1 to 4"), "{err}");
    let (ok, _, err) = gpusim(&["run", SWEEP[0], SWEEP[1], "--resume"]);
    assert!(
        !ok && err.contains("--resume needs --csv or --json"),
        "{err}"
    );
    let (ok, _, err) = gpusim(&[
        "run", SWEEP[0], SWEEP[1], "--shard", "1/2", "--plot", "x.svg",
    ]);
    assert!(!ok && err.contains("--plot draws a whole sweep"), "{err}");
}

/// A run whose first point fails left a journal of no finished point, and
/// the next run to the same CSV was refused until it was deleted.
#[test]
fn a_run_that_fails_before_any_point_finishes_leaves_no_journal() {
    let dir = super::TempDir::new("sweep-nojournal");
    let csv = dir.join("out.csv");
    let journal = PathBuf::from(format!("{}.journal", csv.display()));
    let c = csv.to_str().unwrap();
    let (ok, _, err) = gpusim(&[
        "run",
        "configs/c870.ron",
        "workloads/offset.ron",
        "--set",
        "nMB=256",
        "--set",
        "offset=0",
        "--csv",
        c,
        "-q",
    ]);
    assert!(!ok && err.contains("65535"), "{err}");
    assert!(!journal.exists(), "{}", journal.display());
    let (ok, _, err) = gpusim(&[
        "run",
        "configs/c870.ron",
        "workloads/offset.ron",
        "--set",
        "nMB=1",
        "--set",
        "offset=0",
        "--csv",
        c,
        "-q",
    ]);
    assert!(ok, "{err}");
}

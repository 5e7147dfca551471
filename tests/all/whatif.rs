//! What-if studies: --config-set, study files, describe, and the field
//! reference in docs/configuration.md.

use super::cli::gpusim;
use super::*;

/// Every field of the device types, with its unit and what it does, is in
/// docs/configuration.md. Fails when a field is added to the types (and so
/// to what serde accepts) without a row in the reference.
#[test]
fn every_config_field_is_documented_with_a_unit() {
    let doc = std::fs::read_to_string(repo("docs/configuration.md")).unwrap();
    // h200 has every optional structure (l1, l2); optional fields it leaves
    // out are found from what serde accepts.
    let src = std::fs::read_to_string(repo("configs/h200.ron")).unwrap();
    let paths = engine::config_set::field_paths(&src);
    assert!(paths.len() > 60, "too few fields found: {paths:?}");
    let rows: Vec<Vec<String>> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    let mut missing = Vec::new();
    for p in &paths {
        let leaf = p.rsplit('.').next().unwrap();
        let named = |cell: &str| {
            cell.split(',').any(|c| {
                let c = c.trim().trim_matches('`');
                c == leaf || c == p
            })
        };
        // | field | unit | meaning |: the unit and meaning must be filled in.
        let ok = rows
            .iter()
            .any(|r| r.len() >= 5 && named(&r[1]) && !r[2].is_empty() && !r[3].is_empty());
        if !ok {
            missing.push(p.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "fields without a `| field | unit | meaning |` row in docs/configuration.md: {missing:?}"
    );
}

#[test]
fn config_set_sweeps_devices_and_workload_parameters_together() {
    let (ok, csv, err) = gpusim(&[
        "run",
        "configs/h200.ron",
        "workloads/stride.ron",
        "--set",
        "nMB=1",
        "--set",
        "elem=4",
        "--set",
        "stride=1,2",
        "--config-set",
        "sm.count=66,132",
        "--csv",
        "-",
        "-j",
        "2",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("device,workload,sm.count,nMB,elem,block,stride,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 5);
    assert!(
        lines[1].starts_with("h200[sm.count=66],stride,66,1,4,256,1,"),
        "{}",
        lines[1]
    );
    assert!(
        lines[4].starts_with("h200[sm.count=132],stride,132,1,4,256,2,"),
        "{}",
        lines[4]
    );
}

/// Setting a field to the value it has in the file changes nothing but the
/// device's name and the extra column.
#[test]
fn overriding_a_field_with_its_own_value_is_the_identity() {
    let args = [
        "run",
        "configs/c2050.ron",
        "workloads/stride.ron",
        "--set",
        "nMB=1",
        "--set",
        "elem=4",
        "--set",
        "stride=2",
        "--csv",
        "-",
    ];
    let (ok, plain, _) = gpusim(&args);
    assert!(ok);
    let mut with = args.to_vec();
    with.extend(["--config-set", "l2.slice.size_bytes=131072"]);
    let (ok, same, err) = gpusim(&with);
    assert!(ok, "{err}");
    let strip = |s: &str| {
        s.lines()
            .nth(1)
            .unwrap()
            .split_once(",stride,")
            .unwrap()
            .1
            .to_string()
    };
    let same = same.replace(",stride,131072,", ",stride,");
    assert_eq!(strip(&plain), strip(&same));
}

#[test]
fn bad_config_set_names_the_path_and_the_reason() {
    let cases: [(&str, &[&str]); 7] = [
        (
            "sm.cores=3",
            &["sm.cores", "no field `cores` in `sm`", "max_warps"],
        ),
        ("sm.count=many", &["sm.count", "not a number"]),
        (
            "sm.count=0",
            &["sm.count", "(with --config-set sm.count=0)"],
        ),
        (
            "l2.slice.size_bytes=650000",
            &["l2.slice", "multiple of line_bytes x ways"],
        ),
        ("dram.access_bytes=48", &["dram", "power of two"]),
        (
            "launch.slot_refill_cycles=-5",
            &["launch.slot_refill_cycles", "must be zero or more"],
        ),
        (
            "sm.special_register_cycles=-1",
            &["sm.special_register_cycles", "must be zero or more"],
        ),
    ];
    for (set, want) in cases {
        let (ok, _, err) = gpusim(&[
            "run",
            "configs/h200.ron",
            "workloads/stride.ron",
            "--config-set",
            set,
            "-q",
        ]);
        assert!(!ok, "{set} was accepted");
        assert!(err.starts_with("error: configs/h200.ron: "), "{set}: {err}");
        for w in want {
            assert!(err.contains(w), "{set}: `{w}` not in {err}");
        }
    }
}

#[test]
fn a_study_runs_like_run_and_does_not_depend_on_threads() {
    let dir = super::TempDir::new("study");
    let study = dir.join("tiny.ron");
    let root = repo("");
    std::fs::write(
        &study,
        format!(
            r#"Study(
                name: "tiny",
                devices: ["{r}/configs/c2050.ron"],
                variants: [(name: "ca"), (name: "cg", config_set: ["load_rule=Lines(bytes: 32)", "l1=None"])],
                workloads: ["{r}/workloads/stride.ron"],
                set: ["nMB=1", "elem=4", "stride=1,32"],
            )"#,
            r = root.display()
        ),
    )
    .unwrap();
    let mut csvs = Vec::new();
    for j in ["1", "2"] {
        let out = dir.join(format!("j{j}"));
        let (ok, _, err) = gpusim(&[
            "study",
            study.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-j",
            j,
            "-q",
        ]);
        assert!(ok, "{err}");
        assert!(out.join("tiny.svg").is_file());
        csvs.push(std::fs::read_to_string(out.join("tiny.csv")).unwrap());
    }
    assert_eq!(csvs[0], csvs[1]);
    let lines: Vec<&str> = csvs[0].lines().collect();
    assert!(
        lines[0].starts_with("device,workload,variant,load_rule,l1,nMB,"),
        "{}",
        lines[0]
    );
    assert!(
        lines[3].starts_with("c2050[cg],stride,cg,Lines(bytes: 32),None,1,4,256,1,"),
        "{}",
        lines[3]
    );
    // Seed 004: at stride 32 each float is alone in its 128-byte line, so
    // 32-byte transactions ask L2 for a quarter of the sectors.
    let col = lines[0]
        .split(',')
        .position(|c| c == "lts__t_sectors_srcunit_tex_op_read.sum")
        .unwrap();
    let l2 = |l: &str| l.split(',').nth(col).unwrap().parse::<u64>().unwrap();
    assert_eq!(l2(lines[2]), 4 * l2(lines[4]));
}

#[test]
fn describe_derives_from_the_fields() {
    let (ok, out, err) = gpusim(&["describe", "configs/h200.ron"]);
    assert!(ok, "{err}");
    // 94 channels x 64 bits / 8 x 6.402 Gb/s = 4814.3 GB/s.
    assert!(out.contains("4814.3 GB/s"), "{out}");
    // 96 slices x 640 KiB = 60 MiB.
    assert!(out.contains("60.00 MiB"), "{out}");
    let (ok, out, err) = gpusim(&[
        "describe",
        "configs/h200.ron",
        "--config-set",
        "dram.channels=47",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("2407.2 GB/s"), "{out}");
}

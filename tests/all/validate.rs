//! `gpusim validate`: the mechanics on a fixture, and the CI subset of the
//! H200 corpus against its manifest's targets and named gaps.

use super::cli::gpusim;
use super::*;

const FIXTURE: &str = "tests/data/validate-fixture";

#[test]
fn validate_help_teaches() {
    let (ok, out, _) = gpusim(&["validate", "--help"]);
    assert!(ok);
    for s in [
        "EXIT STATUS",
        "MAPE",
        "--family",
        "--ci",
        "gpu__time_duration.sum",
    ] {
        assert!(out.contains(s), "{s}: {out}");
    }
}

#[test]
fn a_family_within_its_targets_passes_and_writes_csv_and_plot() {
    let dir = TempDir::new("validate");
    let (csv, svg) = (dir.join("ok.csv"), dir.join("ok.svg"));
    let (ok, out, err) = gpusim(&[
        "validate",
        "--data",
        FIXTURE,
        "--family",
        "measured",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(ok, "{out}\n{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("measured"))
        .expect("row");
    assert!(row.ends_with("met"), "{row}");
    assert!(row.contains("1/1"), "{row}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text
        .starts_with("device,family,params,requests_exact,sectors_exact,shared_err,l2_read_sim"));
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("tiny,measured,nMB=1,1,1,,"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains("measured"));
}

#[test]
fn a_family_missing_its_target_fails_with_the_table_printed() {
    let (ok, out, err) = gpusim(&["validate", "--data", FIXTURE, "-q"]);
    assert!(!ok);
    let row = out
        .lines()
        .find(|l| l.starts_with("wrong_time"))
        .expect("row");
    assert!(row.contains("MISSED time MAPE 10%"), "{row}");
    assert!(row.contains("-9"), "{row}");
    assert!(err.contains("1 family missed its thresholds"), "{err}");
    // --ci runs only the families that list cases for it.
    let (ok, out, err) = gpusim(&["validate", "--data", FIXTURE, "--ci", "-q"]);
    assert!(ok, "{out}\n{err}");
    assert!(!out.contains("wrong_time"));
}

#[test]
fn config_set_replays_the_measurements_on_a_changed_device() {
    // The fixture's `measured` family, quietly, with `extra` arguments.
    let measured = |extra: &[&str]| {
        let mut args = vec!["validate", "--data", FIXTURE, "--family", "measured", "-q"];
        args.extend_from_slice(extra);
        gpusim(&args)
    };
    let dir = TempDir::new("validate");
    let time = |extra: &[&str]| {
        let csv = dir.join(format!("cs{}.csv", extra.len()));
        let mut args = vec!["--csv", csv.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (ok, out, err) = measured(&args);
        assert!(ok, "{out}\n{err}");
        let text = std::fs::read_to_string(&csv).unwrap();
        let row = text.lines().nth(1).unwrap().to_string();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|&h| h == "time_ns_sim").unwrap();
        row.split(',').nth(col).unwrap().parse::<f64>().unwrap()
    };
    // The table says it is not the stock model's.
    let (_, out, _) = measured(&["--config-set", "dram.row_bytes=2048"]);
    assert!(
        out.starts_with("device overrides (--config-set): dram.row_bytes=2048\n"),
        "{out}"
    );
    // A kernel overhead 10 us longer makes the case 10 us longer.
    let base = time(&[]);
    let longer = time(&["--config-set", "launch.kernel_overhead_ns=11522.0"]);
    assert!((longer - base - 10_000.0).abs() < 1.0, "{base} {longer}");
    // One value per field, and a field that exists.
    let (ok, _, err) = gpusim(&[
        "validate",
        "--data",
        FIXTURE,
        "--config-set",
        "dram.first_ready=true,false",
    ]);
    assert!(!ok && err.contains("one value per field"), "{err}");
    let (ok, _, err) = gpusim(&["validate", "--data", FIXTURE, "--config-set", "dram.nope=1"]);
    assert!(!ok && err.contains("no field `nope` in `dram`"), "{err}");
}

#[test]
fn validate_bad_input_names_the_file_and_line() {
    let dir = TempDir::new("validate-bad");
    let dev = dir.join("dev");
    std::fs::create_dir_all(&dev).unwrap();
    let manifest = std::fs::read_to_string(repo(&format!("{FIXTURE}/tiny/manifest.ron")))
        .unwrap()
        .replace("device: \"tiny\"", "device: \"bad\"");
    let cases = dev.join("cases.csv");
    let m = manifest.replace(
        "tests/data/validate-fixture/tiny/cases.csv",
        cases.to_str().unwrap(),
    );
    let data = dir.to_str().unwrap();
    let case = |csv: &str, manifest: &str| {
        std::fs::write(&cases, csv).unwrap();
        std::fs::write(dev.join("manifest.ron"), manifest).unwrap();
        let (ok, _, err) = gpusim(&["validate", "--data", data, "-q"]);
        assert!(!ok);
        err
    };
    let good = "family,params,time_ns\nmeasured,nMB=1,2592\n";
    let err = case("family,params,time_ns\nmeasured,nMB=1,2.5k\n", &m);
    assert!(
        err.contains("cases.csv:2:") && err.contains("`2.5k` is not a number"),
        "{err}"
    );
    let err = case("family,params,time_ns\nmeasured,nMB=x,2592\n", &m);
    assert!(
        err.contains("cases.csv:2:") && err.contains("not an integer"),
        "{err}"
    );
    let err = case("family,params,time_ns\nmeasured,block=256,2592\n", &m);
    assert!(
        err.contains("cases.csv:2:") && err.contains("must pin every swept parameter"),
        "{err}"
    );
    let err = case("family,params,time_ns\nmeasured,nMB=1;wide=2,2592\n", &m);
    assert!(
        err.contains("cases.csv:2:") && err.contains("wide"),
        "{err}"
    );
    let err = case(good, &m.replace("method:", "methd:"));
    assert!(
        err.contains("manifest.ron:") && err.contains("methd"),
        "{err}"
    );
    let (ok, _, err) = gpusim(&["validate", "--data", FIXTURE, "--family", "nope"]);
    assert!(!ok && err.contains("measured, wrong_time"), "{err}");
}

/// The CI subset of the H200 corpus: every family meets its targets or stays
/// within the gap DEVIATIONS.md names for it (the manifest's `gap`).
#[test]
fn h200_corpus_ci_subset_meets_targets_or_named_gaps() {
    let (ok, out, err) = gpusim(&["validate", "--device", "h200", "--ci", "-q"]);
    assert!(ok, "{out}\n{err}");
    assert!(!out.contains("MISSED"), "{out}");
}

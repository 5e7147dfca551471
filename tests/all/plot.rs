//! `gpusim run ... --plot`: SVG and PNG files, and a clear error otherwise.

use super::cli::gpusim;

fn temp_dir(name: &str) -> super::TempDir {
    super::TempDir::new(&format!("plot-{name}"))
}

fn plot_offset(out: &std::path::Path) -> (bool, String, String) {
    gpusim(&[
        "run",
        "configs/c870.ron",
        "configs/c2050.ron",
        "workloads/offset.ron",
        "--set",
        "nMB=1",
        "--set",
        "offset=0..=8",
        "-q",
        "--plot",
        out.to_str().unwrap(),
    ])
}

#[test]
fn plots_svg_and_png() {
    let dir = temp_dir("ok");
    let svg = dir.join("offset.svg");
    let (ok, _, err) = plot_offset(&svg);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&svg).expect("svg written");
    assert!(text.starts_with("<svg"), "{}", &text[..text.len().min(200)]);
    for want in ["offset", "GB/s", "Tesla C870, float", "Tesla C2050, double"] {
        assert!(text.contains(want), "svg lacks {want:?}");
    }

    let png = dir.join("offset.png");
    let (ok, _, err) = plot_offset(&png);
    assert!(ok, "{err}");
    let bytes = std::fs::read(&png).expect("png written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");

    // Same input, same bytes.
    let again = dir.join("again.png");
    let (ok, _, err) = plot_offset(&again);
    assert!(ok, "{err}");
    assert!(
        std::fs::read(&again).unwrap() == bytes,
        "PNG differs between runs"
    );
}

#[test]
fn unknown_extension_is_an_error() {
    let dir = temp_dir("txt");
    let txt = dir.join("offset.txt");
    let (ok, _, err) = plot_offset(&txt);
    assert!(!ok, "a .txt plot should fail");
    assert!(err.contains(".txt"), "{err}");
    assert!(err.contains("offset.txt"), "names the file: {err}");
    assert!(!txt.exists());
}

#[test]
fn unwritable_path_is_an_error() {
    let dir = temp_dir("missing");
    let png = dir.join("no/such/dir/offset.png");
    let (ok, _, err) = plot_offset(&png);
    assert!(!ok, "writing into a missing folder should fail");
    assert!(
        err.contains("offset.png") && err.contains("cannot write"),
        "{err}"
    );
}

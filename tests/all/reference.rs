//! Golden data from a real H200 (tests/data/h200, measured with Nsight Compute).

use super::*;

pub struct Row {
    pub experiment: String,
    pub elem: i64,
    pub param: i64,
    pub cols: Vec<(String, f64)>,
}

impl Row {
    pub fn get(&self, name: &str) -> f64 {
        self.cols
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("column {name}"))
    }
}

pub fn read_csv(path: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(repo(path)).expect("reference data");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split(',').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                experiment: f[0].to_string(),
                elem: f[1].parse().expect("elem"),
                param: f[3].parse().expect("param"),
                cols: head
                    .iter()
                    .zip(&f)
                    .skip(4)
                    .map(|(h, v)| (h.to_string(), v.parse().expect("number")))
                    .collect(),
            }
        })
        .collect()
}

/// The simulated H200 results at 4 MiB for both experiments, keyed like the reference.
pub fn simulate_h200_4mib() -> Vec<(String, i64, i64, PointResult)> {
    let dev = device("h200");
    let mut out = Vec::new();
    for exp in ["offset", "stride"] {
        let wl = workload(exp);
        for r in run(&dev, &wl, &[("nMB", &[4]), ("elem", &[4, 8])]) {
            let p = r.param(exp).expect("swept parameter");
            out.push((exp.to_string(), r.param("elem").unwrap(), p, r));
        }
    }
    out
}

const EXACT: [&str; 4] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];

#[test]
fn h200_requests_and_sectors_equal_nsight_compute_on_all_130_points() {
    let reference = read_csv("tests/data/h200/ncu.csv");
    assert_eq!(reference.len(), 130);
    let sim = simulate_h200_4mib();
    let mut checked = 0;
    for row in &reference {
        let (_, _, _, r) = sim
            .iter()
            .find(|(e, el, p, _)| *e == row.experiment && *el == row.elem && *p == row.param)
            .unwrap_or_else(|| {
                panic!(
                    "{} elem {} param {} not simulated",
                    row.experiment, row.elem, row.param
                )
            });
        let c = &r.counters;
        let got = [c.requests_ld, c.sectors_ld, c.requests_st, c.sectors_st];
        for (name, g) in EXACT.iter().zip(got) {
            assert_eq!(
                g as f64,
                row.get(name),
                "{name} at {} elem {} param {}",
                row.experiment,
                row.elem,
                row.param
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 130);
}

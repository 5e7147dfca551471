#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod affine;
pub mod data;
pub mod expr;
pub mod ir;
pub mod program;
pub mod warp;

pub use data::{BufferData, Contents};
pub use program::{
    BufferDecl, CompileEnv, CompileError, MemKind, MemOp, MemSpace, OpSource, Program,
};
pub use warp::{ExecError, ExecFault, Scratch, Step, Warp, WarpAccess, WARP_SIZE};

#[cfg(test)]
mod tests {
    use super::*;
    use ir::Stmt;

    fn compile(src: &str, block: u32, grid: u32, consts: &[(&str, i64)]) -> Program {
        let body: Vec<Stmt> = ir::ron_options().from_str(src).expect("ron");
        let bufs = [BufferDecl {
            name: "a".into(),
            base: 1 << 21,
            bytes: 1 << 20,
            ..Default::default()
        }];
        let c = |n: &str| consts.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
        Program::compile(
            &body,
            &CompileEnv {
                block_dim: [block, 1, 1],
                grid_dim: [grid, 1, 1],
                consts: &c,
                buffers: &bufs,
            },
        )
        .expect("compile")
    }

    fn accesses(p: &Program, block: u32, warp: u32) -> Vec<WarpAccess> {
        let mut w = Warp::default();
        w.reset(p, [block, 0, 0], warp);
        let mut out = vec![];
        let mut acc = WarpAccess::default();
        w.run_to_end(p, &mut Scratch::default(), &mut acc, |a| {
            out.push(a.clone())
        })
        .expect("run");
        out
    }

    #[test]
    fn offset_kernel_addresses() {
        let p = compile(
            r#"[Let("i", "blockDim.x*blockIdx.x + threadIdx.x + s"),
                Load(buf: "a", width: "4", index: "i", dst: "v"),
                Store(buf: "a", width: "4", index: "i", src: ["v"])]"#,
            256,
            4,
            &[("s", 1)],
        );
        let acc = accesses(&p, 2, 3);
        assert_eq!(acc.len(), 2);
        assert_eq!(acc[0].mask, u32::MAX);
        assert_eq!(acc[0].addrs[0], (1 << 21) + 4 * (512 + 96 + 1));
        assert_eq!(acc[1].kind, MemKind::Store);
        assert_eq!(acc[1].srcs, 1);
    }

    #[test]
    fn divergent_if_runs_both_paths_then_reconverges() {
        let p = compile(
            r#"[Let("t", "threadIdx.x"),
                If(cond: "t % 2 == 0",
                   then: [Store(buf: "a", width: "4", index: "t")],
                   else: [Store(buf: "a", width: "4", index: "t + 100")]),
                Store(buf: "a", width: "4", index: "t + 200")]"#,
            32,
            1,
            &[],
        );
        let acc = accesses(&p, 0, 0);
        assert_eq!(acc.len(), 3);
        assert_eq!(acc[0].mask, 0x5555_5555);
        assert_eq!(acc[1].mask, 0xAAAA_AAAA);
        assert_eq!(acc[2].mask, u32::MAX, "reconverged after the If");
    }

    /// A kernel over a global buffer `a` and a shared one `s`, one block
    /// of `block` threads.
    fn compile_shared(src: &str, block: u32) -> Result<Program, program::CompileError> {
        let body: Vec<Stmt> = ir::ron_options().from_str(src).expect("ron");
        let bufs = [
            BufferDecl {
                name: "a".into(),
                base: 1 << 21,
                bytes: 1 << 20,
                ..Default::default()
            },
            BufferDecl {
                name: "s".into(),
                base: 0,
                bytes: 4096,
                space: MemSpace::Shared,
                ..Default::default()
            },
        ];
        Program::compile(
            &body,
            &CompileEnv {
                block_dim: [block, 1, 1],
                grid_dim: [1, 1, 1],
                consts: &|_| None,
                buffers: &bufs,
            },
        )
    }

    /// Runs warp `warp` of block 0: its memory accesses and the number of
    /// other instructions.
    fn run_counting(p: &Program, warp: u32) -> (Vec<WarpAccess>, u32) {
        let mut w = Warp::default();
        w.reset(p, [0, 0, 0], warp);
        let (mut out, mut alu) = (vec![], 0);
        let mut acc = WarpAccess::default();
        let mut scratch = Scratch::default();
        loop {
            match w.step(p, &mut scratch, &mut acc).expect("run") {
                Step::Done => return (out, alu),
                Step::Mem => out.push(acc.clone()),
                Step::Alu | Step::Jump | Step::Sync => alu += 1,
            }
        }
    }

    /// nvcc's `@P0 LDS`: every warp issues the body of a predicated `If`,
    /// with the lanes whose predicate holds (none, in the second warp),
    /// and the `else` body with the others.
    #[test]
    fn a_predicated_if_issues_both_bodies_on_every_warp() {
        let p = compile_shared(
            r#"[If(cond: "threadIdx.x < 8", predicated: true,
                   then: [Load(buf: "s", width: "4", index: "threadIdx.x", dst: "p"),
                          Store(buf: "s", width: "4", index: "threadIdx.x + 8", src: ["p"])],
                   else: [Let("u", "1")]),
                Store(buf: "s", width: "4", index: "threadIdx.x")]"#,
            64,
        )
        .expect("compile");
        for (warp, lanes) in [(0, 0xFFu32), (1, 0)] {
            let (acc, alu) = run_counting(&p, warp);
            let masks: Vec<u32> = acc.iter().map(|a| a.mask).collect();
            assert_eq!(masks, vec![lanes, lanes, u32::MAX], "warp {warp}");
            // The predicate's instruction and the `else` body's `Let`.
            assert_eq!(alu, 2, "warp {warp}");
        }
    }

    /// A predicated assignment changes the lanes whose predicate holds and
    /// keeps the others' value; the `else` body takes the rest.
    #[test]
    fn a_predicated_let_sets_its_lanes_alone() {
        let p = compile_shared(
            r#"[Let("v", "5"),
                If(cond: "threadIdx.x % 2 == 0", predicated: true,
                   then: [Let("v", "7")], else: [Let("w", "v + 1")]),
                Store(buf: "s", width: "4", index: "v * 32 + threadIdx.x")]"#,
            32,
        )
        .expect("compile");
        let (acc, _) = run_counting(&p, 0);
        let a = acc.last().unwrap();
        for l in 0..32u64 {
            let v = if l % 2 == 0 { 7 } else { 5 };
            assert_eq!(a.addrs[l as usize], 4 * (v * 32 + l), "lane {l}");
        }
    }

    /// A predicated body holds straight-line shared-memory code: a loop,
    /// a barrier or a global access there is refused, naming the statement.
    #[test]
    fn a_predicated_if_refuses_what_nvcc_would_branch_around() {
        for (body, says) in [
            (
                r#"For(var: "k", from: "0", to: "2", body: [])"#,
                "a loop cannot be in a predicated",
            ),
            ("Sync", "a `Sync` cannot be in a predicated"),
            (
                r#"Load(buf: "a", width: "4", index: "threadIdx.x")"#,
                "shared memory only",
            ),
            (
                r#"If(cond: "1", predicated: true, then: [])"#,
                "a predicated `If` cannot be in a predicated",
            ),
        ] {
            let src = format!(r#"[If(cond: "threadIdx.x < 4", predicated: true, then: [{body}])]"#);
            let e = compile_shared(&src, 32).expect_err(body);
            assert!(e.message.contains(says), "{body}: {e}");
            assert_eq!(
                e.path,
                "kernel[0].then[0]".to_string()
                    + if body.starts_with("Load") {
                        ".Load.buf"
                    } else {
                        ""
                    }
            );
        }
    }

    /// An unrolled loop makes the same accesses as the loop, with no
    /// instruction of the loop's own (its test, increment and jump), as
    /// nvcc's unrolled loops have none (tools/measure/loopcost, SASS).
    #[test]
    fn an_unrolled_loop_accesses_alike_without_its_own_instructions() {
        let src = |unroll: bool| {
            format!(
                r#"[For(var: "k", from: "0", to: "K", unroll: {unroll}, body: [
                    Store(buf: "a", width: "4", index: "threadIdx.x * 4 + k")])]"#
            )
        };
        let looped = compile(&src(false), 32, 1, &[("K", 4)]);
        let unrolled = compile(&src(true), 32, 1, &[("K", 4)]);
        let (a, alu_looped) = run_counting(&looped, 0);
        let (b, alu_unrolled) = run_counting(&unrolled, 0);
        let addrs = |v: &[WarpAccess]| v.iter().map(|x| x.addrs).collect::<Vec<_>>();
        assert_eq!(addrs(&a), addrs(&b));
        assert_eq!(b.len(), 4);
        // The loop: its variable set, then per trip a test, an increment
        // and a jump, and the final test.
        assert_eq!(alu_looped, 1 + 4 * 3 + 1);
        assert_eq!(alu_unrolled, 0);
    }

    /// A branching `If` on a constant compiles only the arm it takes, with
    /// no branch; one on a lane's value branches; a loop kept a loop jumps
    /// back once a trip, and its test jumps out at the end (taken branches).
    #[test]
    fn an_if_on_a_constant_is_decided_when_compiled() {
        let src = |cond: &str| {
            format!(
                r#"[If(cond: "{cond}", then: [Store(buf: "a", width: "4", index: "threadIdx.x")],
                    else: [Store(buf: "a", width: "4", index: "threadIdx.x + 32")])]"#
            )
        };
        let jumps = |p: &Program| {
            let mut w = Warp::default();
            w.reset(p, [0, 0, 0], 0);
            let (mut acc, mut scratch, mut n, mut addrs) =
                (WarpAccess::default(), Scratch::default(), 0, vec![]);
            loop {
                match w.step(p, &mut scratch, &mut acc).expect("run") {
                    Step::Done => return (n, addrs),
                    Step::Jump => n += 1,
                    Step::Mem => addrs.push(acc.addrs[0]),
                    Step::Alu | Step::Sync => {}
                }
            }
        };
        let folded = compile(&src("K == 4"), 32, 1, &[("K", 4)]);
        let (n, a) = jumps(&folded);
        assert_eq!((folded.ops.len(), n), (1, 0));
        let other = compile(&src("K == 4"), 32, 1, &[("K", 5)]);
        assert_eq!(jumps(&other), (0, vec![a[0] + 128]));
        // On a lane's value: the branch, the then-arm's jump over the else.
        let lanes = compile(&src("threadIdx.x < 64"), 32, 1, &[]);
        assert_eq!(jumps(&lanes), (1, a.clone()));
        let looped = compile(
            r#"[For(var: "k", from: "0", to: "4", body: [Let("x", "k")])]"#,
            32,
            1,
            &[],
        );
        assert_eq!(jumps(&looped).0, 4 + 1);
    }

    /// An unrolled loop needs constant bounds and a variable its body
    /// leaves alone.
    #[test]
    fn an_unrolled_loop_refuses_what_it_cannot_unroll() {
        let body: Vec<Stmt> = ir::ron_options()
            .from_str(r#"[For(var: "k", from: "0", to: "threadIdx.x", unroll: true, body: [])]"#)
            .unwrap();
        let env = CompileEnv {
            block_dim: [32, 1, 1],
            grid_dim: [1, 1, 1],
            consts: &|_| None,
            buffers: &[],
        };
        let e = Program::compile(&body, &env).expect_err("lane bound");
        assert!(e.message.contains("unrolled loop's `to`"), "{e}");
        let body: Vec<Stmt> = ir::ron_options()
            .from_str(r#"[For(var: "k", from: "0", to: "4", unroll: true, body: [Let("k", "1")])]"#)
            .unwrap();
        let e = Program::compile(&body, &env).expect_err("assigned");
        assert!(e.message.contains("cannot be assigned"), "{e}");
        let body: Vec<Stmt> = ir::ron_options()
            .from_str(r#"[For(var: "k", from: "0", to: "100000", unroll: true, body: [])]"#)
            .unwrap();
        let e = Program::compile(&body, &env).expect_err("too many");
        assert!(e.message.contains("at most 1024 trips"), "{e}");
    }

    #[test]
    fn divergent_loop_trip_counts() {
        // Lane l runs l % 4 iterations: 3 trips with shrinking masks.
        let p = compile(
            r#"[For(var: "k", from: "0", to: "threadIdx.x % 4", body: [
                    Store(buf: "a", width: "4", index: "threadIdx.x + 32 * k")]),
                Store(buf: "a", width: "4", index: "threadIdx.x")]"#,
            32,
            1,
            &[],
        );
        let acc = accesses(&p, 0, 0);
        let masks: Vec<u32> = acc.iter().map(|a| a.mask).collect();
        assert_eq!(masks, vec![0xEEEE_EEEE, 0xCCCC_CCCC, 0x8888_8888, u32::MAX]);
    }

    #[test]
    fn two_dimensional_blocks_number_threads_x_first() {
        let body: Vec<Stmt> = ir::ron_options()
            .from_str(r#"[Store(buf: "a", width: "4", index: "threadIdx.x + 100 * threadIdx.y")]"#)
            .expect("ron");
        let bufs = [BufferDecl {
            name: "a".into(),
            base: 1 << 21,
            bytes: 1 << 20,
            ..Default::default()
        }];
        let p = Program::compile(
            &body,
            &CompileEnv {
                block_dim: [16, 4, 1],
                grid_dim: [1, 1, 1],
                consts: &|_| None,
                buffers: &bufs,
            },
        )
        .expect("compile");
        // Warp 1 holds threads 32..63: y = 2 and 3, x = 0..15.
        let a = &accesses(&p, 0, 1)[0];
        assert_eq!(a.addrs[0], (1 << 21) + 4 * 200);
        assert_eq!(a.addrs[17], (1 << 21) + 4 * (300 + 1));
    }

    #[test]
    fn partial_last_warp_is_masked() {
        let p = compile(
            r#"[Store(buf: "a", width: "4", index: "threadIdx.x")]"#,
            40,
            1,
            &[],
        );
        assert_eq!(accesses(&p, 0, 1)[0].mask, 0xFF);
    }

    #[test]
    fn faults_name_lane_and_kind() {
        let p = compile(
            r#"[Load(buf: "a", width: "8", index: "threadIdx.x * 1000000")]"#,
            32,
            1,
            &[],
        );
        let mut w = Warp::default();
        w.reset(&p, [0, 0, 0], 0);
        let e = w
            .run_to_end(
                &p,
                &mut Scratch::default(),
                &mut WarpAccess::default(),
                |_| {},
            )
            .unwrap_err();
        assert_eq!(e.lane, 1);
        assert!(matches!(e.fault, ExecFault::OutOfBounds { .. }));
        let p = compile(
            r#"[Load(buf: "a", width: "8", byte: "threadIdx.x * 12")]"#,
            32,
            1,
            &[],
        );
        w.reset(&p, [0, 0, 0], 0);
        let e = w
            .run_to_end(
                &p,
                &mut Scratch::default(),
                &mut WarpAccess::default(),
                |_| {},
            )
            .unwrap_err();
        assert_eq!(e.lane, 1);
        assert!(matches!(e.fault, ExecFault::Misaligned { .. }));
    }

    fn compile_with(src: &str, bufs: &[BufferDecl]) -> Result<Program, CompileError> {
        let body: Vec<Stmt> = ir::ron_options().from_str(src).expect("ron");
        Program::compile(
            &body,
            &CompileEnv {
                block_dim: [32, 1, 1],
                grid_dim: [1, 1, 1],
                consts: &|_| None,
                buffers: bufs,
            },
        )
    }

    fn idx_and_a() -> [BufferDecl; 2] {
        [
            BufferDecl {
                name: "idx".into(),
                base: 1 << 21,
                bytes: 128,
                data: Some(BufferData {
                    elem_bytes: 4,
                    elems: 32,
                    contents: Contents::Const(5),
                }),
                ..Default::default()
            },
            BufferDecl {
                name: "a".into(),
                base: 1 << 22,
                bytes: 1 << 12,
                ..Default::default()
            },
        ]
    }

    #[test]
    fn a_loaded_value_feeds_an_address_and_the_access_waits_for_it() {
        let p = compile_with(
            r#"[Load(buf: "idx", index: "threadIdx.x", width: "4", dst: "j"),
                Let("k", "j * 2"),
                Load(buf: "a", index: "k + threadIdx.x", width: "4")]"#,
            &idx_and_a(),
        )
        .expect("compile");
        let acc = accesses(&p, 0, 0);
        assert_eq!(acc[1].addrs[3], (1 << 22) + 4 * (10 + 3));
        // The second load waits for the first (data register 0), through `k`.
        assert_eq!(acc[1].srcs, 1);
        assert!(p.has_alu_waits, "the Let computes with the loaded value");
    }

    #[test]
    fn a_value_loaded_in_one_trip_of_a_loop_makes_the_next_trip_wait() {
        // A pointer chase: each load's address is the last load's value.
        let p = compile_with(
            r#"[Let("j", "threadIdx.x"),
                For(var: "s", from: "0", to: "3", body: [
                    Load(buf: "idx", index: "j", width: "4", dst: "j"),
                ])]"#,
            &idx_and_a(),
        )
        .expect("compile");
        let acc = accesses(&p, 0, 0);
        assert_eq!(acc.len(), 3);
        assert_eq!(acc[1].addrs[3], (1 << 21) + 4 * 5);
        // Every trip's load waits for the one before (data register 0); the
        // first waits too, conservatively: the compiler does not tell trips apart.
        assert!(
            acc.iter().all(|a| a.srcs == 1),
            "{:?}",
            acc.iter().map(|a| a.srcs).collect::<Vec<_>>()
        );
        // A loop whose loads do not feed its addresses keeps them independent.
        let p = compile_with(
            r#"[For(var: "s", from: "0", to: "3", body: [
                    Load(buf: "idx", index: "(threadIdx.x + s) % 32", width: "4", dst: "j"),
                ])]"#,
            &idx_and_a(),
        )
        .expect("compile");
        assert!(accesses(&p, 0, 0).iter().all(|a| a.srcs == 0));
        // A value that reaches the address five trips later, through a chain
        // of variables: past four passes every variable may depend on it.
        let p = compile_with(
            r#"[Let("b", "0"), Let("c", "0"), Let("d", "0"), Let("e", "0"), Let("f", "0"),
                For(var: "s", from: "0", to: "7", body: [
                    Load(buf: "idx", index: "(f + threadIdx.x) % 32", width: "4", dst: "a"),
                    Let("f", "e"), Let("e", "d"), Let("d", "c"), Let("c", "b"), Let("b", "a"),
                ])]"#,
            &idx_and_a(),
        )
        .expect("compile");
        assert!(accesses(&p, 0, 0).iter().all(|a| a.srcs == 1));
    }

    #[test]
    fn values_of_a_buffer_without_contents_cannot_be_used() {
        let e = compile_with(
            r#"[Load(buf: "a", index: "threadIdx.x", width: "4", dst: "j"),
                Load(buf: "a", index: "j", width: "4")]"#,
            &idx_and_a(),
        )
        .unwrap_err();
        assert_eq!(e.path, "kernel[1].Load.index");
        assert!(e.message.contains("declares no contents"), "{}", e.message);
        let e = compile_with(
            r#"[Store(buf: "idx", index: "threadIdx.x", width: "4")]"#,
            &idx_and_a(),
        )
        .unwrap_err();
        assert!(e.message.contains("read-only"), "{}", e.message);
    }

    #[test]
    fn a_barrier_under_divergence_faults() {
        let p = compile_with(
            r#"[If(cond: "threadIdx.x < 8", then: [Sync])]"#,
            &idx_and_a(),
        )
        .expect("compile");
        let mut w = Warp::default();
        w.reset(&p, [0, 0, 0], 0);
        let e = w
            .run_to_end(
                &p,
                &mut Scratch::default(),
                &mut WarpAccess::default(),
                |_| {},
            )
            .unwrap_err();
        assert!(matches!(
            e.fault,
            ExecFault::DivergentBarrier {
                active: 0xff,
                all: u32::MAX
            }
        ));
    }
}

#!/usr/bin/env bash
# Builds and runs shared.cu on the first CUDA GPU: a check and event timing of
# every case (warm), the microbenchmarks, then Nsight Compute (one cold launch
# per case: --cache-control all flushes the caches before it).
#
# Usage: tools/measure/shared/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes (8 files): env.txt (date, nvidia-smi, versions, ptxas report, metric
#         check), regs.txt (registers and shared memory per kernel, then the
#         order of the memory instructions in each kernel's SASS), sass.txt
#         (cuobjdump -sass of the k_* kernels, then of the m_* kernels),
#         time.csv, micro.txt, smi_clocks.csv, ncu.csv (raw ncu --csv output
#         of three runs, cases 0-15, 16-27, 28-54, with the program's CASE
#         lines), run.log (this script's output, when run through tee).
# Ends within about 560 s of its start (every stage has a timeout).
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
DEADLINE=560
left() { local l=$((DEADLINE - SECONDS)); echo $((l > 5 ? l : 5)); }
TMP=$(mktemp -d)
BIN=$TMP/shared
ENV=$OUTDIR/env.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,ecc.mode.current --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE
    nvcc --version
    echo "---- build: nvcc -O3 -arch=sm_90 -Xptxas -v -o shared shared.cu"
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/shared.cu" 2>&1
    echo "build rc=$?"
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then cat "$ENV"; echo "BUILD FAILED"; exit 1; fi
echo "== build ok ($SECONDS s)"
{
    echo "# registers per thread (ptxas -v), kernel, then ptxas' whole line"
    grep -E "Compiling entry|Used [0-9]+ registers" "$ENV" | paste - - |
        sed -E 's/.*entry function .(_Z[^ ]*). for .sm_90.*ptxas info +: (Used ([0-9]+) registers.*)/\1 \3 | \2/' | c++filt
} >"$OUTDIR/regs.txt"
cuobjdump -sass "$BIN" >"$TMP/sass_all.txt" 2>&1
python3 - "$TMP/sass_all.txt" "$OUTDIR/sass.txt" >>"$OUTDIR/regs.txt" <<'EOF'
# Splits the SASS into the k_* kernels, then the m_* kernels (sass.txt), and
# prints each kernel's memory and barrier instructions in program order,
# runs of one opcode counted ("4 LDG.E, 4 STS, BAR.SYNC..., 4 LDS, 4 STG.E").
import re, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
funcs, head, cur = [], [], None
for line in open(src):
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = [m.group(1), [line]]
        funcs.append(cur)
    elif cur is None:
        head.append(line)
    else:
        cur[1].append(line)
def demangle(n):
    try:
        return subprocess.run(["c++filt", n], capture_output=True, text=True).stdout.strip() or n
    except OSError:
        return n
def base(n):
    return demangle(n).split("(")[0].split("<")[0].split()[-1]
kern = [f for f in funcs if base(f[0]).startswith("k_")]
micro = [f for f in funcs if base(f[0]).startswith("m_")]
with open(dst, "w") as o:
    o.writelines(head)
    for f in kern:
        o.writelines(f[1])
    o.write("\n\n#### the microbenchmark kernels (m_*), not cases\n")
    for f in micro:
        o.writelines(f[1])
print("\n# memory and barrier instructions in SASS program order (runs counted)")
op = re.compile(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?((LDG|STG|LDS|STS|LDSM|BAR|LDL|STL|LD|ST|ATOMS|ATOMG|RED|MEMBAR)(\.[A-Z0-9_.]+)?)\s")
for name, lines in kern + micro:
    seq = [m.group(2) for l in lines for m in [op.search(l)] if m]
    out, prev, c = [], None, 0
    for x in seq + [None]:
        if x == prev:
            c += 1
        else:
            if prev:
                out.append(f"{c} {prev}" if c > 1 else prev)
            prev, c = x, 1
    print(f"{demangle(name)}: {', '.join(out)}")
EOF
cat "$OUTDIR/regs.txt"
"$BIN" list >"$TMP/list.txt"
NCASES=$(grep -c '^[0-9]' "$TMP/list.txt")
echo "cases: $NCASES"

echo "== time ($SECONDS s)"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv -lms 200 >"$OUTDIR/smi_clocks.csv" 2>&1 &
SMI=$!
timeout 200 "$BIN" time "$OUTDIR/time.csv"
echo "time rc=$?"

echo "== micro ($SECONDS s)"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,clocks.max.sm --format=csv >"$TMP/smi_before.txt" 2>&1
timeout 60 "$BIN" micro "$TMP/micro.txt"
echo "micro rc=$?"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,clocks.max.sm --format=csv >"$TMP/smi_after.txt" 2>&1
kill $SMI 2>/dev/null
wait $SMI 2>/dev/null
{
    cat "$TMP/micro.txt"
    echo "nvidia-smi just before the microbenchmarks:"
    cat "$TMP/smi_before.txt"
    echo "nvidia-smi just after the microbenchmarks:"
    cat "$TMP/smi_after.txt"
} >"$OUTDIR/micro.txt"
tail -n 3 "$TMP/smi_before.txt" "$TMP/smi_after.txt"

echo "== ncu ($SECONDS s)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version >>"$ENV" 2>&1
BASE="gpu__time_duration.sum
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
lts__t_requests_srcunit_tex_op_write.sum
lts__t_requests_srcunit_tex_op_read.sum
dram__bytes_read.sum
dram__bytes_write.sum
l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum
l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_write.sum
l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum
l1tex__m_l1tex2xbar_write_sectors_mem_lg_op_st.sum
sm__warps_active.avg.pct_of_peak_sustained_active
sm__cycles_elapsed.avg.per_second
launch__registers_per_thread
launch__occupancy_limit_registers"
SHARED="l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
smsp__inst_executed_op_shared_ld.sum
smsp__inst_executed_op_shared_st.sum"
ok_run() { grep -q '^"ID"' "$1" && ! grep -q '==ERROR==' "$1"; }
probe() {  # probe METRICS: one shared_bank launch (case 28) under ncu
    timeout 60 "$NCU" --clock-control none --print-units base --csv --kernel-name regex:^k_ --metrics "$1" "$BIN" ncu 28 29 >"$TMP/probe.txt" 2>&1
    ok_run "$TMP/probe.txt"
}
M=$(echo $BASE $SHARED | tr ' ' ',')
if ! probe "$M"; then
    echo "---- probe with all metrics failed:" >>"$ENV"
    grep -v '^"' "$TMP/probe.txt" | head -20 >>"$ENV"
    M=""
    for m in $SHARED; do
        if probe "$m"; then M=${M:+$M,}$m; else echo "metric dropped: $m" | tee -a "$ENV"; fi
    done
    B=$(echo $BASE | tr ' ' ',')
    if probe "$B"; then
        M=$B${M:+,$M}
    else
        for m in $BASE; do
            if probe "$m"; then M=$m${M:+,$M}; else echo "metric dropped: $m" | tee -a "$ENV"; fi
        done
    fi
fi
echo "metrics used: $M" | tee -a "$ENV"
: >"$OUTDIR/ncu.csv"
for range in "0 16" "16 28" "28 $NCASES"; do
    timeout "$(left)" "$NCU" --clock-control none --cache-control all --print-units base --csv \
        --kernel-name regex:^k_ --metrics "$M" "$BIN" ncu $range >>"$OUTDIR/ncu.csv" 2>&1
    echo "ncu cases $range rc=$? ($SECONDS s)"
done
grep -v '^"' "$OUTDIR/ncu.csv" | grep -iE "error|warn" | grep -v "unmodified GPU clocks" | head -5
echo "profiled launches: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") of $NCASES"
{ echo "---- after the run ($SECONDS s)"; nvidia-smi -q -d CLOCK,PERFORMANCE; } >>"$ENV" 2>&1
echo "== done ($SECONDS s)"

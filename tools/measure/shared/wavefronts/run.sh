#!/usr/bin/env bash
# Builds wavefronts.cu, checks every case, then runs each case once under
# Nsight Compute (cold: --cache-control all) with the shared-memory metrics.
#
# Usage: tools/measure/shared/wavefronts/run.sh [OUTDIR]  (default $OUT, else ./out)
# Writes: env.txt (date, nvidia-smi, versions, ptxas -v, blocks per SM and
#         waves per case, the output check, the metric probing),
#         metrics_query.txt (ncu --query-metrics --chip gh100, the lines
#         naming data_bank or wavefronts), regs.txt (memory and barrier
#         instructions of each k_* kernel in SASS program order), sass.txt
#         (cuobjdump -sass), ncu.csv (raw ncu --csv with the CASE lines),
#         table.txt (summarize.py's table and raw metrics per case).
# Ends within about 220 s of its start (every stage has a timeout).
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
DEADLINE=220
left() { local l=$((DEADLINE - SECONDS)); echo $((l > 5 ? l : 5)); }
TMP=$(mktemp -d)
BIN=$TMP/wavefronts
ENV=$OUTDIR/env.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,clocks.mem,ecc.mode.current --format=csv
    nvcc --version | tail -n 2
    echo "---- build: nvcc -O3 -arch=sm_90 -Xptxas -v -o wavefronts wavefronts.cu"
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/wavefronts.cu" 2>&1
    echo "build rc=$?"
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then cat "$ENV"; echo "BUILD FAILED"; exit 1; fi
echo "== build ok ($SECONDS s)"
grep -E "Compiling entry|Used [0-9]+ registers" "$ENV" | paste - - |
    sed -E 's/.*entry function .(_Z[^ ]*). for .sm_90.*ptxas info +: (Used .*)/\1 | \2/' | c++filt >"$OUTDIR/regs.txt"
cuobjdump -sass "$BIN" >"$OUTDIR/sass.txt" 2>&1
python3 - "$OUTDIR/sass.txt" >>"$OUTDIR/regs.txt" <<'EOF'
# each kernel's memory and barrier instructions in program order, runs counted
import re, sys
funcs, cur = [], None
for line in open(sys.argv[1]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = [m.group(1), []]
        funcs.append(cur)
    elif cur:
        cur[1].append(line)
op = re.compile(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?((LDG|STG|LDS|STS|BAR|LDL|STL|LD|ST)(\.[A-Z0-9_.]+)?)\s")
print("\n# memory and barrier instructions in SASS program order (runs counted)")
for name, lines in funcs:
    seq = [m.group(2) for l in lines for m in [op.search(l)] if m]
    out, prev, c = [], None, 0
    for x in seq + [None]:
        if x == prev:
            c += 1
        else:
            if prev:
                out.append(f"{c} {prev}" if c > 1 else prev)
            prev, c = x, 1
    print(f"{name}: {', '.join(out)}")
EOF
cat "$OUTDIR/regs.txt"

echo "== check ($SECONDS s)"
{ echo "---- ./wavefronts check"; timeout 60 "$BIN" check; echo "check rc=$?"; } 2>&1 | tee -a "$ENV" | grep -E "waves|total|rc="

echo "== metrics ($SECONDS s)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version >>"$ENV" 2>&1
timeout 60 "$NCU" --query-metrics --chip gh100 >"$TMP/query.txt" 2>&1
echo "query rc=$? ($(wc -l <"$TMP/query.txt") lines)" | tee -a "$ENV"
grep -E "data_bank|wavefronts" "$TMP/query.txt" >"$OUTDIR/metrics_query.txt"
BASE="gpu__time_duration.sum
launch__waves_per_multiprocessor
launch__occupancy_limit_shared_mem
launch__shared_mem_config_size
smsp__inst_executed_op_shared_ld.sum
smsp__inst_executed_op_shared_st.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
l1tex__data_pipe_lsu_wavefronts.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum
l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_write.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum"
# every l1tex__data_bank* metric the chip lists (base names), as .sum
EXTRA=$(grep -oE "^ *l1tex__data_bank[a-z0-9_]*" "$TMP/query.txt" | tr -d ' ' | sort -u | sed 's/$/.sum/' |
    grep -vxF -f <(echo "$BASE") | head -16)
echo "l1tex__data_bank metrics listed: $(echo $EXTRA)" | tee -a "$ENV"
ok_run() { grep -q '^"ID"' "$1" && ! grep -q '==ERROR==' "$1"; }
probe() {  # probe METRICS: case 1 under ncu
    timeout 30 "$NCU" --clock-control none --print-units base --csv --kernel-name regex:^k_ --metrics "$1" "$BIN" ncu 1 2 >"$TMP/probe.txt" 2>&1
    ok_run "$TMP/probe.txt"
}
pick() {  # pick LIST: the metrics of LIST that ncu accepts, comma-separated
    local all ok=""
    all=$(echo $1 | tr ' ' ',')
    if [ -z "$all" ]; then return; fi
    if probe "$all"; then echo "$all"; return; fi
    { echo "---- probe of [$all] failed:"; grep -v '^"' "$TMP/probe.txt" | head -8; } >>"$ENV"
    for m in $1; do
        if probe "$m"; then ok=${ok:+$ok,}$m; else echo "metric dropped: $m" >>"$ENV"; fi
    done
    echo "$ok"
}
M=$(pick "$BASE")
X=$(pick "$EXTRA")
M=$M${X:+,$X}
grep "metric dropped" "$ENV"
echo "metrics used: $M" | tee -a "$ENV"

echo "== ncu ($SECONDS s)"
timeout "$(left)" "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --kernel-name regex:^k_ --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? ($SECONDS s)"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -iE "error|warn" | grep -v "unmodified GPU clocks" | head -5
python3 "$HERE/summarize.py" "$OUTDIR/ncu.csv" >"$OUTDIR/table.txt" 2>&1
head -n 20 "$OUTDIR/table.txt"
{ echo "---- after the run ($SECONDS s)"; nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv; } >>"$ENV" 2>&1
echo "== done ($SECONDS s)"

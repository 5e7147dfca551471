# The set-up every campaign's run.sh shares, sourced by it:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
#   measure_build NAME "${1:-}"
#
# (or `measure_ncu_h200 NAME "${1:-}"`, below, for an H200 campaign under
# Nsight Compute)
#
# builds NAME.cu (beside the calling script) for sm_90 and sets HERE (that
# folder), OUTDIR (the argument, else $OUT, else HERE/out), TMP, BIN (the
# program), ENV (OUTDIR/env.txt: date, GPU, driver, clocks, ECC, nvcc
# version, ptxas report, the SM clock now) and NCU (Nsight Compute's command
# line, the newest installed; empty if none: `need_ncu` stops the script
# then). A failed build prints ENV and stops the script. TMP is removed when
# the script exits.
measure_build() {
    local name=$1
    # The campaign's folder: the script being run (the outermost source,
    # whether it calls this directly or through measure_ncu_h200).
    HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[-1]}")" >/dev/null && pwd)
    OUTDIR=${2:-${OUT:-$HERE/out}}
    mkdir -p "$OUTDIR"
    export PATH=$PATH:/usr/local/cuda/bin
    TMP=$(mktemp -d)
    trap 'rm -rf "$TMP"' EXIT
    BIN=$TMP/$name
    ENV=$OUTDIR/env.txt
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv
        nvcc --version | tail -2
        nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/$name.cu" 2>&1
        echo "build rc=$?"
    } >"$ENV" 2>&1
    if [ ! -x "$BIN" ]; then
        cat "$ENV"
        echo "BUILD FAILED"
        exit 1
    fi
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
}

# The start of an H200 campaign under Nsight Compute: stops on any other
# GPU (require_h200), builds NAME (measure_build, same arguments), stops
# without Nsight Compute (need_ncu) and adds its version to ENV.
#   measure_ncu_h200 NAME "${1:-}"
measure_ncu_h200() {
    require_h200
    measure_build "$@"
    need_ncu
    "$NCU" --version >>"$ENV" 2>&1
}

# Stops the script unless Nsight Compute was found.
need_ncu() {
    if [ -z "$NCU" ]; then
        echo "Nsight Compute (ncu) not found" | tee -a "$ENV"
        exit 1
    fi
}

# Stops the script, measuring nothing, on any GPU but an H200 (the campaigns
# are for the H200's configuration; configs/h100.ron is checked, not
# fitted, against an H100).
require_h200() {
    local gpu
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
    case "$gpu" in
    *H200*) echo "== GPU: $gpu" ;;
    *) echo "NOT AN H200: '$gpu'; nothing measured"; exit 3 ;;
    esac
}

# Sets M to the comma-separated metrics of WANT (one per line) that Nsight
# Compute reads on this GPU: all at once if one run with all of them works,
# else each one alone, naming the dropped ones in ENV. The probe runs
# "$NCU" "${NCUARGS[@]}" --metrics ... followed by the rest of the
# arguments (the program and its arguments for one short case).
#   probe_metrics "$WANT" "$BIN" ncu 0 1
probe_metrics() {
    local want=$1 m
    shift
    ok_run() { grep -q '^"ID"' "$1" && ! grep -q '==ERROR==' "$1"; }
    M=$(echo $want | tr ' ' ',')
    "$NCU" "${NCUARGS[@]}" --metrics "$M" "$@" >"$TMP/probe.txt" 2>&1
    if ! ok_run "$TMP/probe.txt"; then
        echo "---- probe with all metrics failed:" >>"$ENV"
        grep -v '^"' "$TMP/probe.txt" | head -20 >>"$ENV"
        M=""
        for m in $want; do
            "$NCU" "${NCUARGS[@]}" --metrics "$m" "$@" >"$TMP/p1.txt" 2>&1
            if ok_run "$TMP/p1.txt"; then M=${M:+$M,}$m; else echo "metric dropped: $m" | tee -a "$ENV"; fi
        done
    fi
    echo "metrics used: $M" | tee -a "$ENV"
}

# One cold launch of each of BIN's `m_` kernels under Nsight Compute
# (`--cache-control all --clock-control none`), the metrics M, to
# OUTDIR/NAME.csv with the program's own output (its CASE lines); prints the
# rows and CASE lines found.
#   ncu_cold NAME "$M" [program arguments]
ncu_cold() {
    local name=$1 metrics=$2
    shift 2
    timeout 480 "$NCU" --clock-control none --cache-control all --print-units base --csv \
        --kernel-name regex:^m_ --metrics "$metrics" "$BIN" "$@" >"$OUTDIR/$name.csv" 2>&1
    echo "ncu $name rc=$? rows: $(grep -c gpu__time_duration "$OUTDIR/$name.csv") cases: $(grep -c ^CASE "$OUTDIR/$name.csv")"
}

# The Nsight Compute part of a campaign whose program runs its cases under
# `BIN ncu [FROM TO [REPS]]`: the metric list WANT (one per line) tried on
# the first case, then OUTDIR/ncu.csv (one cold launch per case, every
# metric) and OUTDIR/ncu_time.csv (five cold launches per case, the
# duration alone); every case, or cases FROM..TO-1.
#   ncu_campaign "$WANT" [FROM TO]
ncu_campaign() {
    local from=${2:-0} to=${3:-100000}
    need_ncu
    "$NCU" --version >>"$ENV" 2>&1
    echo "== ncu metric check ($(date -u '+%H:%M:%S'))"
    NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
    probe_metrics "$1" "$BIN" ncu "$from" $((from + 1))
    echo "== ncu all metrics ($(date -u '+%H:%M:%S'))"
    timeout 200 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu "$from" "$to" >"$OUTDIR/ncu.csv" 2>&1
    echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
    echo "== ncu duration x5 ($(date -u '+%H:%M:%S'))"
    timeout 150 "$NCU" "${NCUARGS[@]}" --metrics gpu__time_duration.sum "$BIN" ncu "$from" "$to" 5 >"$OUTDIR/ncu_time.csv" 2>&1
    echo "ncu time rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu_time.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu_time.csv")"
}

# Registers per kernel (the ptxas report in ENV), then each kernel's opcodes
# with their counts and its number of SASS instructions (INSTR), to
# OUTDIR/sass_counts.txt; the SASS itself to OUTDIR/sass.txt.
#   sass_counts
sass_counts() {
    {
        echo "# registers per thread (ptxas -v)"
        grep -E "Compiling entry|Used [0-9]+ registers" "$ENV" | paste - - |
            sed -E 's/.*entry function .(_Z[^ ]*). for .sm_90.*Used ([0-9]+) registers.*/\1 \2/' | c++filt
        echo "# spills (ptxas -v)"
        grep -E "spill" "$ENV" | sort | uniq -c
        echo "# kernel opcode count (INSTR = all SASS instructions)"
        cuobjdump -sass "$BIN" | awk '/Function :/ {fn = $3}
            /^ +\/\*[0-9a-f]+\*\/ +[A-Z@]/ {c[fn " INSTR"]++; match($0, /\*\/ +(@!?U?P[0-9T] +)?[A-Z][A-Z0-9_.]*/); s = substr($0, RSTART, RLENGTH); sub(/.*\*\/ +(@!?U?P[0-9T] +)?/, "", s); sub(/\..*/, "", s); c[fn " " s]++}
            END {for (k in c) print k, c[k]}' | sort | c++filt
    } >"$OUTDIR/sass_counts.txt" 2>&1
    cuobjdump -sass "$BIN" | c++filt >"$OUTDIR/sass.txt" 2>&1
}

# The GPU's state before a campaign's measurements (nvidia-smi, and its
# clocks, power and ECC), appended to ENV.
#   gpu_state_before
gpu_state_before() {
    {
        echo "---- nvidia-smi"
        nvidia-smi
        echo "---- nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,ECC (before)"
        nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,ECC
    } >>"$ENV" 2>&1
}

# The end of a campaign: the GPU's clocks after the run appended to ENV,
# then the event times printed.
#   campaign_end
campaign_end() {
    {
        echo "---- after the run ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
        nvidia-smi -q -d CLOCK,PERFORMANCE
    } >>"$ENV" 2>&1
    echo "== done ($(date -u '+%H:%M:%S'))"
    cat "$OUTDIR/time.csv" 2>/dev/null
}

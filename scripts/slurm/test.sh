#!/usr/bin/env bash
# A real SLURM run of the recipe in this folder, as `.ci/run` does it.
#
# Installs Debian's slurmctld, slurmd and munge if they are missing, starts a
# single-node cluster on this machine from test/slurm.conf.in (munged,
# slurmctld and slurmd, each with its pid file in a scratch directory),
# submits sweep.sbatch as a job array of 4 tasks and merge.sbatch after it
# (--dependency=afterok), waits, and compares the merged CSV byte for byte
# with the same sweep run locally. It stops the daemons it started, by their
# pid files, whatever happens. Needs root (to install and to run slurmd);
# elsewhere it says so and skips, except under CI, where it fails.
set -euo pipefail
started=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
say() { echo "slurm test: $*"; }

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    if [ "${CI:-}" = true ]; then
        say "needs root and apt-get (Debian) to install SLURM" >&2
        exit 1
    fi
    say "SKIPPED: needs root and apt-get (Debian) to install SLURM"
    exit 0
fi

# --- SLURM and munge from Debian, unless already there.
missing=0
for cmd in slurmctld slurmd sbatch munged; do
    command -v "$cmd" >/dev/null || missing=1
done
if [ "$missing" = 1 ]; then
    say "installing slurmctld slurmd slurm-client munge"
    # Keep the packages from starting their own services (they would look for
    # /etc/slurm/slurm.conf); the test starts its own daemons.
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        own_policy=1
    fi
    (
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            slurmctld slurmd slurm-client munge
    ) >/tmp/gpusim-slurm-apt.log 2>&1 || {
        [ "$own_policy" = 0 ] || rm -f "$policy"
        tail -20 /tmp/gpusim-slurm-apt.log >&2
        exit 1
    }
    [ "$own_policy" = 0 ] || rm -f "$policy"
    rm -f /tmp/gpusim-slurm-apt.log
fi

gpusim="$repo/target/release/gpusim"
(cd "$repo" && cargo build --release --quiet --bin gpusim)

# --- A scratch cluster. munged wants its socket's directories searchable by
# all and its key readable by its owner only.
work=$(mktemp -d /tmp/gpusim-slurm.XXXXXX)
chmod 755 "$work"
mkdir -p "$work"/{key,run,state,spool,log,out}
chmod 700 "$work/key"

stop_daemons() {
    local name pid
    for name in slurmd slurmctld munged; do
        [ -s "$work/run/$name.pid" ] || continue
        pid=$(cat "$work/run/$name.pid")
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
}
on_exit() {
    local rc=$?
    stop_daemons
    if [ "$rc" = 0 ]; then
        say "passed in $(($(date +%s) - started)) s, daemons stopped"
    else
        say "FAILED; daemon and job logs:" >&2
        tail -n 15 "$work"/log/* >&2 || true
    fi
    rm -rf "$work"
}
trap on_exit EXIT

# Two free TCP ports for slurmctld and slurmd.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=()
p=$((20000 + ($$ % 5000) * 2))
while [ "${#ports[@]}" -lt 2 ]; do
    if port_free "$p"; then ports+=("$p"); fi
    p=$((p + 1))
done

host=$(hostname -s)
sed -e "s|@WORK@|$work|g" -e "s|@HOST@|$host|g" -e "s|@CPUS@|$(nproc)|g" \
    -e "s|@CTLD_PORT@|${ports[0]}|g" -e "s|@SLURMD_PORT@|${ports[1]}|g" \
    "$here/test/slurm.conf.in" >"$work/slurm.conf"
export SLURM_CONF="$work/slurm.conf"

dd if=/dev/urandom of="$work/key/munge.key" bs=1024 count=1 status=none
chmod 600 "$work/key/munge.key"
munged --socket="$work/run/munge.socket" --key-file="$work/key/munge.key" \
    --pid-file="$work/run/munged.pid" --seed-file="$work/key/munged.seed" \
    --log-file="$work/log/munged.log"
slurmctld
slurmd

wait_for() { # SECONDS DESCRIPTION COMMAND...
    local t=$1 what=$2
    shift 2
    for _ in $(seq $((t * 5))); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.2
    done
    say "timed out waiting for $what" >&2
    return 1
}
wait_for 30 "the node to be idle" bash -c 'sinfo -h -o %T | grep -qx idle'
say "cluster up: $(sinfo -h -o '%P %D node(s) %c CPUs %T')"

# --- The sweep: 2 devices x 2 element sizes x 8 offsets = 32 points.
sweep=(configs/c1060.ron configs/c2050.ron workloads/offset.ron --set nMB=1 --set offset=0..=7)
cd "$repo"
"$gpusim" run "${sweep[@]}" --csv "$work/local.csv" --quiet

export GPUSIM="$gpusim"
jid=$(sbatch --parsable --array=1-4 --cpus-per-task=1 --output="$work/log/task-%a.out" \
    scripts/slurm/sweep.sbatch "$work/out" "${sweep[@]}")
say "submitted the sweep as job array $jid (4 tasks)"
timeout 180 sbatch --wait --parsable --dependency=afterok:"$jid" \
    --output="$work/log/merge.out" scripts/slurm/merge.sbatch "$work/out" >/dev/null
for i in 1 2 3 4; do
    say "  $(head -n 1 "$work/out/shard-$i.csv")"
done
cmp "$work/local.csv" "$work/out/sweep.csv"
rows=$(($(wc -l <"$work/out/sweep.csv") - 1))
say "merged CSV of 4 shards ($rows rows) is byte-identical to the local run"

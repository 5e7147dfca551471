#!/usr/bin/env bash
# Runs a fixed set of points with every block timed (--sample off) and
# writes their CSV to DIR: a change meant to speed the model up without
# changing it must leave these files byte-identical.
#   tools/speed/identity.sh BIN DIR
set -euo pipefail
bin=$1; out=$2; mkdir -p "$out"
cd "$(dirname "$0")/../.."
r() { name=$1; shift; "$bin" run "$@" -q --sample off --csv "$out/$name.csv"; }
r c870_offset configs/c870.ron workloads/offset.ron --set offset=0,1,16
r c1060_stride configs/c1060.ron workloads/stride.ron --set stride=1,2,8
r c2050_stride configs/c2050.ron workloads/stride.ron --set stride=1,3,16
r h200_stride configs/h200.ron workloads/stride.ron --set stride=1,7,32
r h200_offset configs/h200.ron workloads/offset.ron --set offset=0,1
r h200_stream_write configs/h200.ron workloads/stream_write.ron --set nMB=16
r h200_stream_copy configs/h200.ron workloads/stream_copy.ron --set nMB=16
r h200_scatter configs/h200.ron workloads/scatter.ron --set fMB=64 --set w=32,128 --set threads=1048576
r h200_lines_st configs/h200.ron workloads/lines_st.ron --set nMB=16 --set lines=1,8,32
r h200_partial_store configs/h200.ron workloads/partial_store.ron --set k=4,32
r h200_store_run configs/h200.ron workloads/store_run.ron --set k=1,4
r h200_ilp_read configs/h200.ron workloads/ilp_read.ron --set nMB=32 --set u=1,8
# Kernels with branches, loops, barriers, shared memory and loaded values.
r h200_transpose_tiled configs/h200.ron workloads/transpose_tiled.ron --set n=1024,2048
r h200_transpose_padded configs/h200.ron workloads/transpose_tiled_padded.ron --set n=1024
r h200_transpose_naive configs/h200.ron workloads/transpose_naive.ron --set n=1024
r h200_copy configs/h200.ron workloads/copy.ron --set n=1024
r h200_clear_stride_loop configs/h200.ron workloads/clear_stride_loop.ron --set full=0,1
r h200_clear_four configs/h200.ron workloads/clear_four.ron
r h200_gather configs/h200.ron workloads/gather.ron --set n=1048576 --set w=32,1048576
r h200_shared_bank configs/h200.ron workloads/shared_bank.ron --set width=4,8 --set stride=1,17
r c2050_struct configs/c2050.ron workloads/struct_float3.ron
r c1060_clear_four configs/c1060.ron workloads/clear_four.ron

#!/usr/bin/env bash
# usage: bench/ncu_case.sh CASE_DIR OUT.txt [spconv-bench flags]
#
# Profiles one compiled case on the GPU machine with Nsight Compute: the first launch of its
# spconv kernel, clocks left alone (--clock-control none), the metrics docs/tuning-log.md
# reports (time, grid, registers, active warps, issue rate, stall reasons per issued
# instruction, issued warp instructions, FFMA thread instructions, DRAM throughput, and the
# shared loads: instructions, wavefronts and bank conflicts, whose ratio says whether a
# kernel's shared-memory time is its bytes or its conflicts).
# CASE_DIR holds kernels.json, kernels.cubin, weights.bin [and bias.bin], as written by
#   spconv-translate --spconv-compile CONV.mlir --artifact-prefix=CASE_DIR/kernels -o CASE_DIR/kernels.json
# (spconv-gen-conv writes weights.bin and bias.bin). The kernel is checked against cuDNN FP32
# by spconv-bench in the same run. spconv-bench from $SPCONV_BENCH, else build/bin.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -ge 2 ] || { sed -n '2,13p' "$0"; exit 2; }
dir="$1"; out="$2"; shift 2
bench="${SPCONV_BENCH:-$here/../build/bin/spconv-bench}"
metrics=(
  gpu__time_duration.sum launch__grid_size launch__block_size launch__registers_per_thread
  sm__warps_active.avg.pct_of_peak_sustained_active smsp__issue_active.avg.per_cycle_active
  smsp__inst_executed.sum smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
  smsp__sass_thread_inst_executed_op_hfma_pred_on.sum
  smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio
  smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
  smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
  smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio
  smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
  smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  smsp__inst_executed_op_shared_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
)
args=(--launch "$dir/kernels.json" --module "$dir/kernels.cubin" --weights "$dir/weights.bin"
      --no-graph --iters 1 --no-cusparse --no-tf32)
[ -f "$dir/bias.bin" ] && args+=(--bias "$dir/bias.bin")
IFS=, metric_list="${metrics[*]}"
# SPCONV_NCU_FLAGS adds ncu flags, e.g. "--cache-control none --launch-skip 3" to profile a
# launch that finds its code and input in L2 as a timed launch does (ncu flushes the caches
# before each replay by default, which inflates instruction-fetch stalls).
IFS=' ' read -r -a ncu_flags <<< "${SPCONV_NCU_FLAGS:-}"
ncu --clock-control none "${ncu_flags[@]}" -k regex:spconv_conv2d --launch-count 1 --metrics "$metric_list" \
  "$bench" "${args[@]}" "$@" > "$out" 2>&1

# Sourced by the compile benchmarks. wait_peak_rss PID: waits for PID (a child of this shell)
# to end while sampling, every 0.2 s, the sum of the resident sets of spconv-translate and
# every ptxas and nvlink running; leaves the largest sum, in KiB, in PEAK_RSS_KB. Its exit
# status is PID's. (Not for $(...): a subshell cannot wait for its parent's child.)
wait_peak_rss() {
  local pid=$1 now
  PEAK_RSS_KB=0
  while kill -0 "$pid" 2>/dev/null; do
    now=$(ps -e -o rss=,comm= | awk '$2 ~ /^(spconv-translat|ptxas|nvlink)/ {s += $1} END {print s + 0}')
    [ "$now" -gt "$PEAK_RSS_KB" ] && PEAK_RSS_KB=$now
    sleep 0.2
  done
  wait "$pid"
}

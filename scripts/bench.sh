#!/usr/bin/env bash
# Measures ringflake against its peers and prints what BENCHMARKS.md shows:
# the machine, a benchstat table of the benchmarks of the nested module
# bench/, the saturation and latency harness (bench/cmd/saturate), and one
# ratio line per target ("ringflake/peer = x.xx", medians of one run).
# Not part of CI's test command: scripts/test.sh only runs each benchmark
# once so that none can rot.
#
#   COUNT=6         samples per benchmark, at least 6. They are taken as
#                   COUNT rounds of -count 1 over every benchmark (the same
#                   samples as -count COUNT, interleaved), so that a noisy
#                   moment of a shared machine spreads over all rows instead
#                   of skewing one ratio.
#   BENCHTIME=1s    -benchtime of each sample
#   BENCH=.         -bench pattern
#   SATURATE_ARGS=  arguments for the harness (see go run ./cmd/saturate -h);
#                   SATURATE=0 skips it
#   OUT=DIR         keep the raw outputs in DIR (default: a new temporary
#                   directory, printed at the end)
#   QUIET=1         before each round and the harness, wait (at most 2 min)
#                   until the CPUs were at least 90 % idle for half a
#                   second, so that other work on a shared machine skews
#                   fewer samples (Linux; QUIET=0 does not wait)
#
# benchstat is installed into a temporary GOBIN when it is not on PATH.
set -euo pipefail

cd "$(dirname "$0")/../bench"
# bench/ is a module of its own (it replaces ringflake with ../), built as
# such: the repository's go.work does not list it.
export GOWORK=off
count=${COUNT:-6}
benchtime=${BENCHTIME:-1s}
pattern=${BENCH:-.}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/ringflake-bench.XXXXXX")}
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

# wait_quiet waits until the CPUs were at least 90 % idle over half a
# second, for at most two minutes (see QUIET).
wait_quiet() {
  [ "${QUIET:-1}" != "0" ] && [ -r /proc/stat ] || return 0
  local i u n s idle iow irq sirq steal busy0 idle0 busy1 idle1
  for i in $(seq 240); do
    read -r _ u n s idle iow irq sirq steal _ < /proc/stat
    busy0=$((u + n + s + irq + sirq + steal)) idle0=$((idle + iow))
    sleep 0.5
    read -r _ u n s idle iow irq sirq steal _ < /proc/stat
    busy1=$((u + n + s + irq + sirq + steal)) idle1=$((idle + iow))
    if [ $((10 * (idle1 - idle0))) -ge $((9 * (busy1 - busy0 + idle1 - idle0))) ]; then
      return 0
    fi
    [ "$i" = 1 ] && echo "waiting for the CPUs to be idle (QUIET=0 does not wait)" >&2
  done
  echo "bench.sh: the machine stayed busy; measuring anyway" >&2
}

if [ "$count" -lt 6 ]; then
  echo "bench.sh: COUNT=$count: want at least 6 samples per benchmark" >&2
  exit 2
fi

benchstat=$(command -v benchstat || true)
if [ -z "$benchstat" ]; then
  gobin=$(mktemp -d "${TMPDIR:-/tmp}/benchstat.XXXXXX")
  trap 'rm -rf "$gobin"' EXIT
  step "go install golang.org/x/perf/cmd/benchstat@latest (into $gobin)"
  GOBIN=$gobin go install golang.org/x/perf/cmd/benchstat@latest
  benchstat=$gobin/benchstat
fi

step "machine"
go version
if command -v lscpu >/dev/null; then
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|Hypervisor|L[123])' || true
fi
echo "GOMAXPROCS: ${GOMAXPROCS:-$(nproc 2>/dev/null || echo '?') (default)}"

step "benchmarks: $count rounds of -bench '$pattern' -benchtime $benchtime -count 1 -benchmem"
# Build everything first, so that the whole run measures one version.
go test -c -o "$out/bench.test" .
go build -o "$out/saturate" ./cmd/saturate
go build -o "$out/ratios" ./cmd/ratios
: > "$out/raw.txt"
for i in $(seq "$count"); do
  printf 'round %d of %d\n' "$i" "$count" >&2
  wait_quiet
  "$out/bench.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" \
    -test.count 1 -test.benchmem >> "$out/raw.txt" 2>&1 || true
done
# benchstat reads result lines; a failed benchmark is reported and fails
# the script at the end.
grep -E '^(goos|goarch|pkg|cpu):|^Benchmark.* ns/op' "$out/raw.txt" | awk '!/^(goos|goarch|pkg|cpu):/ || !seen[$0]++' > "$out/bench.txt"
failed=$(grep -E -- '^--- FAIL|^FAIL|panic:' "$out/raw.txt" || true)

step "benchstat (median ± 95% confidence interval of $count samples)"
"$benchstat" "$out/bench.txt"

if [ "${SATURATE:-1}" != "0" ]; then
  step "saturation and latency harness"
  wait_quiet
  # shellcheck disable=SC2086 # SATURATE_ARGS is a list of arguments
  "$out/saturate" ${SATURATE_ARGS:-} | tee "$out/saturate.txt"
fi

step "targets (medians of this run)"
"$out/ratios" "$out/bench.txt" | tee "$out/ratios.txt"
if [ -f "$out/saturate.txt" ]; then
  grep -E '^(saturated|CPU per ID|bursts)' "$out/saturate.txt" | tee -a "$out/ratios.txt"
fi

echo
echo "raw outputs: $out"
if [ -n "$failed" ]; then
  echo "bench.sh: some benchmarks failed:" >&2
  echo "$failed" >&2
  exit 1
fi

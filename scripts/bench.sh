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
#   GOBENCH=1       the go test benchmarks, benchstat and the ratio lines;
#                   GOBENCH=0 skips them (to run only the harness or the
#                   HTTP section)
#   SERVE=1         the HTTP section: the built `ringflake serve` on
#                   loopback under wrk (installed with apt-get when
#                   missing), requests/s and p99 latency of /healthz,
#                   /v1/id and /v1/ids?n=100 side by side, medians of
#                   SERVE_RUNS interleaved runs of SERVE_DURATION each with
#                   SERVE_WRK (wrk's -t and -c), each run in another order;
#                   SERVE=0 skips it
#   SERVE_RUNS=5 SERVE_DURATION=5s SERVE_WRK="-t1 -c32"
#   STATIC=DIR      build instead, for another machine (a many-core one):
#                   static test binaries (CGO_ENABLED=0 go test -c) of the
#                   bench module and the root package, the harness and
#                   ratios, for GOOS/GOARCH (default: this machine's), and
#                   DIR/run.sh, which runs them there in under 3 minutes
#                   and prints the many-core table of BENCHMARKS.md
#                   (BenchmarkPar at -cpu 1,2,4,8,16), the sequential ratio
#                   lines and the harness at 1, 8 and 16 goroutines. Copy
#                   DIR over and run DIR/run.sh; nothing else is needed.
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

if [ -n "${STATIC:-}" ]; then
  mkdir -p "$STATIC"
  step "static binaries for $(go env GOOS)/$(go env GOARCH) in $STATIC"
  export CGO_ENABLED=0
  go test -c -o "$STATIC/bench.test" .
  (cd .. && GOWORK=off go test -c -o "$STATIC/ringflake.test" .)
  go build -o "$STATIC/saturate" ./cmd/saturate
  go build -o "$STATIC/ratios" ./cmd/ratios
  cat > "$STATIC/run.sh" <<'RUN'
#!/bin/sh
# Runs ringflake's many-core benchmarks from the static binaries beside
# it (built by scripts/bench.sh with STATIC=DIR) in under 3 minutes, and
# prints the tables of BENCHMARKS.md. Raw outputs go to $OUT (default: a
# new directory under /tmp).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d /tmp/ringflake-manycore.XXXXXX)}
mkdir -p "$out"
cpus=${CPUS:-1,2,4,8,16}
echo "== machine"
uname -m; nproc
if command -v lscpu >/dev/null; then lscpu | grep -E '^(Model name|CPU\(s\)|Hypervisor)' || true; fi
echo "== BenchmarkPar at -cpu $cpus (3 rounds, 200ms each)"
: > "$out/par.txt"
for i in 1 2 3; do
  "$dir/bench.test" -test.run '^$' -test.bench 'Par/(ringflake-(wide|logical|default)|bwmarrin(-wide)?|xid|uuidv7)$' \
    -test.benchtime 200ms -test.cpu "$cpus" -test.count 1 -test.benchmem >> "$out/par.txt" 2>&1
done
"$dir/ratios" -cores "$out/par.txt"
echo "== BenchmarkSeq and the root BenchmarkNext, 6 rounds"
: > "$out/seq.txt"
for i in 1 2 3 4 5 6; do
  "$dir/bench.test" -test.run '^$' -test.bench 'Seq/(ringflake-(wide|logical)|bwmarrin-wide|xid|uuidv7|time-since)$' \
    -test.benchtime 200ms -test.cpu 1 -test.count 1 -test.benchmem >> "$out/seq.txt" 2>&1
  "$dir/ringflake.test" -test.run '^$' -test.bench 'Next/' -test.benchtime 200ms -test.cpu 1,16 -test.count 1 >> "$out/seq.txt" 2>&1
done
"$dir/ratios" "$out/seq.txt" | grep -v n/a || true
echo "== the harness at the cap, 1, 8 and 16 goroutines"
"$dir/saturate" -window 500ms -rounds 2 -bursts 100 -goroutines 1,8,16 | tee "$out/saturate.txt"
echo "raw outputs: $out"
RUN
  chmod +x "$STATIC/run.sh"
  ls -l "$STATIC"
  exit 0
fi

gobench=${GOBENCH:-1}
if [ "$gobench" != "0" ] && [ "$count" -lt 6 ]; then
  echo "bench.sh: COUNT=$count: want at least 6 samples per benchmark" >&2
  exit 2
fi

# cleanup runs at exit: it removes a temporary GOBIN and stops a server
# this script started, by its PID.
gobin= serve_pid=
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$gobin" ]; then rm -rf "$gobin"; fi
}
trap cleanup EXIT

benchstat=$(command -v benchstat || true)
if [ "$gobench" != "0" ] && [ -z "$benchstat" ]; then
  gobin=$(mktemp -d "${TMPDIR:-/tmp}/benchstat.XXXXXX")
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

# Build everything first, so that the whole run measures one version.
go build -o "$out/saturate" ./cmd/saturate
go build -o "$out/ratios" ./cmd/ratios
: > "$out/bench.txt"
failed=
if [ "$gobench" != "0" ]; then
  step "benchmarks: $count rounds of -bench '$pattern' -benchtime $benchtime -count 1 -benchmem"
  go test -c -o "$out/bench.test" .
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
fi

if [ "${SATURATE:-1}" != "0" ]; then
  step "saturation and latency harness"
  wait_quiet
  # shellcheck disable=SC2086 # SATURATE_ARGS is a list of arguments
  "$out/saturate" ${SATURATE_ARGS:-} | tee "$out/saturate.txt"
fi

# median: prints the median of the numbers on stdin, one a line.
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# wrk_ms VALUE: prints a wrk latency (850.00us, 1.20ms, 1.05s) in ms.
wrk_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n *= 1; else if (v ~ /m$/) n *= 60000; else if (v ~ /s$/) n *= 1000
    printf "%.2f\n", n
  }'
}

# proc_cpu PID: prints the CPU time (user + system) process PID used so
# far, in clock ticks (getconf CLK_TCK a second), or 0 without /proc.
proc_cpu() {
  if [ -r "/proc/$1/stat" ]; then
    awk '{ print $14 + $15 }' "/proc/$1/stat"
  else
    echo 0
  fi
}

# cpu_us FILE: prints the server's CPU time per request of a wrk output
# that proc_cpu's ticks were appended to, in µs.
cpu_us() {
  awk -v hz="$(getconf CLK_TCK)" '/ requests in / { n = $1 } /^server CPU ticks:/ { t = $4 }
    END { if (n > 0) printf "%.1f\n", t / hz * 1e6 / n }' "$1"
}

if [ "${SERVE:-1}" != "0" ]; then
  serve_runs=${SERVE_RUNS:-5}
  serve_duration=${SERVE_DURATION:-5s}
  serve_wrk=${SERVE_WRK:--t1 -c32}
  step "HTTP: ringflake serve under wrk $serve_wrk, $serve_runs interleaved runs of $serve_duration per endpoint"
  if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
      echo "bench.sh: wrk is not installed and only root can install it: apt-get install -y wrk (or SERVE=0)" >&2
      exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  fi
  wrk --version 2>&1 | head -n 1 || true
  (cd ../cmd/ringflake && go build -o "$out/ringflake" .)
  "$out/ringflake" serve -listen 127.0.0.1:0 -node 1 2> "$out/serve.log" &
  serve_pid=$!
  url=
  for _ in $(seq 100); do
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$out/serve.log")
    if [ -n "$url" ] || ! kill -0 "$serve_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "bench.sh: ringflake serve did not start; its log:" >&2
    cat "$out/serve.log" >&2
    exit 1
  fi
  echo "server: $url (PID $serve_pid)"
  endpoints=(/healthz /v1/id '/v1/ids?n=100')
  names=(healthz id ids100)
  # shellcheck disable=SC2086 # serve_wrk is a list of arguments
  wrk $serve_wrk -d 1s "$url/v1/id" >/dev/null # warm-up
  for run in $(seq "$serve_runs"); do
    printf 'run %d of %d\n' "$run" "$serve_runs" >&2
    wait_quiet
    for k in "${!endpoints[@]}"; do
      i=$(((k + run) % ${#endpoints[@]})) # each run starts with another endpoint
      f=$out/wrk-${names[i]}-$run.txt
      cpu0=$(proc_cpu "$serve_pid")
      # shellcheck disable=SC2086
      wrk $serve_wrk -d "$serve_duration" --latency "$url${endpoints[i]}" > "$f"
      echo "server CPU ticks: $(($(proc_cpu "$serve_pid") - cpu0))" >> "$f"
    done
  done
  kill -TERM "$serve_pid"
  wait "$serve_pid" || failed="$failed"$'\n'"ringflake serve did not exit cleanly"
  serve_pid=

  {
    echo "| endpoint | requests/s | p99 latency | IDs/s | requests/s vs /healthz (median of the runs' ratios) | server CPU per request | vs /healthz |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for i in "${!endpoints[@]}"; do
      rps=$(cat "$out"/wrk-"${names[i]}"-*.txt | awk '/^Requests\/sec:/ { print $2 }' | median)
      p99=$(for f in "$out"/wrk-"${names[i]}"-*.txt; do wrk_ms "$(awk '$1 == "99%" { print $2 }' "$f")"; done | median)
      case ${names[i]} in
        id) ids=$(printf "%.0f" "$rps") ;;
        ids100) ids=$(awk -v r="$rps" 'BEGIN { printf "%.0f", r * 100 }') ;;
        *) ids="–" ;;
      esac
      # The ratio is the median of the runs' own ratios: each run's
      # endpoints ran back to back, so a busy moment of a shared machine
      # skews one run's ratio less than it skews one endpoint's median.
      ratio=$(for run in $(seq "$serve_runs"); do
        awk '/^Requests\/sec:/ { print $2 }' "$out/wrk-${names[i]}-$run.txt" "$out/wrk-healthz-$run.txt" | paste -sd' ' | awk '{ print $1 / $2 }'
      done | median)
      # CPU time per request is what the server spends on one request,
      # whatever else the machine runs: the capacity its handler leaves.
      cpu=$(for f in "$out"/wrk-"${names[i]}"-*.txt; do cpu_us "$f"; done | median)
      [ "$i" = 0 ] && cpu_base=$cpu
      printf '| `%s` | %.0f | %.2f ms | %s | %.2f | %.1f µs | %.2f |\n' "${endpoints[i]}" "$rps" "$p99" "$ids" "$ratio" \
        "$cpu" "$(awk -v a="$cpu" -v b="$cpu_base" 'BEGIN { print a / b }')"
    done
  } | tee "$out/serve.txt"
  errors=$(grep -h -E 'Non-2xx|Socket errors' "$out"/wrk-*.txt || true)
  if [ -n "$errors" ]; then
    failed="$failed"$'\n'"wrk saw errors:"$'\n'"$errors"
  fi
fi

step "targets (medians of this run)"
: > "$out/ratios.txt"
if [ "$gobench" != "0" ]; then
  "$out/ratios" "$out/bench.txt" | tee "$out/ratios.txt"
fi
if [ -f "$out/saturate.txt" ]; then
  grep -E '^(saturated|CPU per ID|bursts)' "$out/saturate.txt" | tee -a "$out/ratios.txt"
fi
if [ -f "$out/serve.txt" ]; then
  awk -F'|' '$2 ~ /v1\/id`/ { gsub(/ /, "", $6); gsub(/ /, "", $8); printf "serve /v1/id requests/s vs /healthz = %s (target >= 0.80); server CPU per request vs /healthz = %s\n", $6, $8 }' "$out/serve.txt" | tee -a "$out/ratios.txt"
fi

echo
echo "raw outputs: $out"
if [ -n "$failed" ]; then
  echo "bench.sh: some benchmarks failed:" >&2
  echo "$failed" >&2
  exit 1
fi

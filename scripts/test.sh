#!/usr/bin/env bash
# Runs every test of the repository on a fresh machine: gofmt, go vet and
# staticcheck,
# go test -race in every Go module (nested modules included), the core
# module's tests once more with the newest Go (go1.27.3, without -race),
# and a short pass of every native fuzz target.
#
#   FUZZTIME=6s   how long each fuzz target runs (0 skips fuzzing)
#
# Servers that tests of nested modules need (PostgreSQL for sqltest/,
# segment/ and pglease/, PgBouncer for pglease/, Redis for redislease/,
# etcd for etcdlease/, chronyd for chronyhealth/ and the CLI) are
# started here, throwaway, on 127.0.0.1, and removed when the script exits;
# their Debian packages are installed when missing (as root). A variable
# such as RINGFLAKE_TEST_POSTGRES_DSN that is already set is used instead.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
# 30 fuzz targets: 6 s each keeps the pass near 5 minutes on two cores
# (FUZZTIME=1m for a longer one).
fuzztime=${FUZZTIME:-6s}

step() { printf '\n== %s\n' "$*"; }

command -v go >/dev/null || { echo "test.sh: go is not installed" >&2; exit 1; }

# --- Throwaway servers -------------------------------------------------------
# A start_NAME function starts one server for the tests, exports the
# variable they read, and registers with at_exit how to stop and remove it.
# The registered commands run when the script exits, however it exits,
# newest first (stop the server, then remove its directory).

exit_hooks=()
at_exit() { exit_hooks+=("$1"); }
run_exit_hooks() {
  local i
  for ((i = ${#exit_hooks[@]} - 1; i >= 0; i--)); do
    eval "${exit_hooks[i]}" || true
  done
}
trap run_exit_hooks EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# apt_install PACKAGE...: installs Debian packages; needs root.
apt_updated=
apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "test.sh: $* is not installed and only root can install it: apt-get install -y $*" >&2
    return 1
  fi
  step "apt-get install $*"
  if [ -z "$apt_updated" ]; then
    apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# as_user USER COMMAND...: runs COMMAND as USER when we are root (servers
# refuse to run as root), as ourselves otherwise.
as_user() {
  local user=$1
  shift
  if [ "$(id -u)" = 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

# free_port: prints a TCP port below the ephemeral range that nothing on
# 127.0.0.1 listens on. A server that loses the race for it fails to start;
# callers try again with another port.
free_port() {
  local port
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "test.sh: found no free port on 127.0.0.1" >&2
  return 1
}

# make_service_dir NAME OWNER: sets service_dir to a new empty directory,
# owned by OWNER when we are root, removed at exit. (It sets a variable
# rather than printing, so that its at_exit is not lost in a subshell.)
make_service_dir() {
  service_dir=$(mktemp -d "${TMPDIR:-/tmp}/ringflake-$1.XXXXXX")
  at_exit "rm -rf '$service_dir'"
  if [ "$(id -u)" = 0 ]; then chown "$2:" "$service_dir"; fi
}

# pg_bindir: prints the newest installed PostgreSQL's bin directory.
pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

# start_postgres: a PostgreSQL cluster of its own in a temp directory,
# listening on 127.0.0.1 only, trusting local connections, fsync off.
# Exports RINGFLAKE_TEST_POSTGRES_DSN, and RINGFLAKE_TEST_POSTGRES_BINDIR
# (the directory of initdb and pg_ctl) for the tests of segment/ that
# crash and restart a cluster of their own.
start_postgres() {
  local bin dir port
  if [ -z "${RINGFLAKE_TEST_POSTGRES_BINDIR:-}" ]; then
    bin=$(pg_bindir) || { apt_install postgresql && bin=$(pg_bindir); } || {
      echo "test.sh: no PostgreSQL under /usr/lib/postgresql after installing it" >&2
      return 1
    }
    export RINGFLAKE_TEST_POSTGRES_BINDIR=$bin
  fi
  bin=$RINGFLAKE_TEST_POSTGRES_BINDIR
  if [ -n "${RINGFLAKE_TEST_POSTGRES_DSN:-}" ]; then
    step "PostgreSQL: using RINGFLAKE_TEST_POSTGRES_DSN from the environment"
    return 0
  fi
  step "start PostgreSQL ($("$bin/postgres" --version))"
  make_service_dir postgres postgres
  dir=$service_dir
  if ! as_user postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    return 1
  fi
  at_exit "as_user postgres '$bin/pg_ctl' -D '$dir/data' -m immediate -s stop >/dev/null 2>&1"
  for _ in 1 2 3; do
    port=$(free_port)
    if as_user postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
      -o "-c listen_addresses=127.0.0.1 -p $port -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start; then
      export RINGFLAKE_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
      echo "listening on 127.0.0.1:$port, data in $dir"
      return 0
    fi
  done
  echo "test.sh: PostgreSQL did not start; its log:" >&2
  cat "$dir/server.log" >&2
  return 1
}

# apt_install_no_start PACKAGE...: apt_install for packages that ship a
# service (redis-server, etcd-server). There is no systemd here, so their
# postinst would run the init script and start the distro's own server;
# a policy-rc.d that says no (exit 101) stops that, and is removed again
# unless it was there before.
apt_install_no_start() {
  local policy=/usr/sbin/policy-rc.d added= rc=0
  if [ "$(id -u)" = 0 ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && added=1
  fi
  apt_install "$@" || rc=$?
  if [ -n "$added" ]; then rm -f "$policy"; fi
  return "$rc"
}

# start_bg LOG COMMAND...: starts COMMAND in the background with its output
# in LOG, registers its stop (SIGTERM, then wait) with at_exit, and sets
# bg_pid.
start_bg() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 &
  bg_pid=$!
  at_exit "kill $bg_pid 2>/dev/null; wait $bg_pid 2>/dev/null"
}

# wait_ready PID TRIES COMMAND...: polls COMMAND every 0.1 s until it
# succeeds (0), the process PID exits (1), or TRIES polls fail (1).
wait_ready() {
  local pid=$1 tries=$2
  shift 2
  for _ in $(seq "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.1
  done
  return 1
}

# start_redis: a redis-server of its own in a temp directory, listening on
# 127.0.0.1 only, without persistence. Exports RINGFLAKE_TEST_REDIS_ADDR,
# and RINGFLAKE_TEST_REDIS_SERVER (the binary) for the tests of
# redislease/ that stop and restart servers of their own.
start_redis() {
  if [ -z "${RINGFLAKE_TEST_REDIS_SERVER:-}" ]; then
    command -v redis-server >/dev/null || apt_install_no_start redis-server
    RINGFLAKE_TEST_REDIS_SERVER=$(command -v redis-server)
    export RINGFLAKE_TEST_REDIS_SERVER
  fi
  if [ -n "${RINGFLAKE_TEST_REDIS_ADDR:-}" ]; then
    step "Redis: using RINGFLAKE_TEST_REDIS_ADDR from the environment"
    return 0
  fi
  local dir port
  step "start Redis ($("$RINGFLAKE_TEST_REDIS_SERVER" --version | cut -d' ' -f1-3))"
  make_service_dir redis "$(id -un)"
  dir=$service_dir
  for _ in 1 2 3; do
    port=$(free_port)
    start_bg "$dir/redis.log" "$RINGFLAKE_TEST_REDIS_SERVER" --bind 127.0.0.1 --port "$port" \
      --dir "$dir" --save '' --appendonly no --daemonize no
    if wait_ready "$bg_pid" 300 redis-cli -h 127.0.0.1 -p "$port" ping; then
      export RINGFLAKE_TEST_REDIS_ADDR="127.0.0.1:$port"
      echo "listening on 127.0.0.1:$port, data in $dir"
      return 0
    fi
  done
  echo "test.sh: Redis did not start; its log:" >&2
  cat "$dir/redis.log" >&2
  return 1
}

# start_etcd: a single-member etcd of its own in a temp directory,
# listening on 127.0.0.1 only. Exports RINGFLAKE_TEST_ETCD_ENDPOINTS, and
# RINGFLAKE_TEST_ETCD_SERVER (the binary) for the tests of etcdlease/ that
# stop and restart servers of their own.
start_etcd() {
  if [ -z "${RINGFLAKE_TEST_ETCD_SERVER:-}" ] || [ -z "${RINGFLAKE_TEST_ETCD_ENDPOINTS:-}" ]; then
    if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
      apt_install_no_start etcd-server etcd-client
    fi
  fi
  if [ -z "${RINGFLAKE_TEST_ETCD_SERVER:-}" ]; then
    RINGFLAKE_TEST_ETCD_SERVER=$(command -v etcd)
    export RINGFLAKE_TEST_ETCD_SERVER
  fi
  if [ -n "${RINGFLAKE_TEST_ETCD_ENDPOINTS:-}" ]; then
    step "etcd: using RINGFLAKE_TEST_ETCD_ENDPOINTS from the environment"
    return 0
  fi
  local dir client peer
  step "start etcd ($("$RINGFLAKE_TEST_ETCD_SERVER" --version | head -n 1))"
  make_service_dir etcd "$(id -un)"
  dir=$service_dir
  for _ in 1 2 3; do
    client=$(free_port)
    peer=$(free_port)
    rm -rf "$dir/data"
    start_bg "$dir/etcd.log" "$RINGFLAKE_TEST_ETCD_SERVER" --name ringflake-test --data-dir "$dir/data" \
      --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
      --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
      --initial-cluster "ringflake-test=http://127.0.0.1:$peer" --logger zap --log-outputs stderr
    if wait_ready "$bg_pid" 300 env ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$client" endpoint health; then
      export RINGFLAKE_TEST_ETCD_ENDPOINTS="http://127.0.0.1:$client"
      echo "listening on 127.0.0.1:$client, data in $dir"
      return 0
    fi
  done
  echo "test.sh: etcd did not start; its log:" >&2
  cat "$dir/etcd.log" >&2
  return 1
}

# chrony_conf FILE CMDPORT LINE...: writes a chronyd configuration to FILE
# that keeps everything in FILE's directory and on loopback: its own
# pidfile, its command port on 127.0.0.1:CMDPORT (no Unix socket under
# /run), commands allowed from 127.0.0.1 only, then each LINE.
chrony_conf() {
  local file=$1 cmdport=$2
  shift 2
  {
    echo "pidfile ${file%.conf}.pid"
    echo "cmdport $cmdport"
    echo "bindcmdaddress 127.0.0.1"
    echo "bindcmdaddress /"
    echo "cmdallow 127.0.0.1"
    printf '%s\n' "$@"
  } >"$file"
}

# start_chronyd CONF CMDPORT: starts chronyd on CONF in the foreground with
# -x (it never adjusts the host's clock: the machine is shared) and waits
# until its command port answers. As root chronyd drops its privileges to
# its own user; as anyone else -U lets it start (it refuses otherwise,
# -x or not), and with -x it needs no privilege.
start_chronyd() {
  local conf=$1 cmdport=$2 nonroot=()
  if [ "$(id -u)" != 0 ]; then nonroot=(-U); fi
  start_bg "${conf%.conf}.log" "$RINGFLAKE_TEST_CHRONYD" -f "$conf" -x -d "${nonroot[@]}"
  wait_ready "$bg_pid" 300 chronyc -h 127.0.0.1 -p "$cmdport" -n tracking
}

# chrony_synced CMDPORT: succeeds when the chronyd at CMDPORT reports a
# normal leap status (it is synchronised).
chrony_synced() {
  chronyc -h 127.0.0.1 -p "$1" -n tracking | grep -q '^Leap status *: Normal$'
}

# start_chrony: three chronyd of their own, in a temp directory, on
# loopback only and always with -x (they never touch the host's clock): a
# server (local stratum 8), a client polling it 16 times a second, which
# becomes synchronised, and a client whose server does not answer, which
# stays unsynchronised. Exports the command addresses the tests ask
# (RINGFLAKE_TEST_CHRONY_SYNCED, RINGFLAKE_TEST_CHRONY_UNSYNCED,
# RINGFLAKE_TEST_CHRONY_SERVER), the server's NTP address
# (RINGFLAKE_TEST_CHRONY_SERVER_NTP), and RINGFLAKE_TEST_CHRONYD (the
# binary) for tests that start and stop chronyd pairs of their own.
start_chrony() {
  if [ -z "${RINGFLAKE_TEST_CHRONYD:-}" ]; then
    command -v chronyd >/dev/null || apt_install_no_start chrony
    RINGFLAKE_TEST_CHRONYD=$(command -v chronyd)
    export RINGFLAKE_TEST_CHRONYD
  fi
  if [ -n "${RINGFLAKE_TEST_CHRONY_SYNCED:-}" ] && [ -n "${RINGFLAKE_TEST_CHRONY_UNSYNCED:-}" ]; then
    step "chrony: using RINGFLAKE_TEST_CHRONY_SYNCED and _UNSYNCED from the environment"
    return 0
  fi
  local dir ntp scmd ccmd ucmd dead
  step "start chronyd -x: a server, a client of it and a client of nobody ($("$RINGFLAKE_TEST_CHRONYD" --version | cut -d' ' -f1-4))"
  make_service_dir chrony "$(id -un)"
  dir=$service_dir
  for _ in 1 2 3; do
    ntp=$(free_port) scmd=$(free_port) ccmd=$(free_port) ucmd=$(free_port) dead=$(free_port)
    chrony_conf "$dir/server.conf" "$scmd" "port $ntp" "bindaddress 127.0.0.1" "allow 127.0.0.1" "local stratum 8"
    chrony_conf "$dir/synced.conf" "$ccmd" "port 0" "server 127.0.0.1 port $ntp iburst minpoll -4 maxpoll -4"
    chrony_conf "$dir/unsynced.conf" "$ucmd" "port 0" "server 127.0.0.1 port $dead iburst minpoll -4 maxpoll -4"
    if start_chronyd "$dir/server.conf" "$scmd" && start_chronyd "$dir/synced.conf" "$ccmd" &&
      start_chronyd "$dir/unsynced.conf" "$ucmd" && wait_ready "$bg_pid" 300 chrony_synced "$ccmd"; then
      export RINGFLAKE_TEST_CHRONY_SERVER="127.0.0.1:$scmd"
      export RINGFLAKE_TEST_CHRONY_SERVER_NTP="127.0.0.1:$ntp"
      export RINGFLAKE_TEST_CHRONY_SYNCED="127.0.0.1:$ccmd"
      export RINGFLAKE_TEST_CHRONY_UNSYNCED="127.0.0.1:$ucmd"
      echo "server on 127.0.0.1:$ntp (commands $scmd), synchronised client commands on $ccmd, unsynchronised on $ucmd, in $dir"
      return 0
    fi
  done
  echo "test.sh: chronyd did not start or did not synchronise; its logs:" >&2
  tail -n 20 "$dir"/*.log >&2
  return 1
}

# start_pgbouncer: a PgBouncer of its own in a temp directory, in front of
# the PostgreSQL of RINGFLAKE_TEST_POSTGRES_DSN (start_postgres), listening
# on 127.0.0.1 only, in transaction pooling mode, trusting the DSN's user.
# It runs as the user postgres when we are root (PgBouncer refuses root).
# Exports RINGFLAKE_TEST_PGBOUNCER_DSN, and RINGFLAKE_TEST_PGBOUNCER (the
# binary) for the tests of pglease/ and cmd/ringflake that start and
# restart PgBouncers of their own.
start_pgbouncer() {
  if [ -z "${RINGFLAKE_TEST_PGBOUNCER:-}" ]; then
    PATH=$PATH:/usr/sbin command -v pgbouncer >/dev/null || apt_install_no_start pgbouncer
    RINGFLAKE_TEST_PGBOUNCER=$(PATH=$PATH:/usr/sbin command -v pgbouncer)
    export RINGFLAKE_TEST_PGBOUNCER
  fi
  if [ -n "${RINGFLAKE_TEST_PGBOUNCER_DSN:-}" ]; then
    step "PgBouncer: using RINGFLAKE_TEST_PGBOUNCER_DSN from the environment"
    return 0
  fi
  # postgres://USER@HOST:PORT/DB?QUERY, as start_postgres exports it.
  local re='^postgres(ql)?://([^@:/]+)@([^:/]+):([0-9]+)/([^?]*)(\?.*)?$'
  if ! [[ $RINGFLAKE_TEST_POSTGRES_DSN =~ $re ]]; then
    echo "test.sh: cannot put a PgBouncer in front of RINGFLAKE_TEST_POSTGRES_DSN (want postgres://USER@HOST:PORT/DB): set RINGFLAKE_TEST_PGBOUNCER_DSN too" >&2
    return 1
  fi
  local user=${BASH_REMATCH[2]} host=${BASH_REMATCH[3]} upstream=${BASH_REMATCH[4]} db=${BASH_REMATCH[5]} query=${BASH_REMATCH[6]}
  local dir port owner args=()
  owner=$(id -un)
  if [ "$(id -u)" = 0 ]; then owner=postgres args=(-u postgres); fi
  step "start PgBouncer ($("$RINGFLAKE_TEST_PGBOUNCER" --version | head -n 1))"
  make_service_dir pgbouncer "$owner"
  dir=$service_dir
  printf '"%s" ""\n' "$user" >"$dir/userlist.txt"
  for _ in 1 2 3; do
    port=$(free_port)
    cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=$host port=$upstream

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
logfile =
EOF
    start_bg "$dir/pgbouncer.log" "$RINGFLAKE_TEST_PGBOUNCER" "${args[@]}" "$dir/pgbouncer.ini"
    if wait_ready "$bg_pid" 300 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"; then
      export RINGFLAKE_TEST_PGBOUNCER_DSN="postgres://$user@127.0.0.1:$port/$db$query"
      echo "listening on 127.0.0.1:$port, in front of $host:$upstream, transaction pooling"
      return 0
    fi
  done
  echo "test.sh: PgBouncer did not start; its log:" >&2
  cat "$dir/pgbouncer.log" >&2
  return 1
}

# Each module is built and tested on its own, as its users build it: the
# workspace (go.work) is only there for `go run ./cmd/ringflake` at the
# root.
export GOWORK=off

# Every module of the repository, the root first.
mapfile -t modules < <(git ls-files --cached --others --exclude-standard -- '*go.mod' | xargs -n1 dirname | sort)

# staticcheck, at the version the project is checked with, built from the
# module proxy into a directory of its own.
staticcheck_version=v0.8.2
step "install staticcheck $staticcheck_version"
staticcheck_dir=$(mktemp -d "${TMPDIR:-/tmp}/ringflake-staticcheck.XXXXXX")
at_exit "rm -rf '$staticcheck_dir'"
GOBIN=$staticcheck_dir go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
staticcheck=$staticcheck_dir/staticcheck

step "gofmt"
unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard -- '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

# Servers the tests of nested modules need; those tests fail, never skip,
# without them.
start_postgres
start_pgbouncer
start_redis
start_etcd
start_chrony

for mod in "${modules[@]}"; do
  # -timeout 25m: a package may take more than go test's default ten
  # minutes on two busy cores (cmd/ringflake runs real processes).
  step "go vet, staticcheck and go test -race in $mod"
  (cd "$root/$mod" && go vet ./... && "$staticcheck" ./... && go test -race -count=1 -timeout 25m ./...)
done

# The opaque package's round trip of ten million IDs runs at a tenth of
# its size under the race detector (twenty times slower); here it runs
# whole, without it.
step "opaque: ten million IDs round trip, without -race"
(cd "$root" && go test -count=1 -run '^TestRoundTripTenMillionRandomIDs$' ./opaque)

# Every benchmark of the peer comparison runs once, briefly, so that none
# can rot; scripts/bench.sh is the one that measures.
step "benchmarks in bench, once each"
(cd "$root/bench" && go test -run '^$' -bench . -benchtime 1x ./...)

# The newest Go as well as the 1.24 floor: the core module's tests once
# more with Go 1.27 (without -race, to keep the step short: the pass
# above had it), and the bench file built only on Go 1.27 (the standard
# library's uuid.NewV7 beside the peers) with its step-back test. The
# toolchain comes through the module proxy.
newest_go=go1.27.3
step "the core module's tests, and bench's Go 1.27 file, with $newest_go"
(cd "$root" && GOTOOLCHAIN=$newest_go go test -count=1 -timeout 25m ./...)
(cd "$root/bench" && GOTOOLCHAIN=$newest_go go test -count=1 -run '^TestStdlib' -bench '/stdlib-' -benchtime 1x .)

# fuzz_target PACKAGE TARGET: fuzzes TARGET for $fuzztime. Go before 1.27
# can end a duration-limited run with "context deadline exceeded" and no
# failing input, a race in its fuzzing coordinator at the deadline
# (golang/go#75804); such a run is tried again, twice at most. A failure
# that writes an input to testdata/fuzz/TARGET, or any other failure,
# fails at once. Minimizing a new input is cut to 1 s (Go's default is a
# minute): minimizing the inputs that add coverage could otherwise take
# most of a short pass (a 10 s run of FuzzParse made 139 executions), and
# an input that fails is written either way.
fuzz_target() {
  local pkg=$1 target=$2 corpus before log attempt
  corpus="$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target"
  before=$(ls "$corpus" 2>/dev/null || true)
  log=$(mktemp)
  for attempt in 1 2 3; do
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s "$pkg" 2>&1 | tee "$log"; then
      rm -f "$log"
      return 0
    fi
    if [ "$(ls "$corpus" 2>/dev/null || true)" != "$before" ] ||
      ! tail -n 6 "$log" | grep -q '^    context deadline exceeded$'; then
      rm -f "$log"
      return 1
    fi
    echo "test.sh: $target ended with 'context deadline exceeded' and wrote no failing input: Go's fuzzing coordinator race (golang/go#75804); run $attempt of 3" >&2
  done
  rm -f "$log"
  return 1
}

if [ "$fuzztime" != "0" ]; then
  for mod in "${modules[@]}"; do
    cd "$root/$mod"
    for pkg in $(go list ./...); do
      for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
        step "fuzz $pkg $target for $fuzztime"
        fuzz_target "$pkg" "$target"
      done
    done
  done
  cd "$root"
fi

step "all tests passed"

#!/usr/bin/env bash
# A three-node RabbitMQ cluster on this machine, beside its own broker (rabbit@localhost on 5672
# and 25672), for the driver's cluster test (drivers/rabbitmq/test/queue-rabbitmq-cluster.test.ts):
#
#   .ci/rabbitmq-cluster.sh start DIR   # prints RABBITMQ_CLUSTER_URLS=... (also in DIR/urls)
#   .ci/rabbitmq-cluster.sh stop DIR    # kills each node by the PID in its pid file
#   .ci/rabbitmq-cluster.sh start-node DIR N   # starts node N again (after a test killed it)
#   .ci/rabbitmq-cluster.sh ctl DIR N ARGS...  # rabbitmqctl ARGS on node N (its cookie and env)
#
# Nodes opco1..3@localhost listen on 127.0.0.1 only: AMQP on BASE..BASE+2, distribution on
# BASE+20000.., with BASE = OPCO_CLUSTER_BASE_PORT (default 5681). Everything a node writes is
# under DIR (its own config, mnesia, logs, pid file, and HOME holding the cluster's one Erlang
# cookie); the machine's /etc/rabbitmq files are not read. The server script is run directly
# (/usr/lib/rabbitmq/bin), not the /usr/sbin wrapper, which would switch to the rabbitmq user.
set -euo pipefail

RABBITMQ_BIN=${RABBITMQ_BIN:-/usr/lib/rabbitmq/bin}
BASE=${OPCO_CLUSTER_BASE_PORT:-5681}
NODES=(1 2 3)

usage() { echo "usage: $0 start|stop DIR, $0 start-node DIR N, or $0 ctl DIR N ARGS..." >&2; exit 64; }
[ $# -ge 2 ] || usage
command=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

node_name() { echo "opco$1@localhost"; }
amqp_port() { echo $((BASE + $1 - 1)); }
dist_port() { echo $((BASE + 20000 + $1 - 1)); }

# The environment of node $1 (and of the CLI talking to it: same HOME, so same cookie).
node_env() {
  local n=$1 home="$dir/home"
  echo HOME="$home" \
    RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" \
    RABBITMQ_NODENAME="$(node_name "$n")" \
    RABBITMQ_NODE_PORT="$(amqp_port "$n")" \
    RABBITMQ_DIST_PORT="$(dist_port "$n")" \
    RABBITMQ_CONFIG_FILE="$dir/node$n/rabbitmq.conf" \
    RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
    RABBITMQ_MNESIA_BASE="$dir/node$n/mnesia" \
    RABBITMQ_LOG_BASE="$dir/node$n/log" \
    RABBITMQ_PID_FILE="$dir/node$n/pid"
}

ctl() {
  local n=$1
  shift
  env $(node_env "$n") "$RABBITMQ_BIN/rabbitmqctl" -n "$(node_name "$n")" "$@"
}

# A process, and not a zombie: a node killed a moment ago stays one until it is reaped.
alive() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ $state != Z* ]]
}

launch() {
  local n=$1 pid
  pid=$(cat "$dir/node$n/pid" 2>/dev/null || true)
  if [ -n "$pid" ]; then
    # A node just killed may take a moment to go.
    for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
      echo "node $(node_name "$n") already runs (pid $pid): stop it first" >&2
      exit 1
    fi
  fi
  mkdir -p "$dir/node$n/log"
  printf 'listeners.tcp.local = 127.0.0.1:%s\nloopback_users.guest = true\n' "$(amqp_port "$n")" >"$dir/node$n/rabbitmq.conf"
  env $(node_env "$n") "$RABBITMQ_BIN/rabbitmq-server" -detached >"$dir/node$n/log/detached.out" 2>&1
}

# await_startup fails at once while the node has not registered with epmd yet: ask again.
await_node() {
  local n=$1 deadline=$((SECONDS + 120))
  until ctl "$n" await_startup --timeout 120 >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "node $(node_name "$n") did not start: see $dir/node$n/log" >&2; exit 1; }
    sleep 0.5
  done
}

start() {
  local began=$SECONDS
  mkdir -p "$dir/home"
  if [ ! -f "$dir/home/.erlang.cookie" ]; then
    (umask 077 && head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' >"$dir/home/.erlang.cookie")
    chmod 400 "$dir/home/.erlang.cookie"
  fi
  # Distribution on the loopback only, as the machine's broker (its rabbitmq-env.conf).
  echo 'export ERL_FLAGS="-kernel inet_dist_use_interface {127,0,0,1}"' >"$dir/rabbitmq-env.conf"
  echo '[].' >"$dir/enabled_plugins"
  # A quorum queue dead-letters at least once (P17): an expired delayed message leaves its delay
  # queue once the target queue confirms it, and an unconfirmed batch is sent again only after
  # this timeout (RabbitMQ's default 180 s). A target whose leader is killed never confirms, so
  # delayed work would wait 3 minutes (or for the service's overdue sweep): docs/operations.md
  # recommends 5 s for replicated deployments, and the cluster runs with it.
  echo '[{rabbit, [{dead_letter_worker_publisher_confirm_timeout, 5000}]}].' >"$dir/advanced.config"
  for n in "${NODES[@]}"; do launch "$n"; done
  for n in "${NODES[@]}"; do await_node "$n"; done
  for n in 2 3; do
    ctl "$n" stop_app >/dev/null
    ctl "$n" join_cluster "$(node_name 1)" >/dev/null
    ctl "$n" start_app >/dev/null
  done
  ctl 1 cluster_status --formatter json | grep -q "\"$(node_name 3)\"" || { echo "the cluster did not form" >&2; exit 1; }
  local urls=""
  for n in "${NODES[@]}"; do urls+="${urls:+,}amqp://guest:guest@127.0.0.1:$(amqp_port "$n")"; done
  echo "$urls" >"$dir/urls"
  for n in "${NODES[@]}"; do echo "$(node_name "$n") pid $(cat "$dir/node$n/pid") amqp 127.0.0.1:$(amqp_port "$n")"; done
  echo "cluster started in $((SECONDS - began)) s"
  echo "RABBITMQ_CLUSTER_URLS=$urls"
}

stop() {
  local pids=()
  for n in "${NODES[@]}"; do
    local file="$dir/node$n/pid"
    [ -f "$file" ] || continue
    local pid
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      pids+=("$pid")
    fi
    rm -f "$file"
  done
  # SIGTERM stops a node cleanly; past 30 s it is killed.
  for _ in $(seq 1 60); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.5
  done
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && kill -9 "$pid"; done
  # Each node's epmd registration goes with it; the machine's epmd stays (its broker uses it).
  echo "stopped ${#pids[@]} node(s)"
}

case "$command" in
  start) start ;;
  start-node)
    [ $# -eq 3 ] && [[ " ${NODES[*]} " == *" $3 "* ]] || usage
    began=$SECONDS
    launch "$3"
    await_node "$3"
    echo "$(node_name "$3") pid $(cat "$dir/node$3/pid") started in $((SECONDS - began)) s"
    ;;
  ctl)
    [ $# -ge 4 ] && [[ " ${NODES[*]} " == *" $3 "* ]] || usage
    n=$3
    shift 3
    ctl "$n" "$@"
    ;;
  stop) stop ;;
  *) usage ;;
esac

#!/usr/bin/env bash
# A real Apache Kafka cluster in KRaft mode on 127.0.0.1, for development and tests.
#
# Every node is a combined broker+controller. One node by default; three for the fault suite
# (replication factor 3, min.insync.replicas 2). Data and logs live in one folder (the "state
# folder"), so a cluster is stopped and wiped by naming that folder.
#
#   cluster.sh start   [--nodes N] [--port BASE] [--dir DIR] [--property K=V ...]
#                      [--scram-user NAME=PASSWORD ...]         format, start, wait until ready;
#                                                               K=V lines go to every node's config;
#                                                               a SCRAM-SHA-512 user is created at
#                                                               format time
#   cluster.sh stop    [--dir DIR]                              stop every node, remove DIR
#   cluster.sh status  [--dir DIR]                              one line per node
#   cluster.sh bootstrap [--dir DIR]                            print the bootstrap servers
#   cluster.sh node (start|stop|kill|pause|resume) I [--dir DIR]   act on node I (fault tests)
#   cluster.sh topics [--dir DIR] -- ARGS...                    kafka-topics against the cluster
#   cluster.sh tool CLASS [--dir DIR] -- ARGS...                run any Kafka tool class
#   cluster.sh jars                                             resolve the broker jars (Maven)
#
# --kafka-version V (or EXACTLY_KAFKA_VERSION) runs another Kafka release than tests/kafka/pom.xml's,
# with its jars in target/libs-V; a started cluster remembers it. The security test uses 3.9.1:
# SCRAM between Debian 12's librdkafka 2.0.2 and a Kafka 4.x broker fails (librdkafka before 2.6.1
# repeats the client nonce in its final message, which Kafka 4 rejects; librdkafka issue 4895).
#
# Ports: node i listens on BASE+i-1 (clients) and BASE+100+i-1 (controller). BASE defaults to 39092
# (the demo). The tests use ports from 29200 to 29802: below Linux's ephemeral range (32768-60999),
# so a client socket never holds one when a broker (re)starts on it.
# DIR defaults to ${TMPDIR:-/tmp}/exactly-kafka-BASE.
#
# EXACTLY_BROKER_REQUEST_LOG=FILE: node i logs the broker's timing of every transaction request to
# FILE.nodeI (log4j2-requests.properties; summarised by bench/broker_requests.py). Outside DIR,
# which stop removes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
libs="$here/target/libs"

die() { echo "cluster.sh: $*" >&2; exit 1; }

nodes=${EXACTLY_KAFKA_NODES:-1}
base=${EXACTLY_KAFKA_PORT:-39092}
dir=${EXACTLY_KAFKA_DIR:-}
ready_timeout=${EXACTLY_KAFKA_READY_TIMEOUT:-90}

cmd=${1:-}; [ -n "$cmd" ] || die "usage: cluster.sh start|stop|status|bootstrap|node|topics|tool|jars"
shift
sub=""; node_index=""; tool_class=""
if [ "$cmd" = node ]; then
  sub=${1:-}; node_index=${2:-}; shift 2 || die "usage: cluster.sh node ACTION INDEX"
fi
if [ "$cmd" = tool ]; then
  tool_class=${1:-}; shift || die "usage: cluster.sh tool CLASS -- ARGS"
fi
passthrough=()
properties=()
scram=()
kafka_version=${EXACTLY_KAFKA_VERSION:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --property) properties+=("$2"); shift 2 ;;
    --scram-user)
      [[ "$2" == ?*=?* ]] || die "--scram-user takes NAME=PASSWORD"
      scram+=(--add-scram "SCRAM-SHA-512=[name=${2%%=*},password=${2#*=}]"); shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --port) base=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --kafka-version) kafka_version=$2; shift 2 ;;
    --) shift; passthrough=("$@"); break ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[ -n "$dir" ] || dir="${TMPDIR:-/tmp}/exactly-kafka-$base"
# The nodes run elsewhere: a relative --dir is taken from where the script was called.
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
# A running cluster's release is the one it was started with.
if [ "$cmd" != start ] && [ -f "$dir/kafka-version" ]; then kafka_version=$(cat "$dir/kafka-version"); fi
maven_version=()
if [ -n "$kafka_version" ]; then
  [[ "$kafka_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--kafka-version takes X.Y.Z, got '$kafka_version'"
  libs="$here/target/libs-$kafka_version"
  maven_version=("-Dkafka.version=$kafka_version" "-Dlibs.dir=$libs")
fi

jars() {
  if ! compgen -G "$libs/kafka_2.13-*.jar" >/dev/null; then
    command -v mvn >/dev/null || die "mvn not found: run scripts/setup.sh first"
    mvn -q -B -f "$here/pom.xml" ${maven_version[@]+"${maven_version[@]}"} dependency:copy-dependencies >&2 \
      || die "Maven could not resolve the Kafka broker jars (see tests/kafka/pom.xml)"
  fi
}

# BrokerApiVersionsCommand moved from kafka.admin (Scala, 3.x) to org.apache.kafka.tools (4.x).
api_versions_class() {
  if compgen -G "$libs/kafka_2.13-3.*.jar" >/dev/null; then
    echo kafka.admin.BrokerApiVersionsCommand
  else
    echo org.apache.kafka.tools.BrokerApiVersionsCommand
  fi
}

java_run() { # java_run CLASS ARGS... ; runs a Kafka class in the foreground
  local class=$1; shift
  java -Xmx256m -cp "$libs/*" -Dlog4j2.configurationFile="$here/log4j2-tools.properties" "$class" "$@"
}

bootstrap_of() { # reads the state folder's recorded bootstrap
  [ -f "$dir/bootstrap" ] || die "no cluster in $dir (start one first)"
  cat "$dir/bootstrap"
}

write_node_config() { # write_node_config I N
  local i=$1 n=$2 voters="" j rf isr
  for ((j = 1; j <= n; j++)); do
    voters+="${voters:+,}$j@127.0.0.1:$((base + 100 + j - 1))"
  done
  rf=$(( n < 3 ? n : 3 ))
  isr=$(( n >= 3 ? 2 : 1 ))
  mkdir -p "$dir/node$i/data"
  cat > "$dir/node$i/server.properties" <<EOF
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$((base + i - 1)),CONTROLLER://127.0.0.1:$((base + 100 + i - 1))
advertised.listeners=PLAINTEXT://127.0.0.1:$((base + i - 1))
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/node$i/data
num.partitions=1
auto.create.topics.enable=false
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=6
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
transaction.abort.timed.out.transaction.cleanup.interval.ms=2000
transaction.remove.expired.transaction.cleanup.interval.ms=60000
log.flush.interval.messages=9223372036854775807
num.network.threads=2
num.io.threads=4
log.segment.bytes=67108864
EOF
  local p
  for p in ${properties[@]+"${properties[@]}"}; do echo "$p" >> "$dir/node$i/server.properties"; done
}

node_pid() { local f="$dir/node$1/pid"; [ -f "$f" ] && cat "$f" || true; }
node_alive() { local p; p=$(node_pid "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

start_node() { # start_node I
  local i=$1 logging=("-Dlog4j2.configurationFile=$here/log4j2.properties")
  node_alive "$i" && return 0
  if [ -n "${EXACTLY_BROKER_REQUEST_LOG:-}" ]; then
    logging=("-Dlog4j2.configurationFile=$here/log4j2.properties,$here/log4j2-requests.properties"
             "-Dexactly.request.log=$EXACTLY_BROKER_REQUEST_LOG.node$i")
  fi
  ( cd "$dir/node$i" && exec setsid java ${EXACTLY_BROKER_HEAP:--Xms256m -Xmx768m} -XX:+UseG1GC -Xlog:gc:file="$dir/node$i/gc.log":uptime,utctime \
      "${logging[@]}" -Dkafka.logs.dir="$dir/node$i" \
      -cp "$libs/*" kafka.Kafka server.properties >"$dir/node$i/stdout.log" 2>&1 ) &
  echo $! > "$dir/node$i/pid"
}

stop_node() { # stop_node I SIGNAL; waits for the process to go
  local i=$1 sig=$2 p t
  p=$(node_pid "$i"); [ -n "$p" ] || return 0
  kill -CONT "$p" 2>/dev/null || true
  kill "-$sig" "$p" 2>/dev/null || true
  for ((t = 0; t < 600; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
  rm -f "$dir/node$i/pid"
}

node_count() { ls -d "$dir"/node* 2>/dev/null | wc -l; }

wait_ready() { # the cluster answers metadata requests with every node registered
  local deadline=$((SECONDS + ready_timeout)) n=$1 out
  while [ $SECONDS -lt $deadline ]; do
    for ((i = 1; i <= n; i++)); do
      if ! node_alive "$i"; then
        tail -n 20 "$dir/node$i/stdout.log" >&2 || true
        grep -m 5 -A 2 ERROR "$dir/node$i/server.log" >&2 || true
        die "node $i exited during start"
      fi
    done
    if out=$(java_run "$(api_versions_class)" \
               --bootstrap-server "$(cat "$dir/bootstrap")" 2>/dev/null); then
      [ "$(grep -c '^127.0.0.1:' <<<"$out")" -ge "$n" ] && return 0
    fi
    sleep 1
  done
  die "cluster in $dir not ready after ${ready_timeout}s (logs: $dir/node*/server.log)"
}

case "$cmd" in
  jars) jars ;;
  start)
    jars
    [[ "$nodes" =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive integer, got '$nodes'"
    if [ -f "$dir/bootstrap" ]; then
      alive=0
      for ((i = 1; i <= $(node_count); i++)); do node_alive "$i" && alive=1; done
      [ $alive = 1 ] && die "a cluster already runs in $dir (stop it first)"
      rm -rf "$dir"
    fi
    mkdir -p "$dir"
    [ -z "$kafka_version" ] || echo "$kafka_version" > "$dir/kafka-version"
    cluster_id=$(java_run kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
    boot=""
    for ((i = 1; i <= nodes; i++)); do
      write_node_config "$i" "$nodes"
      java_run kafka.tools.StorageTool format --cluster-id "$cluster_id" \
        --config "$dir/node$i/server.properties" --ignore-formatted ${scram[@]+"${scram[@]}"} \
        >"$dir/node$i/format.log" 2>&1 \
        || { cat "$dir/node$i/format.log" >&2; die "formatting node $i failed"; }
      boot+="${boot:+,}127.0.0.1:$((base + i - 1))"
    done
    echo "$boot" > "$dir/bootstrap"
    for ((i = 1; i <= nodes; i++)); do start_node "$i"; done
    wait_ready "$nodes"
    echo "$boot"
    ;;
  stop)
    if [ -d "$dir" ]; then
      for ((i = 1; i <= $(node_count); i++)); do stop_node "$i" TERM; done
      rm -rf "$dir"
    fi
    ;;
  status)
    [ -d "$dir" ] || die "no cluster in $dir"
    for ((i = 1; i <= $(node_count); i++)); do
      if node_alive "$i"; then echo "node $i up pid $(node_pid "$i")"; else echo "node $i down"; fi
    done
    ;;
  bootstrap) bootstrap_of ;;
  node)
    [ -d "$dir/node$node_index" ] || die "no node $node_index in $dir"
    case "$sub" in
      start) start_node "$node_index" ;;
      stop) stop_node "$node_index" TERM ;;
      kill) stop_node "$node_index" KILL ;;
      pause) kill -STOP "$(node_pid "$node_index")" ;;
      resume) kill -CONT "$(node_pid "$node_index")" ;;
      *) die "node action must be start|stop|kill|pause|resume, got '$sub'" ;;
    esac
    ;;
  topics) java_run org.apache.kafka.tools.TopicCommand --bootstrap-server "$(bootstrap_of)" "${passthrough[@]}" ;;
  tool) java_run "$tool_class" "${passthrough[@]}" ;;
  *) die "unknown command '$cmd'" ;;
esac

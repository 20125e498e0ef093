#!/usr/bin/env bash
# `exactly validate`: the example config is valid (exit 0); a config with problems exits 2 and
# names each with file:line; a built-in transform's bad [transform.config] exits 2 too.
#   check_validate.sh EXACTLY_BINARY SOURCE_DIR
set -uo pipefail
exactly=$1 source=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL $*"; failed=1; }

"$exactly" validate --config "$source/config/exactly.example.toml" >"$work/out" 2>&1 \
  || fail "the example config: $(cat "$work/out")"

cat >"$work/bad.toml" <<'TOML'
[kafka]
bootstrap_servers = "127.0.0.1:9092"
[pipeline]
input_topic = "in"
output_topic = "out"
group_id = "g"
partitoning = "key"
[transactions]
timeout_ms = 10
TOML
"$exactly" validate --config "$work/bad.toml" >"$work/out" 2>&1
rc=$?
[ $rc = 2 ] || fail "bad.toml: exit $rc, expected 2"
grep -q "bad.toml:7:" "$work/out" || fail "bad.toml: the unknown key on line 7 is not reported: $(cat "$work/out")"
grep -q "bad.toml:9:" "$work/out" || fail "bad.toml: timeout_ms on line 9 is not reported: $(cat "$work/out")"

cat >"$work/transform.toml" <<'TOML'
[kafka]
bootstrap_servers = "127.0.0.1:9092"
[pipeline]
input_topic = "in"
output_topic = "out"
group_id = "g"
[transform]
name = "json-filter"
[transform.config]
field = "a"
op = "bogus"
value = 1
TOML
"$exactly" validate --config "$work/transform.toml" >"$work/out" 2>&1
rc=$?
[ $rc = 2 ] || fail "transform.toml: exit $rc, expected 2"
grep -q "op" "$work/out" || fail "transform.toml: the bad op is not named: $(cat "$work/out")"

# ${VAR} is resolved from the environment, as `run` resolves it.
sed 's/"127.0.0.1:9092"/"${EXACTLY_TEST_BROKERS}"/' "$work/transform.toml" |
  sed 's/"bogus"/"eq"/' >"$work/env.toml"
EXACTLY_TEST_BROKERS=b:9092 "$exactly" validate --config "$work/env.toml" >"$work/out" 2>&1 \
  || fail "env.toml with EXACTLY_TEST_BROKERS set: $(cat "$work/out")"
env -u EXACTLY_TEST_BROKERS "$exactly" validate --config "$work/env.toml" >"$work/out" 2>&1
grep -q "EXACTLY_TEST_BROKERS" "$work/out" || fail "env.toml without the variable: not reported"

[ $failed = 0 ] && echo "exactly validate: ok"
exit $failed

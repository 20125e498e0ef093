#!/bin/sh
# `exactly plugins`: lists the built-ins and the plugins of a directory with their config keys,
# says why each unusable file is refused, and exits 2 when one is.
#   check_plugins_cli.sh EXACTLY PLUGIN_DIR WORK_DIR
set -eu
exactly=$1
plugins=$2
work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect FILE TEXT: TEXT is a line (or part of one) of FILE
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "no '$2' in the output"; }
}
rm -rf "$work"
mkdir -p "$work/one"

# Every test plugin: the good ones described, the broken ones refused with the reason.
code=0
"$exactly" plugins --plugin-dir "$plugins" >"$work/all.txt" 2>&1 || code=$?
[ "$code" = 2 ] || { cat "$work/all.txt" >&2; fail "exit code $code with unusable plugins, not 2"; }
expect "$work/all.txt" "identity builtin (built-in)"
expect "$work/all.txt" "payment-enricher builtin (built-in)"
expect "$work/all.txt" "    currency "
expect "$work/all.txt" "json-filter builtin (built-in)"
expect "$work/all.txt" "json-project builtin (built-in)"
expect "$work/all.txt" "good 1.2.3 ($plugins/libexactly_test_plugin_good.so)"
expect "$work/all.txt" "    suffix               text appended to every value"
expect "$work/all.txt" "libexactly_test_plugin_wrong_abi.so: not usable: plugin $plugins/libexactly_test_plugin_wrong_abi.so: ABI version 2, this exactly supports 1"
expect "$work/all.txt" "libexactly_test_plugin_no_entry.so: not usable:"
expect "$work/all.txt" "no entry point"
expect "$work/all.txt" "libexactly_test_plugin_small_struct.so: not usable:"

# Only usable plugins: exit 0.
cp "$plugins/libexactly_test_plugin_good.so" "$work/one/"
code=0
"$exactly" plugins --plugin-dir "$work/one" >"$work/one.txt" 2>&1 || code=$?
[ "$code" = 0 ] || { cat "$work/one.txt" >&2; fail "exit code $code with one good plugin, not 0"; }
expect "$work/one.txt" "good 1.2.3 ($work/one/libexactly_test_plugin_good.so)"

# A directory that is not there: exit 2, naming it.
code=0
"$exactly" plugins --plugin-dir "$work/nowhere" >"$work/none.txt" 2>&1 || code=$?
[ "$code" = 2 ] || { cat "$work/none.txt" >&2; fail "exit code $code for a missing directory, not 2"; }
expect "$work/none.txt" "$work/nowhere"
echo "exactly plugins: all checks passed"

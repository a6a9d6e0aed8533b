#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# check-provider.sh - host-side checks of the built sroce libibverbs
# provider.  Needs no RDMA device and no kernel module.
#
# Usage: tests/provider/check-provider.sh [path/to/libsroce-rdmav34.so]
#        (default: userspace-provider/libsroce-rdmav34.so; build it first
#        with `make -C userspace-provider`)
#
# Checks:
#  1. the provider exists;
#  2. objdump -p: it requires IBVERBS_PRIVATE_34 (the private provider ABI)
#     and IBVERBS_1.14 (the v36.0 floor, see sroce.c) from libibverbs.so.1,
#     and no other private ABI;
#  3. nm -D: it defines no dynamic symbol beyond the global: list of
#     sroce.map (which is empty), and every libibverbs symbol it uses is
#     bound to a symbol version;
#  4. dlopen-test.c: RTLD_NOW load against the real libibverbs, and the ops
#     table its constructor registers;
#  5. ring-test.c: the shared-ring index helpers (ring.h, ring.c) on a
#     memfd: wraparound at 2^32, full/empty, slot addressing, refusal of
#     ring descriptions that break the ABI;
#  6. datapath-test.c: post_send, post_recv, poll_cq, the ibv_cq_ex and
#     ibv_wr_* APIs on memfd rings, WQEs decoded as the ABI header defines
#     them, doorbells read back from a pipe;
#  7. the build refuses an rdma-core outside the supported window with a
#     message that says so: a version too new or too old, and a
#     libibverbs (a stand-in built here) whose private ABI is another,
#     each through the provider Makefile's check; SROCE_FORCE_RDMA_CORE=1
#     overrides with a warning.
#
# Exit status: 0 all passed, 1 something failed, 4 skipped (tool missing).
# Environment: CC (default cc) builds the test programs.

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
provdir=$top/userspace-provider
so=${1:-$provdir/libsroce-rdmav34.so}
map=$provdir/sroce.map
: "${CC:=cc}"

failures=0

pass() { echo "PASS: $*"; }
oneline() { printf '%s\n' "$1" | tr '\n' ' ' | sed 's/ $//'; }
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

for tool in objdump nm "$CC"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not installed"
		exit 4
	fi
done

# 1. The provider exists.
if [ ! -f "$so" ]; then
	fail "$so does not exist (make -C userspace-provider)"
	exit 1
fi
so=$(cd "$(dirname "$so")" && pwd)/${so##*/}
pass "$so exists"

# 2. Symbol versions required from libibverbs.so.1.
required=$(objdump -p "$so" | awk '
	/^  required from / { lib = $3; next }
	/^    0x/ && lib == "libibverbs.so.1:" { print $NF }')
for v in IBVERBS_PRIVATE_34 IBVERBS_1.14; do
	if printf '%s\n' "$required" | grep -qx "$v"; then
		pass "requires $v from libibverbs.so.1"
	else
		fail "does not require $v from libibverbs.so.1" \
			"(required: $(oneline "$required"))"
	fi
done
others=$(printf '%s\n' "$required" | grep '^IBVERBS_PRIVATE_' |
	grep -vx IBVERBS_PRIVATE_34)
if [ -z "$others" ]; then
	pass "requires no other private ABI"
else
	fail "also requires $(oneline "$others")"
fi

# 3. Exported symbols: only what sroce.map lists under global: (nothing).
allowed=$(sed 's,/\*.*\*/,,g' "$map" | awk '
	/global:/ { g = 1; sub(/.*global:/, "") }
	/local:/ { g = 0 }
	g { gsub(/;/, " "); for (i = 1; i <= NF; i++) print $i }')
stray=
for sym in $(nm -D --defined-only "$so" | awk '{ print $NF }' |
	sed 's/@.*//'); do
	printf '%s\n' "$allowed" | grep -qx "$sym" || stray="$stray $sym"
done
if [ -z "$stray" ]; then
	pass "exports no symbols beyond sroce.map's global list" \
		"(${allowed:-empty})"
else
	fail "exports symbols not allowed by sroce.map:$stray"
fi

unversioned=$(nm -D --undefined-only "$so" | awk '{ print $NF }' |
	grep -E '^(_?_?verbs_|ibv_|execute_ioctl|__ioctl_)' | grep -v @)
if [ -z "$unversioned" ]; then
	pass "every libibverbs symbol used is version-bound"
else
	fail "unversioned libibverbs references: $(oneline "$unversioned")"
fi

# 4. Load it for real.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if "$CC" -std=gnu11 -Wall -Wextra -Werror -O2 -g \
	-I"$provdir" -I"$top/uapi" -o "$tmp/dlopen-test" \
	"$here/dlopen-test.c" \
	-Wl,--export-dynamic-symbol=verbs_register_driver_34 \
	-Wl,--no-as-needed -libverbs -ldl; then
	pass "built dlopen-test"
	"$tmp/dlopen-test" "$so" >"$tmp/dlopen-test.log" 2>&1
	status=$?
	sed 's/^/    /' "$tmp/dlopen-test.log"
	if [ "$status" -eq 0 ]; then
		pass "dlopen-test"
	else
		fail "dlopen-test (exit status $status)"
	fi
else
	fail "could not build dlopen-test"
fi

# 5. The ring helpers, compiled from the provider's sources.
if "$CC" -std=gnu11 -Wall -Wextra -Werror -O2 -g \
	-I"$provdir" -I"$top/uapi" -o "$tmp/ring-test" \
	"$here/ring-test.c" "$provdir/ring.c"; then
	pass "built ring-test"
	"$tmp/ring-test" >"$tmp/ring-test.log" 2>&1
	status=$?
	sed 's/^/    /' "$tmp/ring-test.log"
	if [ "$status" -eq 0 ]; then
		pass "ring-test"
	else
		fail "ring-test (exit status $status)"
	fi
else
	fail "could not build ring-test"
fi

# 6. The data path, compiled from the provider's sources (the test includes
#    cq.c itself); -libverbs resolves the ibv_cmd_* it never calls.
major=$(CC="$CC" "$top/scripts/rdma-core-version.sh" 2>/dev/null | cut -d. -f1)
if "$CC" -std=gnu11 -Wall -Wextra -Werror -O2 -g \
	-I"$provdir" -I"$top/uapi" ${major:+-DSROCE_RDMA_CORE_MAJOR=$major} \
	-o "$tmp/datapath-test" "$here/datapath-test.c" \
	"$provdir/sq.c" "$provdir/rq.c" "$provdir/wr.c" "$provdir/ring.c" \
	"$provdir/domain.c" -libverbs; then
	pass "built datapath-test"
	# A provider path that takes a lock of a thread domain's queue spins
	# for ever (the test holds those locks): the timeout fails it.
	timeout 60 "$tmp/datapath-test" >"$tmp/datapath-test.log" 2>&1
	status=$?
	sed 's/^/    /' "$tmp/datapath-test.log"
	if [ "$status" -eq 0 ]; then
		pass "datapath-test"
	else
		fail "datapath-test (exit status $status)"
	fi
else
	fail "could not build datapath-test"
fi

# 7. The supported window, as "make" checks it before compiling.
#    refuses WANT [VAR=VALUE...]: the check fails, saying WANT.
refuses() {
	want=$1
	shift
	if out=$(env "$@" make -s --no-print-directory -C "$provdir" rdma-core-check 2>&1); then
		fail "built with $* (said: $(oneline "$out"))"
	elif printf '%s\n' "$out" | grep -qF -- "$want"; then
		pass "refuses $*: $(oneline "$out")"
	else
		fail "refused $* without saying '$want' (said: $(oneline "$out"))"
	fi
}
refuses "rdma-core 57.0 (from RDMA_CORE_VERSION) is too new" RDMA_CORE_VERSION=57.0
refuses "rdma-core 35.0 (from RDMA_CORE_VERSION) is too old" RDMA_CORE_VERSION=35.0
if out=$(RDMA_CORE_VERSION=57.0 SROCE_FORCE_RDMA_CORE=1 \
	make -s --no-print-directory -C "$provdir" rdma-core-check 2>&1) &&
	printf '%s\n' "$out" | grep -q 'warning: .*too new.*unsupported'; then
	pass "SROCE_FORCE_RDMA_CORE=1 builds outside the window, with a warning"
else
	fail "SROCE_FORCE_RDMA_CORE=1 (said: $(oneline "$out"))"
fi
#    A libibverbs of version 56.0 by its name whose private ABI is 57: the
#    compiler the check asks for the library names the stand-in.
mkdir -p "$tmp/fake"
printf 'IBVERBS_PRIVATE_57 { global: sroce_fake; local: *; };\n' >"$tmp/fake/map"
printf 'int sroce_fake(void);\nint sroce_fake(void) { return 0; }\n' >"$tmp/fake/fake.c"
printf '#!/bin/sh\ncase "$1" in -print-file-name=libibverbs.so) echo %s ;; *) exec %s "$@" ;; esac\n' \
	"$tmp/fake/libibverbs.so" "$CC" >"$tmp/fake/cc"
chmod +x "$tmp/fake/cc"
if "$CC" -shared -fPIC -Wl,--version-script="$tmp/fake/map" \
	-o "$tmp/fake/libibverbs.so.1.14.56.0" "$tmp/fake/fake.c"; then
	ln -sf libibverbs.so.1.14.56.0 "$tmp/fake/libibverbs.so"
	refuses "exports private ABI '57' instead of IBVERBS_PRIVATE_34" \
		CC="$tmp/fake/cc" PKG_CONFIG=false
else
	fail "could not build the stand-in libibverbs"
fi

if [ "$failures" -ne 0 ]; then
	echo "check-provider: $failures check(s) FAILED"
	exit 1
fi
echo "check-provider: all checks passed"

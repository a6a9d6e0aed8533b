#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core-version.sh - which rdma-core will the sroce provider be built
# against, and may it be?
#
#   rdma-core-version.sh          print the rdma-core version, e.g. "44.0"
#   rdma-core-version.sh --pabi   print the private provider ABI of the
#                                 libibverbs.so.1 being linked, e.g. "34"
#   rdma-core-version.sh --check  check both against the supported window;
#                                 one line on stdout if fine, otherwise one
#                                 error on stderr and exit status 1
#
# Supported: rdma-core 36.0 ... 56.x, i.e. private ABI IBVERBS_PRIVATE_34
# with its final 76-slot ops table (provider-abi.md section 6).  v34/v35
# share the ABI name but lay the ops table out differently; v57 and later
# use another private ABI (IBVERBS_PRIVATE_57, 59, 64 ...), so the
# declarations in userspace-provider/verbs-private.h would be wrong.
#
# Detection: `pkg-config --modversion libibverbs` is "1.<n>.<rdma-core
# version>" (1.14.44.0 on Debian 12); without pkg-config, the same string
# is taken from the name of the library file that the linker will use.  The
# private ABI is read from that file's version definitions (objdump -T) or,
# failing that, from the provider file names in its libibverbs/ directory.
#
# Environment (for experts):
#   RDMA_CORE_VERSION=<x.y>   skip version detection and assume this
#                             version (cross builds; testing this check)
#   SROCE_FORCE_RDMA_CORE=1   build even outside the supported window; the
#                             result is unsupported and may crash or
#                             misbehave at run time
#   CC, PKG_CONFIG, OBJDUMP   tools to use (default cc, pkg-config, objdump)

set -u

MIN_MAJOR=36
MAX_MAJOR=56
PABI=34
SUPPORTED="rdma-core $MIN_MAJOR.0 ... $MAX_MAJOR.x"

me=${0##*/}
: "${CC:=cc}" "${PKG_CONFIG:=pkg-config}" "${OBJDUMP:=objdump}"

die() {
	echo "$me: error: $*" >&2
	exit 1
}

# The libibverbs.so the linker will pick for -libverbs, symlinks resolved.
libibverbs_file() {
	lib=$($CC -print-file-name=libibverbs.so 2>/dev/null) || return 1
	case $lib in
	/*) ;;
	*) return 1 ;;
	esac
	readlink -f "$lib"
}

# "1.14.44.0" -> "44.0"
strip_lib_version() {
	echo "$1" | sed -n 's/^1\.[0-9][0-9]*\.\([0-9][0-9.]*\)$/\1/p'
}

detect_version() {
	v=$($PKG_CONFIG --modversion libibverbs 2>/dev/null) &&
		v=$(strip_lib_version "$v") && [ -n "$v" ] &&
		{ echo "$v"; return 0; }

	lib=$(libibverbs_file) || return 1
	strip_lib_version "${lib##*/libibverbs.so.}"
}

version() {
	if [ -n "${RDMA_CORE_VERSION:-}" ]; then
		echo "$RDMA_CORE_VERSION"
		return
	fi
	v=$(detect_version)
	[ -n "$v" ] || die "cannot find libibverbs (install libibverbs-dev," \
		"or set RDMA_CORE_VERSION)"
	echo "$v"
}

# Private ABI number(s) of the libibverbs being linked, one per line.
pabi() {
	lib=$(libibverbs_file) ||
		die "$CC cannot find libibverbs.so (install libibverbs-dev)"

	if command -v "$OBJDUMP" >/dev/null 2>&1; then
		$OBJDUMP -T "$lib" |
			sed -n 's/.*IBVERBS_PRIVATE_\([0-9][0-9]*\).*/\1/p' |
			sort -u
		return
	fi
	for f in "${lib%/*}"/libibverbs/lib*-rdmav*.so; do
		[ -e "$f" ] || continue
		f=${f##*-rdmav}
		echo "${f%.so}"
	done | sort -u
}

check() {
	v=$(version) || exit 1
	major=${v%%.*}
	found="rdma-core $v"
	[ -n "${RDMA_CORE_VERSION:-}" ] &&
		found="$found (from RDMA_CORE_VERSION)"

	case $major in
	'' | *[!0-9]*) die "'$v' is not an rdma-core version like 44.0" ;;
	esac

	problem=
	if [ "$major" -lt "$MIN_MAJOR" ]; then
		problem="$found is too old: the sroce provider supports"
		problem="$problem $SUPPORTED only (releases before $MIN_MAJOR.0"
		problem="$problem lay out the provider ops table differently)"
	elif [ "$major" -gt "$MAX_MAJOR" ]; then
		problem="$found is too new: the sroce provider supports"
		problem="$problem $SUPPORTED only (later releases replaced the"
		problem="$problem private provider ABI IBVERBS_PRIVATE_$PABI)"
	else
		p=$(pabi | tr '\n' ' ')
		if [ "$p" != "$PABI " ]; then
			problem="$found: its libibverbs exports private"
			problem="$problem ABI '${p% }' instead of"
			problem="$problem IBVERBS_PRIVATE_$PABI,"
			problem="$problem which the sroce provider needs"
			problem="$problem ($SUPPORTED)"
		fi
	fi

	if [ -z "$problem" ]; then
		echo "$found with IBVERBS_PRIVATE_$PABI: supported ($SUPPORTED)"
	elif [ "${SROCE_FORCE_RDMA_CORE:-0}" = 1 ]; then
		echo "$me: warning: $problem; building anyway because" \
			"SROCE_FORCE_RDMA_CORE=1 (unsupported)" >&2
	else
		die "$problem.  Experts: SROCE_FORCE_RDMA_CORE=1 overrides."
	fi
}

case ${1:-} in
'') version ;;
--pabi) pabi ;;
--check) check ;;
*)
	echo "usage: $me [--pabi | --check]" >&2
	exit 2
	;;
esac

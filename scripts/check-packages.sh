#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "make packages" and "make check-packages": the Debian packages, and the
# test that a user's installation of them works.
#
#   check-packages.sh -b   only build the packages (build/packages/*.deb)
#   check-packages.sh      build them; install them into a clean Debian 12
#                          root (build/packages/root: a copy of a cached
#                          base with the default kernel's and KVER2's
#                          headers and images, build/packages/base); check
#                          that DKMS built sroce.ko for both kernels; boot
#                          each kernel in a guest from that root and run
#                          tests/packages/guest-check.sh there ("rdma link
#                          add", ibv_devinfo through the installed provider,
#                          a pingpong)
#
# KVER2: the second kernel (default 6.12.95+deb12-amd64).
# SROCE_GUEST_WRAPPER: a command each guest runs under (e.g. a lock that
# keeps guests of several users from running at once).  The results go
# to build/packages/results/results.tsv; the last line printed is
# "N passed, N failed".  Needs root, debootstrap and Debian's archive.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/packages
base=$out/base
work=$out/root
results=$out/results
kver1=$("$root/scripts/kver.sh")
kver2=${KVER2:-6.12.95+deb12-amd64}
mirror=http://deb.debian.org/debian

"$root/scripts/deps.sh" --packaging

# --- the packages ------------------------------------------------------------
build_packages() {
	local version src
	version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
	src=$out/src/sroce-${version%%-*}
	rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
	mkdir -p "$src"
	# What a clean checkout has, with the changes not yet committed.
	(cd "$root" && { git ls-files; git ls-files --others --exclude-standard; } |
		grep -v '^build/' | sort -u | tar cf - -T -) | tar xf - -C "$src"
	echo "packages: building in ${src#"$root"/}"
	(cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
		{ tail -n 30 "$out/build.log"; echo "packages: the build failed ($out/build.log)" >&2; exit 1; }
	mv "$out"/src/*.deb "$out/"
	rm -f "$out"/*-dbgsym_*.deb
	ls "$out"/*.deb
}

mkdir -p "$out"
build_packages
[ "${1:-}" != -b ] || exit 0

# --- the clean root ------------------------------------------------------------
# in_root DIR CMD...: CMD in DIR, with /proc, in a mount namespace of its own.
in_root() {
	local dir=$1
	shift
	unshare --mount --propagation private /bin/sh -c \
		'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$dir" \
		/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive HOME=/root "$@"
}

# The base: Debian 12 with both kernels' headers (installed) and images
# (unpacked: a kernel package's hooks have nothing to do in a chroot), and
# the tools a user checks an RDMA device with.  Made once.
make_base() {
	local k f
	[ -f "$base/.sroce-$kver1-$kver2" ] && return 0
	rm -rf "$base" "$base.tmp"
	echo "packages: debootstrap bookworm into ${base#"$root"/}"
	debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" >"$out/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$out/debootstrap.log"; exit 1; }
	printf '%s\n' 'Types: deb' "URIs: $mirror" \
		'Suites: bookworm bookworm-updates bookworm-backports' 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
		'Types: deb' "URIs: ${mirror%/debian}/debian-security" \
		'Suites: bookworm-security' 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
		>"$base.tmp/etc/apt/sources.list.d/debian.sources"
	rm -f "$base.tmp/etc/apt/sources.list"
	printf '#!/bin/sh\nexit 101\n' >"$base.tmp/usr/sbin/policy-rc.d"
	chmod 755 "$base.tmp/usr/sbin/policy-rc.d"
	in_root "$base.tmp" apt-get update -q
	in_root "$base.tmp" apt-get install -y -q --no-install-recommends \
		"linux-headers-$kver1" "linux-headers-$kver2" \
		iproute2 ibverbs-utils kmod procps mount
	for k in "$kver1" "$kver2"; do
		mkdir -m 777 "$base.tmp/tmp/kimg"
		in_root "$base.tmp" sh -c "cd /tmp/kimg && apt-get download -q linux-image-$k"
		for f in "$base.tmp"/tmp/kimg/*.deb; do
			# Into a merged-/usr root: keep /lib the symlink it is.
			dpkg-deb --fsys-tarfile "$f" | tar -x --keep-directory-symlink -C "$base.tmp"
		done
		rm -rf "$base.tmp/tmp/kimg"
		in_root "$base.tmp" depmod -a "$k"
	done
	in_root "$base.tmp" apt-get clean
	touch "$base.tmp/.sroce-$kver1-$kver2"
	mv "$base.tmp" "$base"
}

make_base
echo "packages: a clean root from the base"
rm -rf "$work"
cp -a "$base" "$work"
rm -rf "$results"
mkdir -p "$results"
: >"$results/results.tsv"

result() { # status test message
	printf '%s\tpackages\t%s\t0\t%s\n' "$1" "$2" "$3" >>"$results/results.tsv"
	echo "$1 packages/$2${3:+: $3}"
}

# --- install; DKMS builds for both kernels -------------------------------------
mkdir -p "$work/tmp/debs"
cp "$out"/*.deb "$work/tmp/debs/"
# openssl: recommended by sroce-dkms, so that DKMS makes its key and signs
# (Secure Boot); named here because the install leaves recommends out.
if in_root "$work" sh -c 'apt-get install -y -q --no-install-recommends openssl /tmp/debs/*.deb' \
	>"$results/install.log" 2>&1; then
	result PASS install "apt-get install $(cd "$out" && ls *.deb | tr '\n' ' ')"
else
	tail -n 30 "$results/install.log"
	result FAIL install "apt-get install failed ($results/install.log)"
fi
for k in "$kver1" "$kver2"; do
	st=$(in_root "$work" dkms status -m sroce -k "$k" 2>/dev/null | grep '^sroce/' || true)
	if grep -q ': installed' <<<"$st" &&
		ls "$work/lib/modules/$k/updates/dkms/"sroce.ko* >/dev/null 2>&1; then
		result PASS "dkms-$k" "$st"
	else
		result FAIL "dkms-$k" "DKMS did not install sroce for $k: $st"
	fi
	# Signed with DKMS's own key (the MOK a Secure Boot user enrolls).
	signer=$(in_root "$work" modinfo -k "$k" -F signer sroce 2>/dev/null || true)
	if [ "$signer" = "DKMS module signing key" ] && [ -f "$work/var/lib/dkms/mok.pub" ]; then
		result PASS "signed-$k" "signer: $signer (/var/lib/dkms/mok.pub)"
	else
		result FAIL "signed-$k" "sroce.ko for $k not signed by DKMS's key (signer: '$signer')"
	fi
done
for f in "usr/lib/x86_64-linux-gnu/libibverbs/libsroce-rdmav34.so" \
	etc/libibverbs.d/sroce.driver lib/systemd/system/sroce-link@.service \
	usr/share/man/man7/sroce.7.gz; do
	if [ -e "$work/$f" ]; then
		result PASS "file-${f##*/}" "/$f"
	else
		result FAIL "file-${f##*/}" "/$f not installed"
	fi
done

# --- boot each kernel from the root ---------------------------------------------
# The guest mounts the source tree (the harness) where the host has it.
mkdir -p "$work$root"
for k in "$kver1" "$kver2"; do
	x=$results/guest-$k
	mkdir -p "$x"
	cat >"$x/job.sh" <<EOF
export SROCE_RESULTS=/run/xfer
exec bash $root/tests/packages/guest-check.sh
EOF
	echo "packages: booting $k from ${work#"$root"/}"
	rc=0
	SROCE_GUEST_ROOT=$work SROCE_KVER=$k SROCE_VMLINUZ=$work/boot/vmlinuz-$k \
		${SROCE_GUEST_WRAPPER:-} "$root/scripts/vm/run-guest.sh" -x "$x" -t "${SROCE_PKG_GUEST_TIMEOUT:-900}" \
		>"$x/run-guest.log" 2>&1 || rc=$?
	if [ -s "$x/results.tsv" ]; then
		cat "$x/results.tsv" >>"$results/results.tsv"
		awk -F'\t' '{ printf "%s %s/%s: %s\n", $1, $2, $3, $5 }' "$x/results.tsv"
	fi
	n=$(awk -F'\t' '$1 == "PASS"' "$x/results.tsv" 2>/dev/null | wc -l)
	[ "$n" = 6 ] ||
		result FAIL "guest-$k" "$n of 6 checks passed in the guest (status $rc; $x/packages.log, $x/console.log)"
done

passed=$(awk -F'\t' '$1 == "PASS"' "$results/results.tsv" | wc -l)
failed=$(awk -F'\t' '$1 == "FAIL"' "$results/results.tsv" | wc -l)
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

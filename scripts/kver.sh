#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Print the kernel release sroce is built for and tested on by default:
# the one Debian's default kernel metapackage (linux-image-amd64) installs
# -- 6.1 on Debian 12 -- when its image (the guest boots it) and its
# headers (sroce.ko must match its ABI exactly) are both there.  Pinned
# that way, not "the newest installed", because a newer kernel from
# backports (6.12: make check KVER=..., CI's core tier) sits beside it
# and must not become the default.  Without that metapackage: the newest
# installed kernel that has both.
ok() { [ -f "/boot/vmlinuz-$1" ] && [ -e "/lib/modules/$1/build/Makefile" ]; }

v=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
if [ -n "$v" ] && ok "$v"; then
	echo "$v"
	exit 0
fi
for v in $(ls -1 /lib/modules 2>/dev/null | sort -rV); do
	if ok "$v"; then
		echo "$v"
		exit 0
	fi
done
echo "kver: no kernel with both image and headers installed (make deps)" >&2
exit 1

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Print the kernel release sroce is built for and tested on: the newest
# installed Debian kernel that has both its image (the guest boots it) and
# its headers (sroce.ko must match its ABI exactly).
for v in $(ls -1 /lib/modules 2>/dev/null | sort -rV); do
	if [ -f "/boot/vmlinuz-$v" ] && [ -e "/lib/modules/$v/build/Makefile" ]; then
		echo "$v"
		exit 0
	fi
done
echo "kver: no kernel with both image and headers installed (make deps)" >&2
exit 1

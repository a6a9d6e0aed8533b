# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# sroce: a software RoCEv2 RDMA device.  The two commands that do
# everything on a fresh Debian 12 machine (as root):
#
#   make run     install what is needed, build, boot a guest, show sroce working
#   make check   install what is needed, build, run every test (T=group to pick)
#
# Other targets:
#   make                 build the module, the provider and the test programs
#   make check-style     sparse (C=2), W=1, checkpatch --strict, kernel-doc,
#                        provider warnings; part of "make check"
#   make check-pair      the two-guest groups (twohost) alone; part of
#                        "make check"
#   make check-debug     every guest group on a KASAN + lockdep + kmemleak
#                        kernel built from linux-source-6.1 (cached in
#                        build/debug-kernel; the first build takes long)
#   make bench           sroce against rdma_rxe in one guest: table, JSON,
#                        Documentation/performance-results.rst and plot
#   make install         install the module (extra/), depmod, the provider
#   make deps            install build and test dependencies (apt-get)
#   make clean
#
# Variables: KVER (kernel release; default: newest installed kernel with
# image and headers), KDIR (its build tree), T (test groups for make check).

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
T ?=

KBUILD := $(MAKE) -C $(KDIR) M=$(CURDIR) W=1

all: module provider progs

module:
	@test -n "$(KVER)" || { scripts/kver.sh; exit 1; }
	$(KBUILD) modules

provider:
	$(MAKE) -C userspace-provider

progs:
	$(MAKE) -C tests/progs

deps:
	scripts/deps.sh

check: deps
	$(MAKE) all
	scripts/run-tests.sh $(T)

check-pair: deps
	$(MAKE) all
	scripts/run-tests.sh $(or $(T),twohost)

check-style: deps
	$(MAKE) all
	scripts/run-tests.sh style

check-debug: deps
	scripts/check-debug.sh $(T)

bench: deps
	scripts/bench.sh

run: deps
	$(MAKE) all
	scripts/demo.sh

install: all
	install -D -m 0644 drivers/sroce/sroce.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/sroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C userspace-provider install

clean:
	$(KBUILD) clean
	$(MAKE) -C userspace-provider clean
	$(MAKE) -C tests/progs clean
	rm -rf build

.PHONY: all module provider progs deps check check-pair check-style check-debug bench run install clean

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# sroce: a software RoCEv2 RDMA device.  The two commands that do
# everything on a fresh Debian 12 machine (as root):
#
#   make run     install what is needed, build, boot a guest, show sroce working
#   make check   install what is needed, build, run every test (T=group to pick)
#                on Debian's default kernel (6.1), then the core tier on 6.12
#
# Other targets:
#   make                 build the module, the provider and the test programs
#   make check-style     sparse (C=2), W=1, checkpatch --strict, kernel-doc,
#                        provider warnings; part of "make check"
#   make check-pair      the two-guest groups (twohost) alone; part of
#                        "make check"
#   make check KVER=6.12.95+deb12-amd64
#                        every test on that kernel instead (installed from
#                        bookworm-backports if missing)
#   make check-core      the core tier (CORE_TESTS of CORE_T) alone, or the
#                        groups T whole, on KVER, built in build/kernels/KVER;
#                        part of "make check" for every kernel in CORE_KVERS
#   make check-deep      the deeper tier of the 6.1 suite: teardown with 100
#                        iterations of every kind (make check: 20), T=groups
#                        for others with the same settings
#   make check-debug     every guest group on a KASAN + lockdep + kmemleak
#                        kernel built from linux-source-6.1 (cached in
#                        build/debug-kernel; the first build takes long)
#   make bench           sroce against rdma_rxe in one guest: table, JSON,
#                        Documentation/performance-results.rst and plot
#   make cc-plot         build/cc-fair_two.svg: two flows' throughput through
#                        the cc group's bottleneck with congestion control
#                        on and off, from the last run of cc/fair_two (run
#                        first if build/test-results lacks its timelines)
#   make install         install the module for KVER (extra/), depmod, the
#                        provider, the link unit template, sroce(7)
#   make uninstall       remove what make install installed
#   make check-7x        in a Debian 13 root (build/trixie-root): sroce.ko
#                        for the newest 7.x and for 6.12 with W=1 and
#                        sparse, the provider against rdma-core 56; then
#                        the core tier on 7.x (this machine's userland)
#   make check-trixie    the same builds, then the core tier in a guest
#                        whose root is the Debian 13 root (6.12, rdma-core
#                        56, its perftest and pyverbs)
#   make packages        the Debian packages (sroce-dkms, libsroce1) in
#                        build/packages
#   make check-packages  build them, install them into a clean Debian 12
#                        root with 6.1's and 6.12's headers, let DKMS build
#                        for both, and boot each kernel from that root
#   make deps            install build and test dependencies (apt-get)
#   make clean
#
# Variables: KVER (kernel release; default: Debian's default kernel,
# scripts/kver.sh), KDIR (its build tree), T (test groups for make check),
# CORE_KVERS (further kernels make check runs the core tier on; empty: none),
# CORE_T (the core tier's groups).

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
# The build tree: /lib/modules/KVER/build, or Debian's headers directory
# when that link is missing.
KDIR ?= $(or $(patsubst %/Makefile,%,$(firstword $(wildcard \
	/lib/modules/$(KVER)/build/Makefile /usr/src/linux-headers-$(KVER)/Makefile))),\
	/lib/modules/$(KVER)/build)
T ?=
CORE_KVERS ?= 6.12.95+deb12-amd64
# The core tier: a few tests of each layer that changes between kernels --
# loading and the link (rdma_link_ops, the module alias), the verbs
# from user space (uverbs, the provider's rings: RC and UD pingpongs) and
# from the kernel (ib_core's ops), the connection manager (rdma_cm over
# the UDP tunnel) -- chosen to cost CI about 5 minutes: each test in
# CORE_TESTS, of the groups in CORE_T (Documentation/testing.rst has the
# times).  CORE_TESTS= runs the groups whole.
CORE_T ?= link rc ud cm kverbs
CORE_TESTS ?= load_unload autoload kernel_verbs rc_pingpong pingpong cm loopback flush_wire pyverbs_flush

# The guest boots the kernel sroce is built for; the core tier's settings.
export SROCE_KVER = $(KVER)
export SROCE_CORE_GROUPS = $(CORE_T)
export SROCE_CORE_TESTS = $(CORE_TESTS)
# Kernels deps.sh installs besides the default: KVER when named on the
# command line, and for a full make check the core tier's.
DEPS_KVERS = $(if $(filter command line environment,$(origin KVER)),$(KVER))

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
	scripts/deps.sh $(DEPS_KVERS)

check: DEPS_KVERS += $(if $(T),,$(CORE_KVERS))
check: deps
	$(MAKE) all
	SROCE_CORE_KVERS="$(CORE_KVERS)" scripts/check.sh $(T)

check-core: deps
	$(MAKE) provider progs
	$(if $(T),,SROCE_TESTS="$(CORE_TESTS)") scripts/check-kernel.sh $(KVER) $(or $(T),$(CORE_T))

check-pair: deps
	$(MAKE) all
	scripts/run-tests.sh $(or $(T),twohost)

# Debian 13 and 7.x (scripts/check-trixie.sh, a root under build/).
check-7x:
	$(MAKE) provider progs
	scripts/check-trixie.sh build
	$(if $(T),,SROCE_TESTS="$(CORE_TESTS)") scripts/check-trixie.sh k7 $(or $(T),$(CORE_T))

check-trixie:
	$(MAKE) provider progs
	scripts/check-trixie.sh build
	$(if $(T),,SROCE_TESTS="$(CORE_TESTS)") scripts/check-trixie.sh root $(or $(T),$(CORE_T))

packages:
	scripts/check-packages.sh -b

check-packages:
	scripts/check-packages.sh

check-style: deps
	$(MAKE) all
	scripts/run-tests.sh style

check-deep: deps
	$(MAKE) all
	SROCE_TEARDOWN_ITERS=100 scripts/check.sh $(or $(T),teardown)

check-debug: deps
	scripts/check-debug.sh $(T)

bench: deps
	scripts/bench.sh

run: deps
	$(MAKE) all
	scripts/demo.sh

# The timelines cc/fair_two leaves (tests/groups/cc.sh), drawn by
# scripts/cc-plot.py; the test runs first if they are missing.
CC_PLOT_CSV := build/test-results/cc-fair_two-on.csv build/test-results/cc-fair_two-off.csv

cc-plot:
	@if ! ls $(CC_PLOT_CSV) >/dev/null 2>&1; then \
		$(MAKE) deps all && SROCE_TESTS=fair_two scripts/run-tests.sh cc || \
			echo "cc-plot: cc/fair_two failed; drawing what it left"; \
	fi
	scripts/cc-plot.py --label "CC on" --label "CC off" \
		--title "Two RC flows through a 20 Mb/s RED/ECN bottleneck (sroce_cc_flows, cc/fair_two)" \
		$(CC_PLOT_CSV) -o build/cc-fair_two.svg
	@echo "build/cc-fair_two.svg"

# make install: for one kernel (KVER), without packages; make uninstall
# removes exactly that.  The Debian packages (debian/, make packages) are
# the way for every installed kernel.
UNITDIR ?= /etc/systemd/system
MANDIR ?= /usr/local/share/man

install: module provider
	install -D -m 0644 drivers/sroce/sroce.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/sroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C userspace-provider install
	install -D -m 0644 systemd/sroce-link@.service \
		$(DESTDIR)$(UNITDIR)/sroce-link@.service
	install -D -m 0644 Documentation/sroce.7 $(DESTDIR)$(MANDIR)/man7/sroce.7
	$(if $(DESTDIR),,-systemctl daemon-reload 2>/dev/null)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/sroce.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C userspace-provider uninstall
	rm -f $(DESTDIR)$(UNITDIR)/sroce-link@.service $(DESTDIR)$(MANDIR)/man7/sroce.7
	$(if $(DESTDIR),,-systemctl daemon-reload 2>/dev/null)

clean:
	$(KBUILD) clean
	$(MAKE) -C userspace-provider clean
	$(MAKE) -C tests/progs clean
	rm -rf build

.PHONY: all module provider progs deps check check-core check-pair check-deep install uninstall packages check-packages check-7x check-trixie check-style check-debug bench cc-plot run install clean

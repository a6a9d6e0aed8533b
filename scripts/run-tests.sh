#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run test groups and report.  Host groups run here; guest groups run in a
# throw-away QEMU guest booting Debian's kernel (scripts/vm/run-guest.sh).
#
# usage: run-tests.sh [GROUP...]        (default: every group;
#                                        SROCE_WHERE=guest: only guest groups,
#                                        SROCE_PAIR_GROUPS=0: no two-guest groups)
#        SROCE_TESTS="name ..." run-tests.sh GROUP   only those tests
#
# Each tests/groups/<name>.sh declares where it runs, its place in the
# default order and its cost in seconds in a header line:
#     # sroce-test: where=guest order=20 cost=90
# where=host: here; where=guest: in a guest (the groups of a lane share
# one); where=pair: in two guests joined by a virtual wire
# (scripts/vm/run-pair.sh), a pair per group; a test passes only if it
# passes in both.  A guest group may ask for an emulated NVDIMM of N MiB
# (nvdimm=N): the guest that runs it has one (run-guest.sh -n).  Guest
# and pair groups run in SROCE_LANES lanes at once (default 2; see "in
# lanes" below).
#
# Results: build/test-results/results.tsv (one line per test), per-group
# logs, the guest console, and build/test-results.json.  The last line of
# output is "N passed, N failed"; the exit status is non-zero if any test
# failed or the run itself broke.
#
# Every test a group declares (its "test_NAME()" lines, those SROCE_TESTS
# selects; tests/declared.sh) must have a result: one that has none when
# its group is over fails ("no result recorded"), and so does a group
# script that exits non-zero (<group>/group-script).  A name in
# SROCE_TESTS that is no test of the groups run, or a group named on the
# command line of which SROCE_TESTS selects nothing, fails the run before
# anything runs.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# SROCE_RESULTS_DIR: elsewhere than build/test-results (a second kernel's
# run: scripts/check-kernel.sh); the JSON file is named after it.
results=${SROCE_RESULTS_DIR:-$root/build/test-results}
json=$results.json
guest_timeout=${SROCE_GUEST_TIMEOUT:-5400}
# SROCE_DEADLINE (seconds since the epoch; .ci/run sets it shortly before
# CI's own limit): no guest runs past it, and a test it cuts short or a
# group it keeps from starting is a FAIL that says so, so that a run out
# of time still ends with its summary line.
deadline=${SROCE_DEADLINE:-0}

group_meta() { # group key -> value
	sed -n "s/^# sroce-test:.*\\b$2=\\([^ ]*\\).*/\\1/p" "$root/tests/groups/$1.sh" | head -n1
}

# Every group in its order; the two-guest ones (where=pair) run after the
# guest groups, and not at all with SROCE_PAIR_GROUPS=0; the groups named
# in SROCE_GROUPS_LAST after all others (make check-debug: see there).
all_groups() {
	local f g o
	for f in "$root"/tests/groups/*.sh; do
		g=$(basename "$f" .sh)
		[ "$(group_meta "$g" where)" != pair ] || [ "${SROCE_PAIR_GROUPS:-1}" = 1 ] || continue
		[ -z "${SROCE_WHERE:-}" ] || [ "$(group_meta "$g" where)" = "$SROCE_WHERE" ] || continue
		o=$(group_meta "$g" order)
		[[ " ${SROCE_GROUPS_LAST:-} " != *" $g "* ]] || o=$((o + 1000))
		printf '%s %s\n' "$o" "$g"
	done | sort -n | awk '{ print $2 }'
}

groups=("$@")
named=${#groups[@]}
[ ${#groups[@]} -gt 0 ] || mapfile -t groups < <(all_groups)
for g in "${groups[@]}"; do
	if [ ! -f "$root/tests/groups/$g.sh" ]; then
		echo "run-tests: no such group '$g' (have: $(all_groups | tr '\n' ' '))" >&2
		exit 2
	fi
	case $(group_meta "$g" where) in
	host|guest|pair) ;;
	*) echo "run-tests: $g.sh has no 'where=host|guest|pair' header" >&2; exit 2 ;;
	esac
done

# The run's clock, minutes:seconds since it began.
clock() { printf '%d:%02d' $((SECONDS / 60)) $((SECONDS % 60)); }

# show_results: results.tsv lines from stdin, as printed, with the clock.
show_results() {
	awk -F'\t' -v clock="$(clock)" '{ printf "%-4s %s/%s (%ss)%s [%s]\n", $1, $2, $3, $4, ($5 != "" ? ": " $5 : ""), clock }'
}

rm -rf "$results" "$json"
mkdir -p "$results"
: >"$results/results.tsv"
broken=0

# record, account: into $out/results.tsv; $out is $results but inside a
# lane (below).
out=$results
record() { # status group test message
	printf '%s\t%s\t%s\t0\t%s\n' "$1" "$2" "$3" "$4" >>"$out/results.tsv"
	printf '%-4s %s/%s%s\n' "$1" "$2" "$3" "${4:+: $4}"
}

# declared [-a] GROUP: the tests GROUP declares (tests/declared.sh; without
# -a those SROCE_TESTS selects), one name a line.
declared() { "$root/tests/declared.sh" "$@" | cut -f2; }

# account GROUP WHY: a FAIL for every test of GROUP, as declared, that has
# no result in results.tsv: "no result recorded (WHY)".
account() {
	local t
	for t in $(declared "$1" | awk -F'\t' -v g="$1" \
		'FILENAME != "-" { if ($2 == g) have[$3] = 1; next } !($1 in have)' "$out/results.tsv" -); do
		record FAIL "$1" "$t" "no result recorded ($2)"
	done
}

# What runs: groups that declare tests and of which SROCE_TESTS selects
# some.  A name in SROCE_TESTS that no group run has, a group named on the
# command line of which it selects nothing, and a group that declares no
# test at all are failures; the first two stop the run before it starts
# (a typo must not pass as a shorter run).
host_groups=() guest_groups=() pair_groups=()
selection_bad=0
if [ -n "${SROCE_TESTS:-}" ]; then
	for t in $("$root/tests/declared.sh" -u "${groups[@]}"); do
		record FAIL selection "$t" "SROCE_TESTS names '$t', which is no test of: ${groups[*]}"
		selection_bad=1
	done
fi
for g in "${groups[@]}"; do
	if [ -z "$(declared -a "$g")" ]; then
		record FAIL "$g" declared "tests/groups/$g.sh declares no test (no line begins 'test_NAME()')"
		continue
	fi
	if [ -z "$(declared "$g")" ]; then
		[ "$named" = 0 ] && continue
		record FAIL "$g" selection "SROCE_TESTS ($SROCE_TESTS) selects no test of this group"
		selection_bad=1
		continue
	fi
	case $(group_meta "$g" where) in
	host) host_groups+=("$g") ;;
	guest) guest_groups+=("$g") ;;
	pair) pair_groups+=("$g") ;;
	esac
done
if [ "$selection_bad" = 1 ]; then
	echo "run-tests: nothing runs: fix SROCE_TESTS or the groups named"
	host_groups=() guest_groups=() pair_groups=()
fi

for g in "${host_groups[@]}"; do
	echo "--- group $g (host)"
	rc=0
	SROCE_RESULTS=$results bash "$root/tests/groups/$g.sh" || rc=$?
	if [ "$rc" != 0 ]; then
		record FAIL "$g" group-script "the group script exited with status $rc"
	fi
	account "$g" "the group script ended without running it"
done

# --- guest and two-guest groups, in lanes --------------------------------
#
# The guest groups and the two-guest ones run in SROCE_LANES lanes at once
# (default 2).  Under emulation a guest is idle about half of its time
# (protocol timeouts, fixed-length flows, the network's own delays), so
# two of them finish sooner than one after the other: make check took 62
# minutes in two lanes, 95 in one (2026-11-29), though a CPU-bound test
# runs up to twice as long beside another lane.  Each group's
# header gives its cost in seconds ("cost=", measured on a 2-core
# machine); the groups, longest first, go to the lane with the least cost
# so far.  A lane runs its two-guest groups first, each in a pair of
# guests, then its guest groups, in their order, in one guest.
#
# A lane works in its own directory, $results/lane-N, the share of its
# guests: "out" is that directory inside a lane, and record(), account()
# and the functions below write there.  When every lane is done, their
# results are joined into $results/results.tsv and what their groups left
# is moved up into $results; the files each guest writes under the same
# name (job.*, console*.log, run-guest.log, dmesg-boot.log) stay.

# Print results a guest appends to $out/results.tsv, as they come, each
# with the run's clock (a run that CI stops at its time limit still shows
# where the time went), and every 5 minutes without a result the test
# still running; ends with this script (a killed run must not leave it
# printing into a later run's log).
follow() {
	local seen n quiet=0 g cur
	seen=$(wc -l <"$out/results.tsv")
	while kill -0 $$ 2>/dev/null; do
		n=$(wc -l <"$out/results.tsv")
		if [ "$n" -gt "$seen" ]; then
			sed -n "$((seen + 1)),${n}p" "$out/results.tsv" |
				show_results
			seen=$n quiet=0
		elif [ $((quiet += 2)) -ge 300 ]; then
			g=$(cat "$out/current-group" 2>/dev/null)
			cur=$(grep '^=== ' "$out/$g.log" 2>/dev/null | tail -n1 | sed 's/^=== //')
			echo "...  still running: ${cur:-${g:-guest starting}} [$(clock)]"
			quiet=0
		fi
		sleep 2
	done
}

# The caller's other SROCE_* variables (e.g. SROCE_RC_DEV_KIND,
# SROCE_TEST_TIMEOUT) reach the tests in the guest too.
forward_env() {
	local v
	for v in $(compgen -e | grep '^SROCE_'); do
		case $v in
		SROCE_ROOT|SROCE_RESULTS|SROCE_RESULTS_DIR|SROCE_TESTS) ;;
		*) printf 'export %s=%q\n' "$v" "${!v}" ;;
		esac
	done
}

# guest_time: the guest's timeout, cut to what is left before the deadline.
guest_time() {
	local left
	left=$((deadline - $(date +%s)))
	if [ "$deadline" -gt 0 ] && [ "$left" -lt "$guest_timeout" ]; then
		echo $((left > 0 ? left : 0))
	else
		echo "$guest_timeout"
	fi
}

# not_run GROUP...: the deadline came before these groups could start.
not_run() {
	local g
	for g in "$@"; do
		record FAIL "$g" not-run "not started: the run's deadline (SROCE_DEADLINE) has passed"
	done
	broken=1
}

# timed_out SECONDS: why a guest given SECONDS was stopped.
timed_out() {
	if [ "$1" -lt "$guest_timeout" ]; then
		echo "stopped at the run's deadline (SROCE_DEADLINE), ${1}s after the guest started"
	else
		echo "guest timed out after ${1}s"
	fi
}

# The lines that begin the kernel's report of why it stopped: a panic, an
# oops, a BUG (a soft lockup's too), a WARNING, an RCU stall, the host's
# NMI (scripts/vm/run-guest.sh), or the tests' watchdog (tests/lib.sh).
console_splat='Kernel panic|BUG:|WARNING:|Oops|detected stalls|NMI received for unknown reason|sroce-test: wedged'

# console_death FILE: the kernel's first word on why the guest died in the
# console log FILE (the first oops, BUG, WARNING or panic line, and where
# it was: the first RIP line), empty if it said nothing.  A guest the
# tests' watchdog powered off (_t_watchdog in tests/lib.sh) says which
# test wedged it and the first task it found stuck, with its stack.
console_death() {
	local first rip
	first=$(grep -m1 -E "$console_splat" "$1" 2>/dev/null)
	if [[ $first == *'sroce-test: wedged'* ]]; then
		first=${first#*sroce-test: }
		echo "${first%%; the blocked tasks follow*}; $(stuck_task "$1")"
		return 0
	fi
	rip=$(grep -m1 -E 'RIP: [0-9]+:' "$1" 2>/dev/null | sed 's/^\[[^]]*\] *//')
	echo "${first}${rip:+; $rip}"
}

# stuck_task FILE: the first task in state D that sysrq w listed after
# the watchdog's line in console log FILE, and the innermost frames of its
# stack below the scheduler's ("task:rdma state:D: __mutex_lock <
# sroce_net_bind [sroce] < ...").
stuck_task() {
	awk '/sroce-test: wedged/ { w = 1; next }
		{ sub(/^\[[^]]*\] */, "") }
		w && !t && /^task:.* state:D/ { t = $1 " " $2; next }
		t && /^(<\/TASK>|task:)/ { exit }
		t && /^[a-z_][a-z0-9_.]*\+0x/ && !/^(__schedule|schedule)/ && n < 6 {
			f = $1; sub(/\+0x.*/, "", f)
			if ($2 ~ /^\[/) f = f " " $2
			s = s (n++ ? " < " : ": ") f
		}
		END { if (t) print t s }' "$1" 2>/dev/null
}

# console_report GROUP TEST MESSAGE: what the console of the guest that
# died in GROUP's TEST said, 50 lines at most, less registers and the
# unwinder's guesses.  For a guest the tests'
# watchdog stopped (in the reset before GROUP's first test if TEST is
# "guest"), its report: the tasks stuck in the kernel and their stacks;
# for one the kernel stopped, the report that console_death's words in
# MESSAGE begin (the stalled CPUs' or the panicking CPU's stacks).
console_report() {
	local f w=
	case $3 in
	*wedged*)
		w="sroce-test: wedged: $1/$2 (with"
		[ "$2" != guest ] || w="sroce-test: wedged: $1/reset (with" ;;
	*'guest died'*) ;;
	*) return 0 ;;
	esac
	for f in "$results"/lane-*/console-all.log "$results"/lane-*/pair-"$1"/*/console.log; do
		[ -e "$f" ] || continue
		awk -v w="$w" -v m="${3//$'\r'/}" -v splat="$console_splat" '
			{ sub(/\r$/, "") }
			!on && (w != "" ? index($0, w) : $0 ~ splat && index(m, $0)) { on = 1 }
			{ sub(/^\[[^]]*\] */, "") }
			# Registers, code bytes and unreliable frames ("? ")
			# hide the stacks.
			/^(Code|RSP|RAX|RDX|RBP|R10|R13|FS|CS|CR2|PKRU|DR[0-7]|Hardware name):|^\? / { next }
			on && n++ < 50 { print "    ! " $0 }
			# The end of a panic report: the last words of that guest.
			on && /^Kernel Offset:/ { exit }
			END { exit !on }' "$f" && return 0
	done
	return 0
}

# guest_nvdimm GROUP...: the largest NVDIMM, in MiB, the groups ask for
# (0: none).
guest_nvdimm() {
	local g n mib=0
	for g in "$@"; do
		n=$(group_meta "$g" nvdimm)
		[ -z "$n" ] || [ "$n" -le "$mib" ] || mib=$n
	done
	echo "$mib"
}

# run_guest_groups GROUP...: the groups, in order, in one guest sharing
# $out; if the guest dies in one, the groups after it in a fresh guest.
# A guest that dies before its job starts (no $out/booted) dies in the
# kernel's own boot, before sroce or any test has run: under emulation
# Debian's 6.12 once took an int3 oops 1.5 s into its boot (2026-11-29 on
# CI; not in 30 boots here; the kernel patches its own code with int3,
# which QEMU 7.2's multi-threaded TCG is suspected of racing).  Such a
# guest is booted once more, and the run says so; a second death before
# the job is a failure like any other.  The retry calls this function
# again with boots=1 in its environment; the calls that carry on after a
# death inherit it, so a lane boots a guest again once at most.
run_guest_groups() {
	local todo=("$@") done_now=() left=() g cur last t where
	local boots=${boots:-0}
	t=$(guest_time)
	[ "$t" -ge 60 ] || { not_run "${todo[@]}"; return 0; }
	cat >"$out/job.sh" <<EOF
export SROCE_ROOT=$root SROCE_RESULTS=/run/xfer SROCE_TESTS="${SROCE_TESTS:-}"
$(forward_env)
exec bash $root/tests/guest-main.sh ${todo[*]}
EOF
	echo "--- $lane_name, guest: ${todo[*]} [$(clock)]"
	follow &
	local follower=$!
	# A virtio NIC, unplugged from any network (user networking,
	# restricted): a netdev with a parent device, which tests that need
	# one bring up (topo_nic, tests/lib.sh).
	"$root/scripts/vm/run-guest.sh" -x "$out" -t "$t" -n "$(guest_nvdimm "${todo[@]}")" \
		-q "-netdev user,id=nic0,restrict=on -device virtio-net-pci,netdev=nic0,mac=52:54:00:5e:00:01" \
		>>"$out/run-guest.log" 2>&1
	local rc=$?
	sleep 2.5
	kill "$follower" 2>/dev/null
	wait "$follower" 2>/dev/null
	cat "$out/console.log" >>"$out/console-all.log" 2>/dev/null
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ ! -e "$out/booted" ] && [ "$boots" = 0 ]; then
		echo "--- $lane_name: the guest died in its boot, before the job started ($(console_death "$out/console.log")); booting again [$(clock)]"
		boots=1 run_guest_groups "${todo[@]}"
		return 0
	fi
	for g in "${todo[@]}"; do
		if [ -e "$out/done-$g" ]; then
			done_now+=("$g")
		else
			left+=("$g")
		fi
	done
	if [ ${#left[@]} -eq 0 ]; then
		# tests/guest-main.sh exits 0 when it ran to its end.
		[ "$rc" = 0 ] ||
			record FAIL guest job "the guest's job exited with status $rc after every group had finished ($out/job.log)"
		return 0
	fi

	# The guest stopped inside group ${left[0]}: blame the test it was in.
	g=${left[0]}
	cur=$(grep '^=== ' "$out/$g.log" 2>/dev/null | tail -n1 | sed 's|^=== [^/]*/||')
	last=$(console_death "$out/console.log")
	[ ! -s "$out/hung" ] || last="$(cat "$out/hung"); $last"
	where=
	# A test with its result already recorded had ended: the guest was
	# between tests (resetting, or checking the kernel log).
	if [ -n "$cur" ] && awk -F'\t' -v g="$g" -v t="$cur" '$2 == g && $3 == t { f = 1 } END { exit !f }' \
		"$out/results.tsv"; then
		where=" (after test $cur)" cur=
	fi
	case $rc in
	124) record FAIL "$g" "${cur:-guest}" "$(timed_out "$t")$where" ;;
	*) record FAIL "$g" "${cur:-guest}" "guest died$where (${last:-see $out/console-all.log})" ;;
	esac
	broken=1
	# Carry on with the groups after it in a fresh guest.
	if [ ${#left[@]} -gt 1 ]; then
		run_guest_groups "${left[@]:1}"
	fi
}

# pair_death DIR: why the guest of a pair that ran in DIR died, as
# run_guest_groups says it ("guest died (...)" for console_report).
pair_death() {
	local last
	last=$(console_death "$1/console.log")
	[ ! -s "$1/hung" ] || last="$(cat "$1/hung"); $last"
	echo "guest died (${last:-see $1/console.log})"
}

# run_pair_group GROUP: two guests run GROUP, each its own end.
run_pair_group() {
	local g=$1 dir=$out/pair-$1 rc=0 r t
	t=$(guest_time)
	[ "$t" -ge 60 ] || { not_run "$g"; return 0; }
	mkdir -p "$dir"
	cat >"$dir/job.sh" <<EOF
export SROCE_ROOT=$root SROCE_RESULTS=/run/xfer SROCE_TESTS="${SROCE_TESTS:-}"
$(forward_env)
exec bash $root/tests/guest-main.sh $g
EOF
	echo "--- $lane_name, two guests: $g [$(clock)]"
	"$root/scripts/vm/run-pair.sh" -x "$dir" -t "$t" >"$dir/run-pair.log" 2>&1 || rc=$?
	python3 "$root/scripts/vm/merge-pair-results.py" "$dir/a/results.tsv" "$dir/b/results.tsv" "$g" |
		tee -a "$out/results.tsv" |
		show_results
	for r in a b; do
		cp "$dir/$r/$g.log" "$out/$g-$r.log" 2>/dev/null
		cat "$dir/$r/console.log" >>"$out/console-all.log" 2>/dev/null
		if [ ! -e "$dir/$r/done-$g" ]; then
			if [ "$rc" = 124 ]; then
				record FAIL "$g" "guest-$r" "guest $r: $(timed_out "$t")"
			else
				record FAIL "$g" "guest-$r" "guest $r stopped before the end of the group (status $rc; $(pair_death "$dir/$r"))"
			fi
			broken=1
		fi
	done
	if [ -e "$dir/a/done-$g" ] && [ -e "$dir/b/done-$g" ] && [ "$rc" != 0 ]; then
		record FAIL "$g" pair-job "the guests' jobs exited with status $rc after the group had finished ($dir/{a,b}/job.log)"
	fi
	account "$g" "neither guest recorded it"
}

# run_lane N GROUP...: lane N, in $results/lane-N: its two-guest groups,
# then its guest groups in one guest.  Run in a subshell of its own: a lane
# that broke (a guest died, or the deadline cut it short) says so by
# leaving lane-N/broken.
run_lane() {
	local out=$results/lane-$1 lane_name="lane $1" g guests=()
	shift
	mkdir -p "$out"
	: >"$out/results.tsv"
	for g in "$@"; do
		if [ "$(group_meta "$g" where)" = pair ]; then
			run_pair_group "$g"
		else
			guests+=("$g")
		fi
	done
	if [ ${#guests[@]} -gt 0 ]; then
		run_guest_groups "${guests[@]}"
		for g in "${guests[@]}"; do
			if [ -e "$out/done-$g" ]; then
				account "$g" "the group finished without it"
			else
				account "$g" "the guest stopped in this group"
			fi
		done
	fi
	[ "$broken" = 0 ] || touch "$out/broken"
}

# plan_lanes N GROUP...: "LANE GROUP" lines, the groups (in the order
# given) spread over N lanes: the most costly first, each to the lane with
# the least cost so far.  A group without a cost counts 60 s.
plan_lanes() {
	local n=$1 g
	shift
	for g in "$@"; do
		printf '%s %s\n' "$(group_meta "$g" cost)" "$g"
	done | awk -v n="$n" '
		NF == 1 { $2 = $1; $1 = 60 }
		{ cost[NR] = $1; group[NR] = $2 }
		END {
			for (i = 1; i <= NR; i++) {
				best = 0
				for (j = 1; j <= NR; j++)
					if (!(j in lane) && (!best || cost[j] > cost[best]))
						best = j
				l = 1
				for (k = 2; k <= n; k++)
					if (load[k] < load[l])
						l = k
				load[l] += cost[best]
				lane[best] = l
			}
			for (i = 1; i <= NR; i++)
				print lane[i], group[i]
		}'
}

# collect_lane N: lane N's results into $results/results.tsv, and what its
# groups left into $results.
collect_lane() {
	local d=$results/lane-$1 f
	cat "$d/results.tsv" >>"$results/results.tsv"
	[ ! -e "$d/broken" ] || broken=1
	for f in "$d"/*; do
		case ${f##*/} in
		results.tsv|broken|booted|current-group|job.*|console.log|console-all.log|run-guest.log|dmesg-boot.log) ;;
		*) rm -rf "$results/${f##*/}"; mv "$f" "$results/" ;;
		esac
	done
}

# fail_tails: the last lines each of the first failed tests wrote to its
# group's log (both ends' of a two-guest group): what a run whose logs are
# gone (CI keeps only the output) needs to say why a test failed.
fail_tails() {
	local g t f msg n=0
	while IFS=$'\t' read -r _ g t _ msg; do
		[ $((n += 1)) -le 6 ] || { echo "(the log tails of the first 6 failed tests only)"; break; }
		for f in "$results/$g.log" "$results/$g-a.log" "$results/$g-b.log"; do
			[ -e "$f" ] || continue
			awk -v h="=== $g/$t" -v f="${f##*/}" '$0 == h { on = 1; n = 0; next }
				/^=== / { on = 0 } on { l[n++ % 15] = $0 }
				END { if (n) printf "--- %s, the last lines of %s:\n", substr(h, 5), f
					for (i = (n > 15 ? n - 15 : 0); i < n; i++) print "    | " l[i % 15] }' "$f"
		done
		console_report "$g" "$t" "$msg" | sed "1i --- $g/$t, the guest's console:"
	done < <(awk -F'\t' '$1 == "FAIL"' "$results/results.tsv")
}

nlanes=${SROCE_LANES:-2}
[[ $nlanes =~ ^[1-9]$ ]] || { echo "run-tests: SROCE_LANES must be 1 to 9, not '$nlanes'" >&2; exit 2; }
units=("${guest_groups[@]}" "${pair_groups[@]}")
if [ ${#units[@]} -gt 0 ]; then
	[ ${#units[@]} -ge "$nlanes" ] || nlanes=${#units[@]}
	mapfile -t plan < <(plan_lanes "$nlanes" "${units[@]}")
	pids=()
	for ((l = 1; l <= nlanes; l++)); do
		mine=()
		for p in "${plan[@]}"; do
			[ "${p%% *}" != "$l" ] || mine+=("${p#* }")
		done
		echo "--- lane $l: ${mine[*]}"
		run_lane "$l" "${mine[@]}" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((l = 1; l <= nlanes; l++)); do
		collect_lane "$l"
	done
fi

python3 - "$results/results.tsv" "$json" <<'EOF'
import json, sys, time
rows = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) < 5:
        continue
    rows.append({"status": f[0], "group": f[1], "test": f[2],
                 "seconds": int(f[3]) if f[3].isdigit() else 0,
                 "message": f[4]})
summary = {s: sum(1 for r in rows if r["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "summary": {"passed": summary["PASS"], "failed": summary["FAIL"],
                       "skipped": summary["SKIP"]},
           "tests": rows}, open(sys.argv[2], "w"), indent=1)
EOF

passed=$(awk -F'\t' '$1 == "PASS"' "$results/results.tsv" | wc -l)
failed=$(awk -F'\t' '$1 == "FAIL"' "$results/results.tsv" | wc -l)
skipped=$(awk -F'\t' '$1 == "SKIP"' "$results/results.tsv" | wc -l)
echo "--- summary [$(clock)]"
awk -F'\t' '{ n[$2]++; if ($1 == "FAIL") f[$2]++; if ($1 == "SKIP") s[$2]++ }
	END { for (g in n) printf "  %-12s %3d tests, %d failed, %d skipped\n", g, n[g], f[g], s[g] }' \
	"$results/results.tsv" | sort
if [ "$failed" -gt 0 ]; then
	echo "failed:"
	awk -F'\t' '$1 == "FAIL" { printf "  %s/%s: %s\n", $2, $3, $5 }' "$results/results.tsv"
	fail_tails
fi
echo "results: $json; logs: $results/"
[ "$skipped" -gt 0 ] && echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$broken" -eq 0 ] && [ $((passed + failed)) -gt 0 ]

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Merge the results.tsv of the two guests of a pair group.

usage: merge-pair-results.py A.tsv B.tsv GROUP  (merged lines on stdout)

A test's verdict is the worse of the two (FAIL over PASS over SKIP), with
both guests' messages; a test only one guest reported fails, and so does
every test the group declares (tests/declared.sh, with SROCE_TESTS) that
neither guest reported.
"""
import os
import subprocess
import sys

RANK = {"SKIP": 0, "PASS": 1, "FAIL": 2}


def load(path):
    rows = {}
    try:
        with open(path) as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                if len(fields) >= 5:
                    rows[fields[2]] = fields
    except OSError:
        pass
    return rows


def declared(group):
    """The tests @group declares, read from its file, not by running it."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([os.path.join(root, "tests", "declared.sh"), group],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return [line.split("\t")[1] for line in out.splitlines()]


def main():
    a, b, group = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    for test in list(a) + [t for t in b if t not in a]:
        ra, rb = a.get(test), b.get(test)
        if ra is None or rb is None:
            have = ra or rb
            print("FAIL\t%s\t%s\t%s\tonly guest %s reported it: %s %s" %
                  (group, test, have[3], "a" if ra else "b", have[0], have[4]))
            continue
        status = max(ra[0], rb[0], key=lambda s: RANK.get(s, 2))
        msg = "; ".join("%s: %s" % (r, x[4]) for r, x in (("a", ra), ("b", rb)) if x[4])
        secs = max(int(ra[3]) if ra[3].isdigit() else 0, int(rb[3]) if rb[3].isdigit() else 0)
        print("%s\t%s\t%s\t%d\t%s" % (status, group, test, secs, msg))
    for test in declared(group):
        if test not in a and test not in b:
            print("FAIL\t%s\t%s\t0\tno result recorded in either guest" % (group, test))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make bench's end-to-end table, and the figures it keeps.

Usage: bench_history.py HISTORY RUN < ROWS
ROWS: one figure a line, tab-separated: label, xhca, baseline, ratio, goal.
Prints the table with the ratio the last run recorded for each figure
beside this run's ("last"), then appends this run's figures to HISTORY
(tab-separated: run, label, xhca, baseline, ratio). A figure whose xhca
value is 0 did not run (BENCH_ONLY): shown, not kept. RUN names the run
(its time and commit)."""
import os
import sys


def load(path):
    """The last run's ratio per label, and that run's name."""
    last, run = {}, None
    if not os.path.exists(path):
        return last, run
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            try:
                ratio = float(p[4]) if len(p) == 5 else None
            except ValueError:
                ratio = None
            if ratio is None:
                continue  # not ours: left as it is
            last[p[1]] = ratio
            run = p[0]
    return last, run


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, run = sys.argv[1], sys.argv[2]
    rows = []
    for line in sys.stdin:
        p = line.rstrip("\n").split("\t")
        try:
            if len(p) != 5:
                raise ValueError
            rows.append((p[0], float(p[1]), float(p[2]), float(p[3]), p[4]))
        except ValueError:
            print(f"bench_history: bad row: {line.rstrip()}", file=sys.stderr)
            return 2
    last, prev = load(path)
    print(f"{'figure':46s} {'xhca':>12s} {'TCP':>12s} {'ratio':>7s} {'last':>7s}  goal")
    for label, x, t, r, goal in rows:
        l = f"{last[label]:6.2f}x" if label in last else "      -"
        print(f"{label:46s} {x:12.2f} {t:12.2f} {r:6.2f}x {l}  {goal}")
    kept = [row for row in rows if row[1] != 0]
    print(f"(last: the ratio of the figure's last run in {path}"
          + (f", latest {prev}" if prev else ", none yet") + f"; this run kept as {run}, "
          f"{len(kept)} figures)")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a") as f:
        for label, x, t, r, _ in kept:
            f.write(f"{run}\t{label}\t{x:.2f}\t{t:.2f}\t{r:.4f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

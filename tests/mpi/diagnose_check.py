#!/usr/bin/env python3
"""Checks one `tracefold diagnose -o X.json` report against a designed problem
(examples/diagnose/diag_problems.c, tests/mpi/diagnose_*.sh).

  diagnose_check.py JSON DESIGNED KIND [--symptom S] [--cause S] [--cause-rank R]
                    [--groups G] [--detail S] [--tolerance T]
      the most severe diagnosis of KIND has a severity within T (default
      10 %) of DESIGNED seconds, its symptom label contains S, its first
      cause's label contains S and names rank R, its detail contains S
  diagnose_check.py JSON - none        no diagnosis at all
  diagnose_check.py JSON - absent KIND no diagnosis of KIND
Prints one line saying what was found; exits 1 if a check fails.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("designed")
    ap.add_argument("kind")
    ap.add_argument("absent_kind", nargs="?")
    ap.add_argument("--symptom")
    ap.add_argument("--cause")
    ap.add_argument("--cause-rank", type=int)
    ap.add_argument("--detail")
    ap.add_argument("--tolerance", type=float, default=0.10)
    a = ap.parse_args()
    with open(a.json) as f:
        rep = json.load(f)
    diags = rep["diagnoses"]
    summary = ", ".join(f'{d["kind"]} {d["seconds"]:.4f} s' for d in diags) or "none"
    if a.kind == "none":
        if diags:
            sys.exit(f"expected no diagnosis, found: {summary}")
        print(f"no diagnosis above {rep['run_seconds'] * 0.01:.4f} s (1 % of the run)")
        return
    if a.kind == "absent":
        found = [d for d in diags if d["kind"] == a.absent_kind]
        if found:
            sys.exit(f"expected no {a.absent_kind}, found: {summary}")
        print(f"no {a.absent_kind} (found: {summary})")
        return
    mine = [d for d in diags if d["kind"] == a.kind]
    if not mine:
        sys.exit(f"no {a.kind} diagnosis; found: {summary}")
    d = mine[0]
    designed = float(a.designed)
    err = abs(d["seconds"] - designed) / designed if designed > 0 else float("inf")
    problems = []
    if err > a.tolerance:
        problems.append(f"severity {d['seconds']:.4f} s is {err:.1%} off the designed {designed:.4f} s")
    if a.symptom and a.symptom not in d["symptom"]["label"]:
        problems.append(f"symptom '{d['symptom']['label']}' does not name {a.symptom}")
    causes = d["causes"]
    if a.cause or a.cause_rank is not None:
        if not causes:
            problems.append("no cause named")
        else:
            c = causes[0]
            if a.cause and a.cause not in c["label"] and not any(a.cause in s for s in c["stack"]):
                problems.append(f"cause '{c['label']}' does not name {a.cause}")
            if a.cause_rank is not None and c.get("rank") != a.cause_rank:
                problems.append(f"cause '{c['label']}' is on rank {c.get('rank')}, not {a.cause_rank}")
    if a.detail and a.detail not in d["detail"]:
        problems.append(f"detail '{d['detail']}' does not say '{a.detail}'")
    if problems:
        sys.exit(f"{a.kind}: " + "; ".join(problems) + f" (all: {summary})")
    cause = f", cause {causes[0]['label']} on rank {causes[0].get('rank')}" if causes else ""
    print(f"{a.kind}: {d['seconds']:.4f} s vs designed {designed:.4f} s ({err:.1%} off), "
          f"symptom {d['symptom']['label']}{cause}")


if __name__ == "__main__":
    main()

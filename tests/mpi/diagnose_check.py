#!/usr/bin/env python3
"""Checks one `tracefold diagnose -o X.json` report against a designed problem
(examples/diagnose/diag_problems.c, tests/mpi/diagnose_*.sh).

  diagnose_check.py JSON DESIGNED KIND [--symptom S] [--cause S]... [--cause-rank R]...
                    [--detail S] [--tolerance T] [--cause-time] [--where S]
      the most severe diagnosis of KIND (at symptom S if given) has a severity within T (default
      10 %) of DESIGNED seconds, its symptom label contains S, its i-th
      cause names the i-th --cause S (in its label or call stack) and the
      i-th --cause-rank R, its detail contains S; with --cause-time, its
      first cause's time is within T of DESIGNED too (the samples' time);
      with --where S, its symptom's and first cause's loop iterations
      (`where`) contain S
  diagnose_check.py JSON - none        no diagnosis at all
  diagnose_check.py JSON J none        no diagnosis more severe than J seconds (the
      imbalance a balanced program measured its scheduling made) plus the tolerance
  diagnose_check.py JSON - absent KIND no diagnosis of KIND
Prints one line saying what was found; exits 1 if a check fails.
"""
import argparse
import json
import sys


def check_summary(rep):
    """Every diagnosis is in exactly one line of the per-phase summary, the
    line of its phase, with its share of the run; a phase's diagnoses save
    at most the phase's share. Returns what is wrong, or None."""
    diags, lines = rep["diagnoses"], rep["summary"]
    phases = [l for l in lines if l["phase"] >= 0]
    if [l["phase"] for l in phases] != list(range(len(rep["phases"]))):
        return f"lines for phases {[l['phase'] for l in phases]}, the report has {len(rep['phases'])}"
    seen = []
    for l in lines:
        for x in l["diagnoses"]:
            d = diags[x["index"]]
            if d["phase"] != l["phase"] or d["kind"] != x["kind"]:
                return f"diagnosis {x['index']} ({d['kind']}, phase {d['phase']}) listed under phase {l['phase']}"
            if abs(x["ratio"] - d["percent"] / 100) > 1e-9:
                return f"diagnosis {x['index']}: ratio {x['ratio']} but {d['percent']} % of the run"
            seen.append(x["index"])
        if l["phase"] >= 0 and l["could_save"] > l["share"] + 1e-9:
            return f"phase {l['phase']} could save {l['could_save']} of the run, more than its share {l['share']}"
    if sorted(seen) != list(range(len(diags))):
        return f"diagnoses listed {sorted(seen)}, the report has {len(diags)}"
    if sum(l["share"] for l in phases) > 1 + 1e-6:
        return "the phases' shares add up to more than the run"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("designed")
    ap.add_argument("kind")
    ap.add_argument("absent_kind", nargs="?")
    ap.add_argument("--symptom")
    ap.add_argument("--cause", action="append", default=[])
    ap.add_argument("--cause-rank", type=int, action="append", default=[])
    ap.add_argument("--cause-time", action="store_true")
    ap.add_argument("--detail")
    ap.add_argument("--where")
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--derived", action="append", default=[],
                    help="FUNCTION=LABEL: the report gives FUNCTION that derived label")
    a = ap.parse_args()
    with open(a.json) as f:
        rep = json.load(f)
    diags = rep["diagnoses"]
    for want in a.derived:
        fn, label = want.split("=", 1)
        got = [d for d in rep["derived_labels"] if d["function"] == fn]
        if not got or got[0]["label"] != label:
            sys.exit(f"derived label of {fn}: expected {label}, found "
                     f"{[(d['function'], d['label']) for d in rep['derived_labels']]}")
        print(f"derived label: {fn} is {label} ({got[0]['min_share']:.0%} of its "
              f"{got[0]['samples']} samples on ranks {got[0]['ranks']})")
    summary_problem = check_summary(rep)
    if summary_problem:
        sys.exit("per-phase summary: " + summary_problem)
    summary = ", ".join(f'{d["kind"]} {d["seconds"]:.4f} s' for d in diags) or "none"
    if a.kind == "none":
        if a.designed == "-":
            if diags:
                sys.exit(f"expected no diagnosis, found: {summary}")
            print(f"no diagnosis above {rep['run_seconds'] * 0.01:.4f} s (1 % of the run)")
            return
        # A balanced program on a loaded machine: descheduled ranks make a
        # real imbalance, which the program measured; nothing may be
        # reported beyond it.
        # Plus the exits' spread, which the program's entry times do not
        # see: 200 us a synchronisation over its 10.
        jitter = float(a.designed)
        bound = jitter * (1 + a.tolerance) + 0.002
        over = [d for d in diags if d["seconds"] > bound]
        if over:
            sys.exit(f"expected no diagnosis above the measured scheduling imbalance "
                     f"{jitter:.4f} s (+{a.tolerance:.0%}), found: {summary}")
        print(f"no diagnosis above 1 % of the run ({rep['run_seconds'] * 0.01:.4f} s) beyond the "
              f"imbalance scheduling made ({jitter:.4f} s measured); found: {summary}")
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
    # Of several of one kind (a Send's and its Recv's transfer), the one at
    # the symptom asked for.
    if a.symptom:
        mine = [d for d in mine if a.symptom in d["symptom"]["label"]] or mine
    d = mine[0]
    designed = float(a.designed)
    err = abs(d["seconds"] - designed) / designed if designed > 0 else float("inf")
    problems = []
    if err > a.tolerance:
        problems.append(f"severity {d['seconds']:.4f} s is {err:.1%} off the designed {designed:.4f} s")
    if a.symptom and a.symptom not in d["symptom"]["label"]:
        problems.append(f"symptom '{d['symptom']['label']}' does not name {a.symptom}")
    causes = d["causes"]
    if a.cause_time and causes:
        cerr = abs(causes[0]["seconds"] - designed) / designed if designed > 0 else float("inf")
        if cerr > a.tolerance:
            problems.append(f"cause time {causes[0]['seconds']:.4f} s is {cerr:.1%} off the designed {designed:.4f} s")
    for i in range(max(len(a.cause), len(a.cause_rank))):
        if i >= len(causes):
            problems.append(f"no cause #{i + 1} (causes: {[c['label'] for c in causes]})")
            continue
        c = causes[i]
        if i < len(a.cause) and a.cause[i] not in c["label"] and not any(a.cause[i] in s for s in c["stack"]):
            problems.append(f"cause #{i + 1} '{c['label']}' does not name {a.cause[i]}")
        if i < len(a.cause_rank) and c.get("rank") != a.cause_rank[i]:
            problems.append(f"cause #{i + 1} '{c['label']}' is on rank {c.get('rank')}, not {a.cause_rank[i]}")
    if a.where:
        for what, place in [("symptom", d["symptom"])] + [("cause", c) for c in causes[:1]]:
            if a.where not in place.get("where", ""):
                problems.append(f"{what} is '{place.get('where', '')}', not {a.where}")
    if a.detail and a.detail not in d["detail"]:
        problems.append(f"detail '{d['detail']}' does not say '{a.detail}'")
    if problems:
        sys.exit(f"{a.kind}: " + "; ".join(problems) + f" (all: {summary})")
    cause = "".join(f", cause {c['label']} on rank {c.get('rank')}" for c in causes[:2])
    print(f"{a.kind}: {d['seconds']:.4f} s vs designed {designed:.4f} s ({err:.1%} off), "
          f"symptom {d['symptom']['label']}{cause}")


if __name__ == "__main__":
    main()

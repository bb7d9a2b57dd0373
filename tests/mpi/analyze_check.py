"""Checks one finding of a `tracefold analyze -o x.json` report against the
wait a test program injected (tests/mpi/analyze_lib.bash).

  severity REPORT INJECTED PATTERN RANKS OP
      every rank in RANKS (comma list) has PATTERN within 5 % of the waiting
      the program measured for it from the ranks' entry times ($WAITS_OUT:
      the program's output), else of INJECTED seconds, its biggest call path for it is an OP call, and the other
      ranks have less than 5 % of INJECTED
  delay REPORT INJECTED RANK LABEL
      the delay costs of RANK are within 5 % of the measured waiting of the
      other ranks (else INJECTED), mostly on a call
      path whose label contains LABEL; no computation of another rank has
      more than 5 % (measured waiting leaves out the start-up)
  absent REPORT INJECTED PATTERN
      PATTERN totals less than 5 % of INJECTED over all ranks
  critical REPORT INJECTED RANK LABEL
      the critical path holds at least INJECTED seconds of RANK's LABEL call path
"""
import json
import os
import re
import sys

TOL = 0.05


def measured_waits():
    """Per waiting rank, the waiting the program measured from the ranks'
    entry times: $WAITS_OUT is the program's output (`waits: SCENARIO
    injected X s by rank LATE`), and its directory holds times.R of every
    rank R (lines `entered E...` and `started S...`). In a step a rank waits
    from its entry until the late rank started (at a barrier or N x N: until
    the last rank started); in the chain only rank 3's waiting is
    measured."""
    path = os.environ.get("WAITS_OUT")
    if not path or not os.path.exists(path):
        return {}
    scenario, late = None, None
    for line in open(path):
        m = re.match(r"^waits: (\S+) injected [0-9.]+ s by rank (\d+)", line)
        if m:
            scenario, late = m.group(1), int(m.group(2))
    entered, started = {}, {}
    for name in os.listdir(os.path.dirname(path)):
        m = re.match(r"^times\.(\d+)$", name)
        if not m:
            continue
        for line in open(os.path.join(os.path.dirname(path), name)):
            key, *values = line.split()
            (entered if key == "entered" else started)[int(m.group(1))] = \
                [float(x) for x in values]
    if scenario is None or late not in started:
        return {}
    everyone = scenario in ("barrier", "ibarrier", "nxn", "iallreduce")
    out = {}
    for w in sorted(entered):
        if (w == late and not everyone) or (scenario == "chain" and w != 3):
            continue
        waited = 0.0
        for i, mine in enumerate(entered[w]):
            last = started[late][i]
            if everyone:
                last = max([last] + [s[i] for s in started.values()])
            waited += max(0.0, last - mine)
        out[w] = waited
    return out


def main():
    what, path, injected = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rep = json.load(open(path))
    waited = measured_waits()
    labels = [c["label"] for c in rep["callpaths"]]
    if injected <= 0:
        sys.exit(f"{path}: nothing injected")
    if what == "severity":
        pattern, ranks, op = sys.argv[4], [int(r) for r in sys.argv[5].split(",")], sys.argv[6]
        per_rank, per_cp = {}, {}
        for c in rep["severity"]:
            if c["pattern"] != pattern:
                continue
            per_rank[c["rank"]] = per_rank.get(c["rank"], 0) + c["seconds"]
            key = (c["rank"], c["callpath"])
            per_cp[key] = per_cp.get(key, 0) + c["seconds"]
        for r in ranks:
            got = per_rank.get(r, 0)
            want = waited.get(r, injected)
            if abs(got - want) > TOL * want:
                sys.exit(f"{pattern} on rank {r}: {got:.6f} s, measured waiting {want:.6f} s, "
                         f"injected sleeping {injected:.6f} s "
                         f"(off by {100 * (got / want - 1):+.1f} %)")
            cps = sorted(((v, cp) for (rr, cp), v in per_cp.items() if rr == r), reverse=True)
            label = labels[cps[0][1]]
            if not label.startswith(op + " "):
                sys.exit(f"{pattern} on rank {r}: biggest call path is {label}, want {op}")
        for r, v in per_rank.items():
            # A rank the load held up may make even the late rank wait:
            # what it measured, if it did.
            if r not in ranks and abs(v - waited.get(r, 0)) > TOL * injected:
                sys.exit(f"{pattern} on rank {r} (not expected): {v:.6f} s, measured waiting "
                         f"{waited.get(r, 0):.6f} s")
        got = ", ".join(f"rank {r} {per_rank.get(r, 0):.6f} s (measured "
                        f"{waited.get(r, injected):.6f} s)" for r in ranks)
        print(f"{pattern}: {got} at {op}, injected sleeping {injected:.6f} s")
    elif what == "absent":
        pattern = sys.argv[4]
        got = sum(c["seconds"] for c in rep["severity"] if c["pattern"] == pattern)
        if got > TOL * injected:
            sys.exit(f"{pattern}: {got:.6f} s found, none injected")
        print(f"{pattern}: {got:.6f} s, none injected")
    elif what in ("delay", "critical"):
        rank, want = int(sys.argv[4]), sys.argv[5]
        cells = rep["delay_costs" if what == "delay" else "critical_path"]
        mine = sum(c["seconds"] for c in cells if c["rank"] == rank and want in labels[c["callpath"]])
        if what == "critical":
            if mine < (1 - TOL) * injected:
                sys.exit(f"critical path: {mine:.6f} s of rank {rank}'s {want}, "
                         f"want at least {injected:.6f} s")
            print(f"critical path: {mine:.6f} s on rank {rank}'s {want} (injected {injected:.6f} s)")
            return
        total = sum(c["seconds"] for c in cells if c["rank"] == rank)
        # What the delay made others wait, as measured; else the sleeping.
        injected = sum(waited.values()) if waited else injected
        # The whole wait is charged to the late rank's computation, most of
        # it to the injected call path: a rank the load held up elsewhere
        # (at load 20, 40 of 260 ms went to its other computation) makes
        # that share real delay too.
        # The program measures the waiting of its steps only: the delay of
        # reaching its first synchronization last (start_together, after an
        # MPI_Init that took longer there: 7 ms seen) is left out.
        comp = {}
        for c in cells:
            label = labels[c["callpath"]]
            if c["rank"] == rank and label.startswith("computation") and \
                    (not waited or "start_together" not in label):
                comp[labels[c["callpath"]]] = comp.get(labels[c["callpath"]], 0) + c["seconds"]
        mine_all = sum(comp.values())
        if abs(mine_all - injected) > TOL * injected:
            sys.exit(f"delay costs of rank {rank}'s computation: {mine_all:.6f} s, measured "
                     f"waiting {injected:.6f} s (at '{want}': {mine:.6f} s; all of rank {rank}: "
                     f"{total:.6f} s)")
        top = max(comp, key=comp.get) if comp else "nothing"
        if want not in top:
            sys.exit(f"delay costs of rank {rank}: the biggest share is at {top}, want '{want}'")
        # The injected computation must not be blamed on another rank. Other
        # computation of other ranks may cost real delay (MPI_Init taking
        # longer on one rank, a rank the load held up before a barrier: 29 ms
        # seen at load 20) and is not what this checks.
        for c in cells:
            if c["rank"] != rank and want in labels[c["callpath"]] and \
                    c["seconds"] > TOL * injected:
                sys.exit(f"delay cost on rank {c['rank']} (not expected): {c['seconds']:.6f} s "
                         f"at {labels[c['callpath']]}")
        print(f"delay costs: {mine_all:.6f} s on rank {rank}'s computation ({mine:.6f} s at {want}), "
              f"measured waiting {injected:.6f} s")
    else:
        sys.exit(f"unknown check {what}")


if __name__ == "__main__":
    main()

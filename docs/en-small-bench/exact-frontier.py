#!/usr/bin/python3
"""The exact bar's frontier on en-small: which acceptance a chain draft needs,
at a given cost per drafted level, for an exact pipeline to run 1.5x over ar.

A model of one speculative step, in one-token target passes, calibrated on
the stop-51 run (twenty-fourth-100.txt; docs/en-small.md, twenty-fifth part):
  step = pass(L + 1) + L * draft + acceptor * rows + loop
  pass(n): forward_tree alone, 1.05 / 1.12 / 1.23 / 1.28 / 1.31 for 2..6
           tokens (twenty-third part), times 1.02-1.03 in the loop
  acceptor: 0.043 a row it reads (a chain reads E rows)
  loop:     0.013 (bookkeeping between passes)
  ar pays 1 + 0.033 a token, so speedup = E / step / 1.033.
E, the tokens a step keeps: depth 1 keeps a, each further depth r times the
depth before it (r = 0.9 fits the recurrent draft's .554 / .50; a copy of
the target keeps every depth alike, r = 1). The best length 1-5 is taken.
Run: /usr/bin/python3 docs/en-small-bench/exact-frontier.py
"""

PASS_IN_LOOP = {2: 1.05 * 1.03, 3: 1.14, 4: 1.23 * 1.03, 5: 1.28 * 1.03, 6: 1.31 * 1.03}
ACCEPTOR_PER_ROW, LOOP, AR_OVERHEAD = 0.043, 0.013, 1.033


def kept_per_step(a, length, r):
    kept, reach, rate = 1.0, 1.0, a
    for _ in range(length):
        reach *= rate
        kept += reach
        rate *= r
    return kept


def speedup(a, draft_cost, r=0.9):
    best = (0.0, 0)
    for length in range(1, 6):
        kept = kept_per_step(a, length, r)
        step = PASS_IN_LOOP[length + 1] + length * draft_cost + ACCEPTOR_PER_ROW * kept + LOOP
        best = max(best, (kept / step / AR_OVERHEAD, length))
    return best


def needed(draft_cost, target=1.5, r=0.9):
    for thousandths in range(300, 1001):
        if speedup(thousandths / 1000, draft_cost, r)[0] >= target:
            return thousandths / 1000
    return None


print("calibration: the recurrent draft (.554 at depth 1, 0.04 a level) -> %.2fx at length %d"
      " (measured 1.35x at length 2)" % speedup(0.554, 0.04))
print()
print("draft cost a level | depth-1 acceptance for 1.5x (r = 0.9) | for 1.5x (r = 1)")
for cost in (0.02, 0.04, 0.06, 0.10, 0.20, 0.30, 0.43):
    print("%.2f | %s | %s" % (cost, needed(cost) or "none <= 1", needed(cost, r=1.0) or "none <= 1"))
print()
print("drafts measured on en-small | depth 1 | cost a level | model's best")
for name, a, cost, r in (("recurrent cell (shipped)", 0.554, 0.04, 0.9),
                         ("recurrent cell twice as wide", 0.564, 0.06, 0.9),
                         ("shallow draft, float16 (sd-exact)", 0.591, 0.21, 0.9),
                         ("the target in float16 as its draft, as measured", 0.98, 0.90, 1.0),
                         ("the same at float16 plain decoding's cost", 0.98, 0.43, 1.0)):
    s, length = speedup(a, cost, r)
    print("%s | %.3f | %.2f | %.2fx at length %d" % (name, a, cost, s, length))

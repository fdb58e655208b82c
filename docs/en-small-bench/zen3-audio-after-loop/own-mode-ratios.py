#!/usr/bin/python3
"""Speedups and realized fractions of a run that holds each pipeline twice,
streamed and with its audio after the loop (files named NAME.toml and
NAME-after.toml; issue 21, fifty-fourth part): each mode over its own `ar`.
The bench prints every speedup over its first pipeline; this divides by the
`ar` of the same mode instead. The modeled step (what the ceiling reads) is
not in the JSON: it comes from the table's section on the loop's passes, one
line per pipeline in the JSON's order.
    own-mode-ratios.py RUN.json RUN.txt"""
import json
import re
import sys

pipelines = json.load(open(sys.argv[1]))["pipelines"]
table = open(sys.argv[2]).read().split("the target's passes per step in the loop", 1)[1].split("\n\n", 1)[0]
modeled_steps = [float(m) for m in re.findall(r"modeled ([0-9.]+)", table)]
assert len(modeled_steps) == len(pipelines), "one modeled step per pipeline"
for pipeline, modeled in zip(pipelines, modeled_steps):
    pipeline["modeled_step"] = modeled
by_name = {p["name"]: p for p in pipelines}
ar = {"streamed": by_name["en-small-ar"], "after": by_name["en-small-ar-after"]}
print("| pipeline | streamed: speedup | realized | step's pass in the loop / modeled"
      " | after the loop: speedup | realized | step's pass in the loop / modeled |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for p in pipelines:
    name = p["name"]
    if name.endswith("-after") or name == "en-small-ar":
        continue
    cells = []
    for mode, run in (("streamed", p), ("after", by_name[name + "-after"])):
        speedup = run["tokens_per_second"] / ar[mode]["tokens_per_second"]
        ceiling = run["ceiling"]
        realized = speedup / ceiling if ceiling else float("nan")
        in_loop = run["step_pass_ms"] / ar[mode]["step_pass_ms"]
        modeled = run["modeled_step"]
        cells += [f"{speedup:.2f}x", f"{100 * realized:.0f}%", f"{in_loop:.2f} / {modeled:.2f}"]
    print(f"| `{name.removeprefix('en-small-')}` | " + " | ".join(cells) + " |")
for mode in ("streamed", "after"):
    print(f"`ar` {mode}: {ar[mode]['tokens_per_second']:.1f} tok/s, step's pass {ar[mode]['step_pass_ms']:.2f} ms")

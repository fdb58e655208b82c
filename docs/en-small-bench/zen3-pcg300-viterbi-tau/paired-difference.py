#!/usr/bin/python3
# The paired WER difference between two pipelines of one `cadenza bench
# --suite speech --json` file, with a 95% bootstrap interval over sentences
# (each sentence with all its seeds), as the bench prints it against its
# first pipeline. Usage: paired-difference.py RUN.json NAME_A NAME_B
import json
import random
import sys

run, name_a, name_b = sys.argv[1], sys.argv[2], sys.argv[3]
pipelines = {p["name"]: p for p in json.load(open(run))["pipelines"]}


def errors_by_sentence(pipeline):
    out = {}
    for s in pipeline["sentences"]:
        errors, words = out.get(s["id"], (0, 0))
        out[s["id"]] = (errors + s["words"]["errors"], words + s["words"]["reference_length"])
    return out


a, b = errors_by_sentence(pipelines[name_a]), errors_by_sentence(pipelines[name_b])
ids = sorted(a)


def difference(sample):
    words = sum(a[i][1] for i in sample)
    return 100.0 * (sum(b[i][0] for i in sample) - sum(a[i][0] for i in sample)) / words


rng = random.Random(1)
boots = sorted(difference([rng.choice(ids) for _ in ids]) for _ in range(2000))
print("%s - %s: %+.1f pt [%+.1f, %+.1f]" % (name_b, name_a, difference(ids), boots[50], boots[1949]))

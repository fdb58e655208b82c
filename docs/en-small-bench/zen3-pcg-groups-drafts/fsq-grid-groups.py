#!/usr/bin/python3
"""PCG groups on the mel-FSQ codec's grid (docs/en-small.md, forty-seventh part).

Each code's group holds the codes whose digits (levels 8, 8, 8, 4, 4, the first
digit least significant) lie within per-digit radii of its own and, at most, an
L1 distance away. Written as a .cdzgrp file (docs/formats.md) over en-small's
vocabulary: token = 58 + code, 8,252 tokens, one group per code.

  fsq-grid-groups.py RADII L1_CAP OUT.cdzgrp
  e.g. 1,1,1,1,1 99 linf-1.cdzgrp; 2,2,2,2,2 4 linf2-l1-4.cdzgrp; 2,2,2,1,1 99 box22211.cdzgrp
"""
import struct
import sys

import numpy as np

LEVELS = [8, 8, 8, 4, 4]
AUDIO_OFFSET = 58
VOCAB = 8252


def main():
    radii = np.array([int(x) for x in sys.argv[1].split(",")])
    l1_cap = int(sys.argv[2])
    basis = np.cumprod([1] + LEVELS[:-1])
    codes = np.arange(int(np.prod(LEVELS)))
    digits = np.stack([(codes // b) % l for b, l in zip(basis, LEVELS)], 1)
    groups = []
    for code in codes:
        distance = np.abs(digits - digits[code])
        members = np.nonzero((distance <= radii).all(1) & (distance.sum(1) <= l1_cap))[0]
        groups.append(members + AUDIO_OFFSET)
    offsets = np.concatenate([[0], np.cumsum([len(g) for g in groups])]).astype("<u8")
    with open(sys.argv[3], "wb") as out:
        out.write(struct.pack("<8sIIQQQd", b"CDZGRP\0\0", 1, 0, VOCAB, len(groups), int(offsets[-1]), float("nan")))
        out.write(offsets.tobytes())
        out.write(np.concatenate(groups).astype("<u4").tobytes())
    print(f"{sys.argv[3]}: {len(groups)} groups, a mean of {offsets[-1] / len(groups):.1f} codes")


if __name__ == "__main__":
    main()

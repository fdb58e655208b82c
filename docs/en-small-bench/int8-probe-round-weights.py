# Kept with en-small.md's thirtieth part (/usr/bin/python3 with numpy;
# SOURCE_DIR OUT_DIR BITS GROUP): writes a copy of a safetensors LLaMA whose
# 2-D weights are rounded to symmetric integers (per row, or per group of `group` inputs)
# and stored back as float32, to measure what a quantized self-draft keeps.
import json, struct, sys, shutil, os
import numpy as np
src, dst, bits, group = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(dst, exist_ok=True)
for name in ("config.json",):
    shutil.copy(os.path.join(src, name), dst)
raw = open(os.path.join(src, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = bytearray(raw[8 + n:])
qmax = 2 ** (bits - 1) - 1
err = []
for key, info in header.items():
    if key == "__metadata__" or len(info["shape"]) != 2:
        continue
    a, b = info["data_offsets"]
    w = np.frombuffer(bytes(data[a:b]), dtype="<f4").reshape(info["shape"]).astype(np.float64)
    rows, cols = w.shape
    g = cols if group == 0 else group
    wg = w.reshape(rows, cols // g, g)
    scale = np.abs(wg).max(axis=2, keepdims=True) / qmax
    scale[scale == 0] = 1.0
    q = np.clip(np.round(wg / scale), -qmax, qmax) * scale
    q = q.reshape(rows, cols).astype("<f4")
    err.append((key, float(np.sqrt(((q - w) ** 2).mean() / (w ** 2).mean()))))
    data[a:b] = q.tobytes()
open(os.path.join(dst, "model.safetensors"), "wb").write(raw[:8 + n] + bytes(data))
print("relative rms error: max %.4f mean %.4f" % (max(e for _, e in err), sum(e for _, e in err) / len(err)))

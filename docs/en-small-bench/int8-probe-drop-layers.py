# Kept with en-small.md's thirtieth part (SOURCE_DIR OUT_DIR LAYER[,LAYER]):
# a copy of a safetensors LLaMA without the given layers.
import json, struct, sys, os
src, dst = sys.argv[1], sys.argv[2]
drop = set(int(v) for v in sys.argv[3].split(","))
os.makedirs(dst, exist_ok=True)
config = json.load(open(os.path.join(src, "config.json")))
raw = open(os.path.join(src, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
body = raw[8 + n:]
keep = [l for l in range(config["num_hidden_layers"]) if l not in drop]
renumber = {old: new for new, old in enumerate(keep)}
tensors = []
for key, info in header.items():
    if key == "__metadata__":
        continue
    parts = key.split(".")
    if parts[1] == "layers":
        layer = int(parts[2])
        if layer in drop:
            continue
        parts[2] = str(renumber[layer])
    a, b = info["data_offsets"]
    tensors.append((".".join(parts), info["dtype"], info["shape"], body[a:b]))
out_header, offset, blobs = {"__metadata__": header.get("__metadata__", {})}, 0, []
for name, dtype, shape, blob in tensors:
    out_header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
    offset += len(blob)
    blobs.append(blob)
text = json.dumps(out_header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
open(os.path.join(dst, "model.safetensors"), "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
config["num_hidden_layers"] = len(keep)
json.dump(config, open(os.path.join(dst, "config.json"), "w"), indent=2)

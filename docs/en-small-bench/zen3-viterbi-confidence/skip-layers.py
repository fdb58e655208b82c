#!/usr/bin/python3
# A checkpoint of a Hugging Face LLaMA directory with only some of its layers,
# renumbered (the fifty-first part's layer-skipping int8 draft). Usage:
#   skip-layers.py SOURCE_DIR OUTPUT_DIR 0,1,3,4,5
import json, struct, sys, os
src, dst, keep = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(',')]
f = open(os.path.join(src, 'model.safetensors'), 'rb')
n = struct.unpack('<Q', f.read(8))[0]
h = json.loads(f.read(n)); base = 8 + n
out = {}; blobs = []; off = 0
meta = h.pop('__metadata__', None)
for k in sorted(h):
    name = k
    if k.startswith('model.layers.'):
        i = int(k.split('.')[2])
        if i not in keep: continue
        name = 'model.layers.%d.' % keep.index(i) + '.'.join(k.split('.')[3:])
    b, e = h[k]['data_offsets']; f.seek(base + b); data = f.read(e - b)
    out[name] = {'dtype': h[k]['dtype'], 'shape': h[k]['shape'], 'data_offsets': [off, off + len(data)]}
    blobs.append(data); off += len(data)
if meta: out['__metadata__'] = meta
hb = json.dumps(out).encode(); hb += b' ' * ((8 - len(hb) % 8) % 8)
os.makedirs(dst, exist_ok=True)
with open(os.path.join(dst, 'model.safetensors'), 'wb') as g:
    g.write(struct.pack('<Q', len(hb))); g.write(hb)
    for b in blobs: g.write(b)
c = json.load(open(os.path.join(src, 'config.json'))); c['num_hidden_layers'] = len(keep)
json.dump(c, open(os.path.join(dst, 'config.json'), 'w'), indent=2)

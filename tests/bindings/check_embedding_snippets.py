#!/usr/bin/python3
"""Runs every snippet of docs/embedding.md against an install prefix: each
```c block is compiled with pkg-config and run, each ```python block runs
with Debian's python3, each ```js block with node. They run from the
prefix's share/cadenza, where `pipelines/default.toml` is. Every language
must have at least two snippets (one synthesis, one streamed synthesis)."""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

prefix, document, node_package = Path(sys.argv[1]).resolve(), Path(sys.argv[2]), Path(sys.argv[3]).resolve()
blocks = re.findall(r"^```(c|python|js)\n(.*?)^```$", document.read_text(), flags=re.M | re.S)
counts = {language: sum(1 for lang, _ in blocks if lang == language) for language in ("c", "python", "js")}
print(f"{document}: {counts}")
if any(count < 2 for count in counts.values()):
    sys.exit(f"FAIL: every language needs a synthesis and a streamed synthesis snippet: {counts}")

environment = dict(os.environ)
for variable in ("CADENZA_LIBRARY", "CADENZA_PLUGIN_PATH"):
    environment.pop(variable, None)
environment["PYTHONPATH"] = str(prefix / "lib" / "python3" / "dist-packages")
environment["NODE_PATH"] = f"{prefix / 'lib' / 'node_modules'}:{node_package / 'node_modules'}"
environment["PKG_CONFIG_PATH"] = str(prefix / "lib" / "pkgconfig")
working_directory = prefix / "share" / "cadenza"
failures = 0
with tempfile.TemporaryDirectory() as scratch:
    for index, (language, code) in enumerate(blocks):
        source = Path(scratch) / f"snippet{index}.{ {'c': 'c', 'python': 'py', 'js': 'js'}[language] }"
        source.write_text(code)
        if language == "c":
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "cadenza"], env=environment, check=True,
                                   capture_output=True, text=True).stdout.split()
            program = Path(scratch) / f"snippet{index}"
            subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", str(source), "-o", str(program), *flags,
                            f"-Wl,-rpath,{prefix / 'lib'}"], check=True, env=environment)
            command = [str(program)]
        elif language == "python":
            command = ["/usr/bin/python3", str(source)]
        else:
            command = ["node", str(source)]
        result = subprocess.run(command, cwd=working_directory, env=environment, capture_output=True, text=True,
                                timeout=300)
        first_line = code.strip().splitlines()[0]
        status = "ok" if result.returncode == 0 and result.stdout.strip() else "FAILED"
        print(f"[{status}] {language} snippet {index} ({first_line[:60]}): {result.stdout.strip()}")
        if status != "ok":
            print(result.stderr)
            failures += 1
sys.exit(1 if failures else 0)

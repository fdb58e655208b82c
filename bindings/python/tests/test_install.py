"""The package as installed: it comes from the prefix, finds libcadenza and
cadenza's own plugins there, and honours CADENZA_LIBRARY and CADENZA_PLUGIN_PATH."""
import os
import subprocess
import sys
import unittest
from pathlib import Path

import cadenza

from support import DOUBLES, PREFIX, InstalledTestCase


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment.pop("CADENZA_PLUGIN_PATH", None)
    environment.update(env)
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120)


class Installed(InstalledTestCase):
    def test_the_package_and_the_library_come_from_the_prefix(self):
        prefix = str(PREFIX.resolve())
        self.assertTrue(str(Path(cadenza.__file__).resolve()).startswith(prefix), cadenza.__file__)
        version = cadenza.version()
        self.assertTrue(str(Path(version.path).resolve()).startswith(prefix), version.path)
        self.assertEqual(version.abi, (0, 5))
        self.assertRegex(str(version), r"^\d+\.\d+\.\d+$")

    def test_cadenzas_own_plugins_are_found_in_the_prefix(self):
        found = {plugin.name: plugin for plugin in cadenza.plugins()}
        for name in ("frontend.chars", "frontend.flite", "codec.mel_fsq", "backbone.llama", "acceptor.bias"):
            self.assertIn(name, found)
        chars = found["frontend.chars"]
        self.assertEqual(chars.kind, "frontend")
        self.assertEqual(chars.origin, "cadenza's own plugins")
        self.assertTrue(str(Path(chars.library).resolve()).startswith(str(PREFIX.resolve())), chars.library)
        self.assertEqual(cadenza.plugin_problems(), [])

    def test_plugin_paths_come_first(self):
        found = [plugin for plugin in cadenza.plugins([DOUBLES]) if plugin.name == "test.markov_backbone"]
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0].origin, "cdz_pipeline_params")
        problems = cadenza.plugin_problems(["/no/such/plugins"])
        self.assertTrue(any("/no/such/plugins" in problem for problem in problems), problems)

    def test_cadenza_plugin_path_is_honoured(self):
        code = ("import cadenza\n"
                "print([p.origin for p in cadenza.plugins() if p.name == 'test.tone_codec'])")
        self.assertEqual(run_python(code).stdout.strip(), "[]")
        self.assertEqual(run_python(code, CADENZA_PLUGIN_PATH=DOUBLES).stdout.strip(), "['$CADENZA_PLUGIN_PATH']")

    def test_cadenza_library_is_honoured(self):
        code = "import cadenza\nprint(cadenza.version().path)"
        library = str(PREFIX / "lib" / "libcadenza.so.0")
        self.assertEqual(run_python(code, CADENZA_LIBRARY=library).stdout.strip(), library)
        missing = run_python("import cadenza\ntry:\n    cadenza.version()\nexcept cadenza.CadenzaError as e:\n"
                             "    print(e.code.name, e.message)", CADENZA_LIBRARY="/no/such/libcadenza.so")
        self.assertIn("NOT_FOUND cannot load libcadenza (/no/such/libcadenza.so", missing.stdout)

    def test_a_copied_tree_uses_its_own_library_and_plugins(self):
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "elsewhere"
            for part in ("bin", "lib"):
                shutil.copytree(PREFIX / part, copy / part, symlinks=True)
            (copy / "share").symlink_to(PREFIX / "share")
            code = ("import cadenza\n"
                    "print(cadenza.version().path)\n"
                    "print([p.library for p in cadenza.plugins() if p.name == 'frontend.chars'][0])")
            lines = run_python(code, PYTHONPATH=str(copy / "lib" / "python3" / "dist-packages")).stdout.split()
            self.assertEqual(len(lines), 2, lines)
            for line in lines:
                self.assertTrue(line.startswith(str(copy)), line)
            listed = subprocess.run([str(copy / "bin" / "cadenza"), "plugins"], capture_output=True, text=True,
                                    timeout=120, env={k: v for k, v in os.environ.items() if k != "CADENZA_PLUGIN_PATH"})
            self.assertEqual(listed.returncode, 0, listed.stderr)
            self.assertIn(f"{copy}/lib/cadenza/plugins/libcadenza_frontend_chars.so", listed.stdout)
            self.assertNotIn(str(PREFIX), listed.stdout)

    def test_the_module_runs_as_a_command(self):
        result = subprocess.run([sys.executable, "-m", "cadenza", "version"], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("embedding ABI 0.5", result.stdout)


if __name__ == "__main__":
    unittest.main()

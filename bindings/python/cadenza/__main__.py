"""python3 -m cadenza synth|plugins|version: the CLI's `synth` through the bindings."""
from __future__ import annotations

import argparse
import sys
import time

from . import CadenzaError, Pipeline, StatusCode, plugins, version

EXIT_OK, EXIT_USER_ERROR, EXIT_INTERNAL_ERROR = 0, 1, 2


def _synth(args: argparse.Namespace) -> int:
    started = time.monotonic()
    with Pipeline(args.pipeline) as pipeline:
        loaded = time.monotonic() - started
        if args.stream:
            import numpy as np
            start = time.monotonic()
            chunks, first = [], None
            stream = pipeline.stream(args.text, voice=args.voice, seed=args.seed, max_seconds=args.max_seconds)
            for chunk in stream:
                first = first if first is not None else time.monotonic() - start
                chunks.append(chunk)
            audio = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
            from .synthesis import Synthesis
            speech = Synthesis(audio, stream.sample_rate or 0, stream.stats or {})
        else:
            start = time.monotonic()
            speech = pipeline.synthesize(args.text, voice=args.voice, seed=args.seed, max_seconds=args.max_seconds)
            first = time.monotonic() - start
        seconds = time.monotonic() - start
    speech.save(args.output)
    stats = speech.stats
    print(f"wrote {args.output}: {speech.seconds:.2f} s of audio at {speech.sample_rate} Hz")
    print(f"pipeline {args.pipeline} loaded in {loaded:.2f} s")
    print(f"tokens {stats['tokens_generated']} | steps {stats['steps']} | mean accepted length "
          f"{stats['mean_accepted_tokens_per_step']:.2f} tokens/step | target passes {stats['target_passes']} | "
          f"draft passes {stats['draft_passes']}")
    print(f"decoding {stats['tokens_per_second']:.1f} tokens/s | synthesis {seconds:.2f} s | first audio after "
          f"{first or seconds:.2f} s{' (streamed)' if args.stream else ''}")
    return EXIT_OK


def _plugins(args: argparse.Namespace) -> int:
    found = plugins()
    for plugin in found:
        print(f"{plugin.name:<26}{plugin.kind:<10}{plugin.version:<10}{plugin.library}"
              f"{'  (shadowed)' if plugin.shadowed else ''}")
    print(f"{len(found)} plugin(s)")
    return EXIT_OK


def _version(args: argparse.Namespace) -> int:
    v = version()
    print(f"cadenza {v.library} (embedding ABI {v.abi[0]}.{v.abi[1]}, plugin ABI {v.plugin_abi[0]}."
          f"{v.plugin_abi[1]}) from {v.path}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m cadenza", description="cadenza through its Python bindings")
    commands = parser.add_subparsers(dest="command", required=True)
    synth = commands.add_parser("synth", help="synthesize a text to a WAV file and print the run's statistics")
    synth.add_argument("-p", "--pipeline", required=True, help="pipeline file (.toml)")
    synth.add_argument("-t", "--text", required=True, help="the text to speak")
    synth.add_argument("-o", "--output", required=True, help="WAV file to write")
    synth.add_argument("--voice", help="audio file of the voice to imitate (default: the pipeline's)")
    synth.add_argument("--seed", type=int, help="seed of the synthesis (default: the pipeline's)")
    synth.add_argument("--max-seconds", type=float, help="stop after this much audio (default: the pipeline's)")
    synth.add_argument("--stream", action="store_true", help="decode audio in chunks as tokens arrive")
    synth.set_defaults(run=_synth)
    commands.add_parser("plugins", help="list every plugin found").set_defaults(run=_plugins)
    commands.add_parser("version", help="the library's versions and location").set_defaults(run=_version)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except CadenzaError as error:
        print(f"cadenza: error: {error.message}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR if error.code == StatusCode.INTERNAL else EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())

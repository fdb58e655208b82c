#!/bin/sh
# The Python suite (unittest, Debian's python3) against an install prefix:
# the package is imported from the prefix, not from the source tree.
set -eu
prefix="$1"
tests="$2"
export PYTHONPATH="$prefix/lib/python3/dist-packages"
export CADENZA_TEST_PREFIX="$prefix"
unset CADENZA_LIBRARY CADENZA_PLUGIN_PATH
cd "$prefix"
exec /usr/bin/python3 -m unittest discover -s "$tests" -p 'test_*.py' -v

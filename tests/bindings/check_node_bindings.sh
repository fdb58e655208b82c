#!/bin/sh
# The Node suite (node --test) against an install prefix. koffi comes from
# npm into bindings/node/node_modules (not committed); the package under test
# is the prefix's lib/node_modules/cadenza.
set -eu
prefix="$1"
package="$2"
if [ ! -f "$package/node_modules/koffi/package.json" ]; then
    (cd "$package" && npm ci --no-audit --no-fund --loglevel=error)
fi
export NODE_PATH="$prefix/lib/node_modules:$package/node_modules"
export CADENZA_TEST_PREFIX="$prefix"
unset CADENZA_LIBRARY CADENZA_PLUGIN_PATH
cd "$prefix"
exec node --test "$package/tests/"

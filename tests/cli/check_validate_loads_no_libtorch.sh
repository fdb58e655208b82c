#!/bin/sh
# `cadenza validate` on every shipped pipeline and `cadenza plugins` describe
# the model plugins from their manifest sections: LibTorch is never loaded.
set -u
cadenza="$1" pipelines="$2"
for run in "validate $pipelines/ar.toml $pipelines/vadusa.toml $pipelines/ssd-bias.toml" "plugins"; do
    # shellcheck disable=SC2086
    output=$(LD_DEBUG=files "$cadenza" $run 2>&1 > /dev/null) || { echo "cadenza $run failed:"; echo "$output" | grep -v '^ *[0-9]*:'; exit 1; }
    if echo "$output" | grep -q 'file=libtorch'; then
        echo "cadenza $run loads LibTorch:"
        echo "$output" | grep 'file=libtorch\|needed by /.*cadenza' | head -5
        exit 1
    fi
    echo "cadenza $run: LibTorch not loaded"
done
exit 0

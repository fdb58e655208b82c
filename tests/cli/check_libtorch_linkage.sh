#!/bin/sh
# Which binaries of a build tree link LibTorch (their NEEDED entries, as the
# dynamic loader sees them).
#   check_libtorch_linkage.sh BUILD some   bin/cadenza, libcadenza, the frontends
#                                          and acceptors link none; bin/cadenza-torch does
#   check_libtorch_linkage.sh BUILD none   nothing in bin/ or lib/ links it
set -u
build="$1" expect="$2"
links_torch() { readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*\(libtorch\|libc10\)'; }
status=0
checked=0
for file in "$build"/bin/* "$build"/lib/*.so* "$build"/lib/cadenza/plugins/*.so; do
    [ -f "$file" ] || continue
    readelf -h "$file" > /dev/null 2>&1 || continue
    name=$(basename "$file")
    case "$expect:$name" in
        some:cadenza-torch|some:libcadenza_backbone_*|some:libcadenza_codec_*|some:libcadenza_draft_*|some:test_*|some:*_speed)
            continue ;;
    esac
    checked=$((checked + 1))
    if links_torch "$file"; then echo "links LibTorch: $file"; status=1; fi
done
if [ "$expect" = some ]; then
    links_torch "$build/bin/cadenza-torch" || { echo "bin/cadenza-torch does not link LibTorch"; status=1; }
fi
[ "$checked" -gt 3 ] || { echo "only $checked binaries found under $build"; status=1; }
[ $status -eq 0 ] && echo "$checked binaries checked: none links LibTorch"
exit $status

#!/usr/bin/env bash
# Installs cadenza's dependencies from Debian's packages (only those missing)
# and builds it into build/. Safe to run again: it does only what is left.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config binutils
  libtorch-dev libopenblas0-pthread          # LibTorch on OpenBLAS, not the reference BLAS
  libtomlplusplus-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libboost-dev libboost-filesystem-dev libdlpack-dev
  libgtest-dev
  libespeak-ng-dev espeak-ng-data
  libsndfile1-dev libsoxr-dev                # audio files, resampling
  libpocketsphinx-dev pocketsphinx-en-us     # the word-error-rate judge
  flite flite1-dev festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts  # voices of the speech corpus
  fortunes fortunes-min                      # sentences of the speech corpus
  gnuplot-nox                                # benchmark plots
  python3 python3-numpy nodejs               # the Python and Node bindings (koffi comes from npm)
  dpkg-dev file                              # dpkg-shlibdeps and file, for the .deb's Depends (cpack)
  clang libclang-rt-14-dev                   # the libFuzzer targets and their sanitizers (scripts/fuzz.sh)
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

# npm ships inside some nodejs packages (NodeSource's); Debian's is a package of its own.
command -v npm >/dev/null 2>&1 || missing+=(npm)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# libtorch finds its BLAS through the libblas.so.3 alternative: make sure it is OpenBLAS.
arch_triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
blas=$(readlink -f "/usr/lib/$arch_triplet/libblas.so.3" || true)
case "$blas" in
  *openblas*) ;;
  *)
    echo "setup: libblas.so.3 is $blas; switching it to OpenBLAS"
    as_root update-alternatives --set "libblas.so.3-$arch_triplet" "/usr/lib/$arch_triplet/openblas-pthread/libblas.so.3"
    ;;
esac

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
echo "setup: built into $(pwd)/build"

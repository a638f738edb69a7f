#!/usr/bin/env bash
# llama.cpp's own llama-batched-bench, built from the llama.cpp that the installed llama-cpp-python vendors and with
# the same CMake flags, so `askchain speed` compares askchain's path with llama.cpp on one build.
# Usage: build_llama_batched_bench.sh PYTHON "CMAKE ARGS" OUTDIR
set -euo pipefail
PYTHON=$1 CMAKE_ARGS=$2 OUT=$3
VERSION=$("$PYTHON" -c "import importlib.metadata as m; print(m.version('llama_cpp_python'))")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$WORK"
tar xzf "$WORK"/llama_cpp_python-"$VERSION".tar.gz -C "$WORK"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"
eval "cmake -S '$SRC' -B '$WORK/build' -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TOOLS=ON -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF $CMAKE_ARGS" >/dev/null
cmake --build "$WORK/build" --target llama-batched-bench -j "$(nproc)" >/dev/null
mkdir -p "$OUT"
cp "$WORK/build/bin/llama-batched-bench" "$OUT/"
echo "built $OUT/llama-batched-bench (llama.cpp of llama-cpp-python $VERSION)"

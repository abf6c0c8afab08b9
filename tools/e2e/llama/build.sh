#!/usr/bin/env bash
# Builds llama.cpp's llama-server for the e2e's real node without cmake and
# without compiling llama.cpp itself: the npm package node-llama-cpp ships
# llama.cpp's source as a git bundle, and @node-llama-cpp/linux-x64 of the
# same release ships libllama, libllama-common and libggml* prebuilt. Only
# the server (tools/server, tools/mtmd, vendor hash and cpp-httplib, and an
# empty web UI, since the e2e never opens it) is compiled here and linked
# against those libraries: about 3 minutes on 2 cores, where the whole
# source with cmake is 44 (docs/testing.md).
#
# usage: build.sh VERSION OUT_DIR WORK_DIR
#   VERSION   node-llama-cpp's version (both packages are pinned to it)
#   OUT_DIR   gets llama-server and every shared library beside it
#   WORK_DIR  keeps the packages, the source and the objects between runs
#
# Needs npm (the npm registry), git, and g++.
set -euo pipefail
version=${1:?version}; out=${2:?out dir}; work=${3:?work dir}
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd); work=$(cd "$work" && pwd)
jobs=${LLAMA_BUILD_JOBS:-2}

# 1. The two npm packages, once per version.
pkg=$work/npm-$version
if [ ! -f "$pkg/.done" ]; then
  rm -rf "$pkg"; mkdir -p "$pkg"
  (cd "$pkg" && npm pack --silent "node-llama-cpp@$version" "@node-llama-cpp/linux-x64@$version" >/dev/null)
  mkdir -p "$pkg/main" "$pkg/linux-x64"
  tar -xzf "$pkg"/node-llama-cpp-"$version".tgz -C "$pkg/main"
  tar -xzf "$pkg"/node-llama-cpp-linux-x64-"$version".tgz -C "$pkg/linux-x64"
  touch "$pkg/.done"
fi
libs=$pkg/linux-x64/package/bins/linux-x64

# 2. llama.cpp's source from the package's bundle (the release the
# prebuilt libraries were built from).
src=$work/llama.cpp-$version
if [ ! -f "$src/.done" ]; then
  rm -rf "$src"
  git -c advice.detachedHead=false clone --quiet "$pkg/main/package/llama/gitRelease.bundle" "$src"
  touch "$src/.done"
fi

# 3. An empty web UI with the interface of the generated tools/ui/ui.{h,cpp}:
# the server links it for its built-in page, which the e2e never asks for.
obj=$work/obj-$version
mkdir -p "$obj"
cat > "$obj/ui.h" <<'H'
#pragma once
#include <array>
#include <string>
struct llama_ui_asset { std::string name; const unsigned char * data; std::size_t size; std::string etag; std::string type; };
const llama_ui_asset * llama_ui_find_asset(const std::string & name);
bool llama_ui_use_gzip();
const std::array<llama_ui_asset, 0> & llama_ui_get_assets();
H
cat > "$obj/ui.cpp" <<'C'
#include "ui.h"
static const std::array<llama_ui_asset, 0> assets{};
const llama_ui_asset * llama_ui_find_asset(const std::string &) { return nullptr; }
bool llama_ui_use_gzip() { return false; }
const std::array<llama_ui_asset, 0> & llama_ui_get_assets() { return assets; }
C

# 4. Compile, each object once (a warm rebuild only links). The defines are
# the ones llama.cpp's CMake sets for the server's sources.
export LLAMA_INC="-I$src/tools/server -I$src/tools/mtmd -I$src -I$src/common -I$src/vendor -I$src/include -I$src/ggml/include -I$obj"
export LLAMA_DEF="-DGGML_USE_CPU -DLLAMA_SUBPROCESS -DMTMD_VIDEO -DNDEBUG -DCPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH=1048576 -DCPPHTTPLIB_LISTEN_BACKLOG=512 -DCPPHTTPLIB_REQUEST_URI_MAX_LENGTH=32768 -DCPPHTTPLIB_TCP_NODELAY=1"
export LLAMA_OBJ=$obj LLAMA_WORK=$work
# An object is named by its source's path under WORK_DIR, so a work
# directory that moved (a new checkout, a copied bin/) still finds its
# objects; the link takes the objects of this list only (objects.txt).
object() { echo "$LLAMA_OBJ/$(echo "${1#"$LLAMA_WORK"/}" | tr / _).o"; }
compile() { # compile c|c++ SOURCE [extra flags...]
  lang=$1 f=$2; shift 2
  o=$(object "$f")
  [ -f "$o" ] && return 0
  # shellcheck disable=SC2086 # the flag lists are word lists
  if [ "$lang" = c ]; then
    nice -n 19 cc "$@" -O2 -w $LLAMA_INC -c "$f" -o "$o.tmp"
  else
    nice -n 19 c++ -x c++ "$@" -std=c++17 -O2 -w $LLAMA_DEF $LLAMA_INC -c "$f" -o "$o.tmp"
  fi
  mv "$o.tmp" "$o"
}
export -f compile object
cxx=$(
  ls "$src"/tools/server/*.cpp "$src"/tools/mtmd/models/*.cpp
  for f in mtmd mtmd-audio mtmd-image mtmd-helper mtmd-helper-gen clip; do echo "$src/tools/mtmd/$f.cpp"; done
  echo "$src/vendor/hash/hash.cpp"; echo "$src/vendor/cpp-httplib/httplib.cpp"; echo "$obj/ui.cpp"
)
echo "$cxx" | xargs -P "$jobs" -I{} bash -c 'compile c++ {}'
# As vendor/hash/CMakeLists.txt builds them: xxhash and sha256 are C
# (hash.cpp includes sha256.h extern "C"), sha1 is C++ (in a namespace).
hash=("$src/vendor/hash/xxhash/xxhash.c" "$src/vendor/hash/sha256/sha256.c" "$src/vendor/hash/sha1/sha1.c")
compile c "${hash[0]}" "-I$src/vendor/hash"
compile c "${hash[1]}" "-I$src/vendor/hash"
compile c++ "${hash[2]}" "-I$src/vendor/hash"
{ echo "$cxx"; printf '%s\n' "${hash[@]}"; } | while read -r f; do object "$f"; done > "$obj/objects.txt"

# 5. Link. The libraries go beside the executable: ggml_backend_load_all()
# looks for the libggml-cpu-<variant>.so backends in the executable's
# directory, and an rpath of $ORIGIN finds the rest there too, so the image
# needs no LD_LIBRARY_PATH.
cp -f "$libs"/*.so "$out/"
# shellcheck disable=SC2016 # $ORIGIN is the loader's, not the shell's
# shellcheck disable=SC2046 # one object path a line, none with spaces
nice -n 19 c++ -o "$out/llama-server.tmp" $(cat "$obj/objects.txt") -L"$out" \
  -l:libllama-common.so -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so \
  -Wl,-rpath,'$ORIGIN' -lpthread -ldl
mv "$out/llama-server.tmp" "$out/llama-server"

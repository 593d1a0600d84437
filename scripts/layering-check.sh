#!/usr/bin/env bash
# The include lines against the layers of docs/ARCHITECTURE.md. The build already
# refuses most back-includes (each layer's library sees only the layers below it:
# lib/CMakeLists.txt), but only in the files a build compiles; this reads every
# tracked source under lib/ and blas/, in every build configuration at once.
#
# lib/: each folder below is a layer; a file belongs to the longest one its path
# starts with (lib/cuda/kernels/mma/x.cu is in cuda/kernels). Each #include "..."
# must name a header of lib/ from lib/'s root ("core/error.hpp", never "../error.hpp"
# or "error.hpp"), in the file's own layer or one LOWER lists for it (directly or
# through another); only api/ includes the public headers (tiledmm/...).
# blas/: entry/ -> route/ -> support/ the same way (BLAS_REACH below), and nothing
# from lib/.
#
#   scripts/layering-check.sh          every tracked source under lib/ and blas/
#   scripts/layering-check.sh FILE...  those files
#
# Prints "file:line: #include "..." -- the rule" for each break, exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."

# The layers, bottom to top, each with the layers right below it (the graph of
# docs/ARCHITECTURE.md; lib/CMakeLists.txt links the same).
declare -A LOWER=(
  [core]=""
  [plan]="core"
  [registry]="core"
  [cpu]="registry"
  [cuda/runtime]="core"
  [cuda/kernels]="plan registry cuda/runtime"
  [cuda/launch]="cuda/kernels"
  [cuda/streamed]="cuda/launch"
  [cuda/backend]="cuda/streamed"
  [api]="cpu cuda/backend"
)

# Every layer a layer may include: itself and all below it.
declare -A REACH=()
reach() {
  local layer=$1 below out="$1"
  for below in ${LOWER[$layer]}; do
    out+=" $(reach "$below")"
  done
  tr ' ' '\n' <<<"$out" | sort -u | tr '\n' ' '
}
for layer in "${!LOWER[@]}"; do
  REACH[$layer]=$(reach "$layer")
done

# The layer of a path relative to lib/ (the longest layer that prefixes it), or "".
layer_of() {
  local rel=$1 best="" layer
  for layer in "${!LOWER[@]}"; do
    if [[ $rel == "$layer"/* && ${#layer} -gt ${#best} ]]; then best=$layer; fi
  done
  echo "$best"
}

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'lib/*.[ch]' 'lib/*.[ch]pp' 'lib/*.cu' 'lib/*.cuh' \
    'blas/*.[ch]' 'blas/*.[ch]pp' 'blas/*.cu' 'blas/*.cuh' 'blas/*.S')
fi

errors=0
report() {  # file line include rule
  echo "$1:$2: #include \"$3\" -- $4"
  errors=$((errors + 1))
}

check_lib() {  # file (lib/...) line include
  local file=$1 line=$2 inc=$3 rel=${1#lib/} own target
  own=$(layer_of "$rel")
  if [ -z "$own" ]; then
    report "$file" "$line" "$inc" "the file is in no layer of lib/ (docs/ARCHITECTURE.md)"
    return
  fi
  if [[ $inc == tiledmm/* ]]; then
    [ -f "include/$inc" ] || [ -f "include/$inc.in" ] ||
      report "$file" "$line" "$inc" "no such public header in include/"
    [ "$own" = api ] ||
      report "$file" "$line" "$inc" "only api/ includes the public C headers; $own/ is C++ behind it"
    return
  fi
  if [[ $inc == *..* || ! -f lib/$inc ]]; then
    report "$file" "$line" "$inc" "name a header of lib/ by its path from lib/ (e.g. \"core/error.hpp\")"
    return
  fi
  target=$(layer_of "$inc")
  if [ -z "$target" ]; then
    report "$file" "$line" "$inc" "the header is in no layer of lib/"
  elif [[ " ${REACH[$own]} " != *" $target "* ]]; then
    report "$file" "$line" "$inc" \
      "$own/ may include only $(echo ${REACH[$own]} | sed 's| |, |g') (layer $target/ is not below it)"
  fi
}

# blas/: entry/ (the exported entry points) -> route/ (where a call goes, recovery,
# the cost model) -> support/ (config, log, counters, the fallback loader). Includes
# name blas/'s files from blas/'s root ("support/log.hpp"); public headers are fine
# anywhere; lib/ never (the BLAS sees the library through its C API only).
declare -A BLAS_REACH=(
  [support]="support"
  [route]="route support"
  [entry]="entry route support"
)
check_blas() {  # file (blas/...) line include
  local file=$1 line=$2 inc=$3 rel=${1#blas/} own target
  if [[ $inc == tiledmm/* ]]; then
    [ -f "include/$inc" ] || [ -f "include/$inc.in" ] ||
      report "$file" "$line" "$inc" "no such public header in include/"
    return
  fi
  if [[ $inc == *..* || ! -f blas/$inc ]]; then
    report "$file" "$line" "$inc" \
      "blas/ includes only its own files, by their path from blas/ (\"support/log.hpp\"), and the public headers (tiledmm/...), never lib/"
    return
  fi
  own=${rel%%/*}
  target=${inc%%/*}
  if [ -z "${BLAS_REACH[$own]+x}" ] || [ -z "${BLAS_REACH[$target]+x}" ]; then
    report "$file" "$line" "$inc" "blas/ sources and headers live in entry/, route/ or support/"
  elif [[ " ${BLAS_REACH[$own]} " != *" $target "* ]]; then
    report "$file" "$line" "$inc" \
      "blas/$own/ may include only $(echo ${BLAS_REACH[$own]} | sed 's| |, |g') (blas/$target/ is above it)"
  fi
}

for file in "${files[@]}"; do
  while IFS=: read -r line text; do
    inc=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/' <<<"$text")
    case $file in
      lib/*) check_lib "$file" "$line" "$inc" ;;
      blas/*) check_blas "$file" "$line" "$inc" ;;
    esac
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
done

if [ "$errors" -gt 0 ]; then
  echo "layering-check: $errors include(s) against the layers (docs/ARCHITECTURE.md)" >&2
  exit 1
fi
echo "layering-check: ${#files[@]} files include only their own layer and those below it"

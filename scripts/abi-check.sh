#!/usr/bin/env bash
# The ABI check (docs/ABI.md). Builds this tree's library with debug info (CPU
# backend: the exported interface is the same with CUDA) in build-abi/, then:
#   1. its exports: tests/check_exports.cmake (symbol versions, header = exports);
#   2. abidiff of its abidw dump against the dump of every release of the same major
#      version in abi/: a removed or changed function, type layout or enumerator
#      value fails; new functions, enumerators with new values and members appended
#      to growable structs (struct_size first) pass (abi/tiledmm.abignore says how);
#   3. each release's own programs (examples/sgemm_basic, tests/test_correctness,
#      tests/test_api_contract), built from its commit (abi/releases) against its own
#      library, run first on that library and then on this tree's one
#      (LD_LIBRARY_PATH; ldd and LD_DEBUG=bindings must show this tree's library
#      resolving every tmm_ function they import). abi/compat-exclusions lists the
#      tests left out, each with its reason.
#
#   scripts/abi-check.sh                      all three
#   scripts/abi-check.sh --no-compat          1 and 2 only
#   scripts/abi-check.sh --reference VERSION  rebuild release VERSION's dump from its
#                                             commit: compare it with abi/, or write
#                                             it there if it is not there yet
# TMM_ABI_LIB_DIR=DIR runs step 3 against the library in DIR instead (e.g. a CUDA
# build on a GPU machine). Reports are left in build-abi/ (abidiff-*.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
if ! command -v abidiff >/dev/null || ! command -v abidw >/dev/null; then
  echo "abi-check: needs libabigail's abidw and abidiff: apt-get install abigail-tools" >&2
  exit 1
fi
# Only check() is wanted from env.sh: these builds are CPU-only on purpose, so CI's
# demand for nvcc (CI=true) does not apply to them.
CI=false source scripts/env.sh
top=$PWD
out=$top/build-abi
compat=1
reference=""
while [ $# -gt 0 ]; do
  case $1 in
    --no-compat) compat=0 ;;
    --reference) reference=${2:?--reference needs a version}; shift ;;
    *) echo "usage: scripts/abi-check.sh [--no-compat] [--reference VERSION]" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"

# One configuration for every build here: -g, so that abidw sees the types.
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILEDMM_ENABLE_CUDA=OFF
            -DTILEDMM_BUILD_BINDINGS=OFF)

# dump_abi LIBRARY HEADER_DIR OUT: the ABI of the functions the library exports and
# of the types tiledmm.h defines (the handle's struct stays opaque), without build
# paths, so that the same sources give the same file anywhere.
dump_abi() {
  abidw --no-corpus-path --no-comp-dir-path --short-locs --type-id-style hash \
    --headers-dir "$(cd "$2" && pwd)" --drop-private-types --exported-interfaces-only \
    --out-file "$3" "$1"
}

# build_release VERSION TARGET...: release VERSION built from its commit in
# $out/release-VERSION/build, without run paths (its programs load whichever
# libtiledmm LD_LIBRARY_PATH names). abi/compat-VERSION.patch, if any, is applied.
build_release() {
  local version=$1
  shift
  local commit tag
  commit=$(awk -v v="$version" '$1 == v { print $2 }' abi/releases)
  [ -n "$commit" ] || { echo "abi/releases has no line for $version" >&2; return 1; }
  if tag=$(git rev-parse -q --verify "refs/tags/v$version^{commit}"); then
    [ "$tag" = "$commit" ] || { echo "tag v$version is $tag, abi/releases says $commit" >&2; return 1; }
  fi
  if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "abi-check: $version ($commit) is not in this clone; fetching it"
    git fetch -q --depth 1 origin "$commit"
  fi
  local dir=$out/release-$version patch=abi/compat-$version.patch stamp=$commit
  [ -f "$patch" ] && stamp="$commit $(sha256sum "$patch" | cut -c1-16)"
  if [ "$(cat "$dir/src.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$dir/src" "$dir/build"
    mkdir -p "$dir/src"
    git archive "$commit" | tar -x -C "$dir/src"
    [ -f "$patch" ] && patch -s -p1 -d "$dir/src" <"$patch"
    echo "$stamp" >"$dir/src.stamp"
  fi
  cmake -S "$dir/src" -B "$dir/build" "${cmake_args[@]}" -DCMAKE_SKIP_BUILD_RPATH=ON >/dev/null
  cmake --build "$dir/build" --target "$@"
}

if [ -n "$reference" ]; then
  build_release "$reference" tiledmm
  dump_abi "$out/release-$reference/build/lib/libtiledmm.so" \
    "$out/release-$reference/src/include/tiledmm" "$out/tiledmm-$reference.abi"
  committed=abi/tiledmm-$reference.abi
  if [ ! -f "$committed" ]; then
    cp "$out/tiledmm-$reference.abi" "$committed"
    echo "wrote $committed: commit it with the line in abi/releases"
  elif cmp -s "$out/tiledmm-$reference.abi" "$committed"; then
    echo "PASS $committed is reproduced byte for byte"
  elif abidiff "$committed" "$out/tiledmm-$reference.abi"; then
    echo "PASS $committed is reproduced (same ABI; the text differs: another abidw version?)"
  else
    echo "FAIL $committed differs from a dump of its release (report above)"
    exit 1
  fi
  exit 0
fi

# ---- this tree's library ------------------------------------------------------
cmake -S . -B "$out/current" "${cmake_args[@]}" -DTILEDMM_BUILD_TESTS=OFF \
  -DTILEDMM_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$out/current" --target tiledmm
lib=$out/current/lib/libtiledmm.so
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
major=${soname##*.so.}
echo "=== $soname ($(readlink -f "$lib" | xargs basename)) of this tree"

check exports cmake -DLIB="$lib" -P tests/check_exports.cmake
dump_abi "$lib" include/tiledmm "$out/tiledmm-current.abi"

# versioned_view DUMP NODE OUT: an unversioned release's dump as its symbols are bound
# at run time, each at its default version NODE (abi/tiledmm.abignore says why).
versioned_view() {
  if grep -q "<elf-symbol [^>]* version=" "$1"; then
    cp "$1" "$3"
    return
  fi
  sed -e "s/<elf-symbol name='\(tmm_[A-Za-z0-9_]*\)' type=/<elf-symbol name='\1' version='$2' is-default-version='yes' type=/" \
      -e "s/elf-symbol-id='\(tmm_[A-Za-z0-9_]*\)'/elf-symbol-id='\1@@$2'/" "$1" >"$3"
  [ "$(grep -c "<elf-symbol " "$3")" = "$(grep -c "<elf-symbol [^>]* version='$2'" "$3")" ] ||
    { echo "abi-check: $1 has symbols other than tmm_ ones; cannot version them" >&2; return 1; }
}

# The growable structs of a dump, as "name=size_in_bits": those whose first member
# is struct_size.
growable_structs() {
  awk -v q="'" '
    function attr(line, key,   s) {
      s = line
      if (!sub(".*[ <]" key "=" q, "", s)) return ""
      sub(q ".*", "", s)
      return s
    }
    /<class-decl / && !/\/>[ \t]*$/ {
      if (++depth == 1) { name = attr($0, "name"); size = attr($0, "size-in-bits"); first = 1 }
      next
    }
    /<\/class-decl>/ { depth--; next }
    depth == 1 && first && /<var-decl / {
      first = 0
      if (attr($0, "name") == "struct_size") printf "%s=%s ", name, size
    }' "$1"
}

# cut_growable "name=size ..." DUMP OUT: DUMP with each named struct cut back to its
# old size (members from that offset on dropped), so that abidiff compares the old
# part of a growable struct in full and never sees what was appended after it.
cut_growable() {
  awk -v q="'" -v limits="$1" '
    function attr(line, key,   s) {
      s = line
      if (!sub(".*[ <]" key "=" q, "", s)) return ""
      sub(q ".*", "", s)
      return s
    }
    BEGIN {
      n = split(limits, pairs, " ")
      for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); limit[kv[1]] = kv[2] }
    }
    skip { if (/<\/data-member>/) skip = 0; next }
    /<class-decl / && !/\/>[ \t]*$/ {
      if (++depth == 1) {
        cut = ""
        name = attr($0, "name"); size = attr($0, "size-in-bits")
        if ((name in limit) && size + 0 > limit[name] + 0) {
          cut = limit[name]
          sub("size-in-bits=" q size q, "size-in-bits=" q cut q)
        }
      }
      print
      next
    }
    /<\/class-decl>/ { if (--depth == 0) cut = ""; print; next }
    depth == 1 && cut != "" && /<data-member / && attr($0, "layout-offset-in-bits") + 0 >= cut + 0 {
      skip = 1
      next
    }
    { print }' "$2" >"$3"
}

# abi_diff VERSION: this tree's dump against release VERSION's (its view, and this
# tree's dump with the growable structs cut back); passes only on abidiff's exit
# status 0 once the allowed additions are suppressed.
abi_diff() {
  local rc=0
  abidiff --suppressions abi/tiledmm.abignore "$out/release-view-$1.abi" \
    "$out/current-vs-$1.abi" >"$out/abidiff-$1.txt" || rc=$?
  cat "$out/abidiff-$1.txt"
  echo "abidiff exit status $rc$( ((rc & 1)) && echo ", error")$( ((rc & 2)) && echo ", usage error")$( ((rc & 4)) && echo ", ABI change")$( ((rc & 8)) && echo ", incompatible change")"
  return "$rc"
}

dumps=$(ls abi/tiledmm-"$major".*.abi 2>/dev/null | sort -V || true)
[ -n "$dumps" ] || echo "note: no release dump of major version $major in abi/: nothing to compare"
for dump in $dumps; do
  version=$(basename "$dump" .abi)
  version=${version#tiledmm-}
  view=$out/release-view-$version.abi
  versioned_view "$dump" "TILEDMM_${version%.*}" "$view"
  growable=$(growable_structs "$view")
  cut_growable "$growable" "$out/tiledmm-current.abi" "$out/current-vs-$version.abi"
  # Everything that changed, additions included (information only).
  abidiff "$view" "$out/tiledmm-current.abi" >"$out/abidiff-$version-all.txt" || true
  echo "--- against $version: added (information; build-abi/abidiff-$version-all.txt has all)"
  grep -E "^ *\[A\]" "$out/abidiff-$version-all.txt" | sed 's/^ */    /' || echo "    nothing"
  [ -z "$growable" ] || echo "    growable structs compared up to their $version size (bits): $growable"
  check "abidiff_$version" abi_diff "$version"
done

# ---- the releases' programs on this tree's library ----------------------------
if [ "$compat" = 1 ]; then
  newdir=$(cd "${TMM_ABI_LIB_DIR:-$out/current/lib}" && pwd)
  newlib=$newdir/libtiledmm.so.$major
  [ -e "$newlib" ] || { echo "no $newlib" >&2; exit 1; }

  # binds_new PROGRAM: PROGRAM loads $newlib, and the dynamic linker binds every tmm_
  # function it imports there (LD_BIND_NOW: all at start-up).
  binds_new() {
    local prog=$1 found imports bound
    found=$(LD_LIBRARY_PATH=$newdir ldd "$prog" | awk '$1 ~ /^libtiledmm\.so/ { print $3 }')
    echo "ldd: $(basename "$prog") loads $found"
    [ "$(readlink -f "$found")" = "$(readlink -f "$newlib")" ] || return 1
    imports=$(nm -D --undefined-only "$prog" | awk '$2 ~ /^tmm_/ { sub(/@.*/, "", $2); print $2 }' | sort -u)
    bound=$(LD_DEBUG=bindings LD_BIND_NOW=1 LD_LIBRARY_PATH=$newdir "$prog" --gtest_list_tests 2>&1 >/dev/null |
      awk -v lib="$newlib" -v prog="$prog" '
        index($0, "binding file " prog " [0] to " lib " [0]: normal symbol `tmm_") {
          s = $0; sub(/.*normal symbol `/, "", s); sub(/'"'"'.*/, "", s); print s
        }' | sort -u)
    echo "imports $(echo "$imports" | wc -w) tmm_ functions, $(echo "$bound" | wc -w) bound to $newlib"
    [ "$imports" = "$bound" ] || echo "not bound there: $(comm -23 <(echo "$imports") <(echo "$bound") | paste -sd' ')"
    [ -n "$imports" ] && [ "$imports" = "$bound" ]
  }

  releases=$(awk -v m="$major" '$1 ~ /^[0-9]/ && index($1, m ".") == 1 { print $1 }' abi/releases)
  for version in $releases; do
    echo "=== $version's programs on this tree's library ($newlib)"
    build_release "$version" tiledmm sgemm_basic test_correctness test_api_contract
    old=$out/release-$version/build
    for prog in examples/sgemm_basic tests/test_correctness tests/test_api_contract; do
      name=$(basename "$prog")
      args=()
      excluded=$(awk -v v="$version" -v p="$name" '$1 == v && $2 == p { print $3 }' abi/compat-exclusions | paste -sd:)
      if [ -n "$excluded" ]; then
        args=(--gtest_filter="-$excluded")
        echo "    $name: left out (abi/compat-exclusions): $excluded"
      fi
      check "${version}_${name}_on_its_own_library" env LD_LIBRARY_PATH="$old/lib" "$old/$prog" "${args[@]}"
      check "${version}_${name}_binds_this_library" binds_new "$old/$prog"
      check "${version}_${name}_on_this_library" env LD_LIBRARY_PATH="$newdir" "$old/$prog" "${args[@]}"
    done
  done
fi

echo "abi-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

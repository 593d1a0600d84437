#!/usr/bin/env bash
# Checks that a refactor leaves the CUDA kernels' generated code unchanged, without a GPU.
#
#   scripts/ptx-identity.sh emit BUILD_DIR OUT_DIR   PTX of every kernel file into OUT_DIR
#   scripts/ptx-identity.sh compare BEFORE AFTER     exit 0 when the two sets match
#
# emit takes each lib/cuda/kernels/**/*.cu compile line from BUILD_DIR's Ninja commands,
# so the flags, defines and include paths are the build's own, and asks nvcc for PTX of
# sm_90a instead of an object. compare normalises what a changed parameter type is
# allowed to change and keeps everything else:
#   - mangled names (`_Z...`), so a kernel taking GemmView<float> instead of GemmProblem
#     compares equal;
#   - virtual register numbers, renumbered per function in order of first use: a
#     by-value struct with fields the kernel never reads reserves numbers for them;
#   - the byte size of a by-value struct parameter (`_param_0[128]` against `[96]`),
#     which compare lists separately, since a smaller struct is the point of a view.
# Every instruction, operand and parameter offset must match. Run emit on the tree
# before a change and after it, then compare.
#
#   scripts/ptx-identity.sh compare BEFORE AFTER --without-double
# first sets aside, in both sets, every entry, function and module-scope declaration
# whose name (demangled by c++filt) mentions double: the kernels a change adds over
# double, so that the float kernels beside them are compared alone. Block labels then
# lose their function's number (it counts the entries set aside). The count set aside
# is printed per file.
set -euo pipefail

emit() {
  local build=$1 out=$2
  mkdir -p "$out"
  local line src name
  while IFS= read -r line; do
    src=$(sed -E 's/.* -c ([^ ]+) -o .*/\1/' <<<"$line")
    name=$(sed -E 's|.*/lib/cuda/kernels/||; s|/|_|g; s|\.cu$||' <<<"$src")
    # The object, its dependency file and the build's code list give way to PTX.
    line=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/--generate-code=[^ ]+/-arch=sm_90a/;
                    s/ -c ([^ ]+) -o [^ ]+$/ -ptx \1 -o /' <<<"$line")
    echo "ptx $name"
    (cd "$build" && eval "$line $out/$name.ptx")
  done < <(ninja -C "$build" -t commands | grep -E ' -c [^ ]*/lib/cuda/kernels/.*\.cu -o ' | sort -u)
}

# The PTX with names, register numbers and parameter sizes normalised (see above).
normalise() {
  python3 - "$1" <<'PY'
import re, sys
names = re.compile(r"_Z[0-9A-Za-z_]+?(_param_[0-9]+)?(?![0-9A-Za-z_])")
regs = re.compile(r"%([a-z]+)([0-9]+)")
seen = {}
for line in open(sys.argv[1]):
    line = names.sub(lambda m: "SYM" + (m.group(1) or ""), line)
    if re.match(r"\s*\.(visible\s+)?(entry|func)\b", line):
        seen = {}  # a new function: its registers numbered afresh
    if re.match(r"\s*\.reg\b", line):
        line = re.sub(r"<[0-9]+>", "<N>", line)
    else:
        line = regs.sub(lambda m: "%%%s#%d" % (m.group(1), seen.setdefault(m.group(0), len(seen))), line)
    line = re.sub(r"(SYM_param_[0-9]+)\[[0-9]+\]", r"\1[SIZE]", line)
    sys.stdout.write(line)
PY
}

# The PTX without the entries, functions and module-scope declarations whose names
# demangle to something mentioning double; prints to stdout, the count to stderr.
without_double() {
  python3 - "$1" <<'PY'
import re, subprocess, sys
lines = open(sys.argv[1]).read().split("\n")
# Chunks: an entry or function from its header to its closing brace at column 0;
# every other line on its own.
chunks, i = [], 0
while i < len(lines):
    if re.match(r"\s*(\.visible\s+|\.weak\s+)?\.(entry|func)\b", lines[i]):
        j = i
        while j < len(lines) and lines[j] != "}":
            j += 1
        chunks.append(lines[i:j + 1])
        i = j + 1
    else:
        chunks.append([lines[i]])
        i += 1
symbol = re.compile(r"_Z[0-9A-Za-z_]+")
names = sorted({m for c in chunks for l in c for m in symbol.findall(l)})
demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                           text=True, check=True).stdout.split("\n") if names else []
double = {n for n, d in zip(names, demangled) if "double" in d}
kept, dropped = [], 0
for c in chunks:
    if any(m in double for l in c for m in symbol.findall(l)):
        dropped += 1
    else:
        kept.extend(c)
# Block labels ($L__BB<function>_<block>) count the functions before theirs, those set
# aside included: the function's number goes, the block's stays.
sys.stdout.write(re.sub(r"\$L__BB[0-9]+_", "$L__BB_", "\n".join(kept)))
sys.stderr.write(str(dropped))
PY
}

# Parameter sizes that differ between the two files (listed, not failed).
param_sizes() {
  grep -oE '\.b8 _Z[0-9A-Za-z_]+_param_[0-9]+\[[0-9]+\]' "$1" | sed -E 's/.*\[([0-9]+)\]/\1/' |
    sort | uniq -c | tr -s ' ' | tr '\n' ';'
}

compare() {
  local before=$1 after=$2 filter=${3:-} status=0 f name work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  if [ -n "$filter" ] && [ "$filter" != "--without-double" ]; then
    echo "unknown option $filter" >&2
    return 2
  fi
  for f in "$before"/*.ptx; do
    name=$(basename "$f")
    if [ ! -f "$after/$name" ]; then
      echo "MISSING $name"
      status=1
      continue
    fi
    local b=$f a=$after/$name
    if [ -n "$filter" ]; then
      without_double "$f" >"$work/before.ptx" 2>"$work/count"
      without_double "$after/$name" >"$work/after.ptx" 2>"$work/count"
      echo "        $name: $(cat "$work/count") double entries and declarations set aside"
      b=$work/before.ptx a=$work/after.ptx
    fi
    normalise "$b" >"$work/before"
    normalise "$a" >"$work/after"
    if diff -q "$work/before" "$work/after" >/dev/null; then
      echo "SAME    $name ($(grep -c . "$b") lines)"
      if [ "$(param_sizes "$b")" != "$(param_sizes "$a")" ]; then
        echo "        struct parameter sizes (count size): $(param_sizes "$b") -> $(param_sizes "$a")"
      fi
    else
      echo "DIFFERS $name"
      diff "$work/before" "$work/after" | head -20
      status=1
    fi
  done
  return $status
}

case "${1:-}" in
  emit) emit "$2" "$3" ;;
  compare) compare "$2" "$3" "${4:-}" ;;
  *)
    echo "usage: $0 emit BUILD_DIR OUT_DIR | compare BEFORE AFTER [--without-double]" >&2
    exit 2
    ;;
esac

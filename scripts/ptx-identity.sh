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

# Parameter sizes that differ between the two files (listed, not failed).
param_sizes() {
  grep -oE '\.b8 _Z[0-9A-Za-z_]+_param_[0-9]+\[[0-9]+\]' "$1" | sed -E 's/.*\[([0-9]+)\]/\1/' |
    sort | uniq -c | tr -s ' ' | tr '\n' ';'
}

compare() {
  local before=$1 after=$2 status=0 f name work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  for f in "$before"/*.ptx; do
    name=$(basename "$f")
    if [ ! -f "$after/$name" ]; then
      echo "MISSING $name"
      status=1
      continue
    fi
    normalise "$f" >"$work/before"
    normalise "$after/$name" >"$work/after"
    if diff -q "$work/before" "$work/after" >/dev/null; then
      echo "SAME    $name ($(grep -c . "$f") lines)"
      if [ "$(param_sizes "$f")" != "$(param_sizes "$after/$name")" ]; then
        echo "        struct parameter sizes (count size): $(param_sizes "$f") -> $(param_sizes "$after/$name")"
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
  compare) compare "$2" "$3" ;;
  *)
    echo "usage: $0 emit BUILD_DIR OUT_DIR | compare BEFORE AFTER" >&2
    exit 2
    ;;
esac

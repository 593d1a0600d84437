#!/usr/bin/env bash
# Checks on a machine with the CUDA toolkit that a refactor left the kernels' machine
# code (SASS) unchanged: the GPU-side gate of a change such as the typed kernel views
# of docs/design/double-precision.md, step 1 (scripts/ptx-identity.sh is the one
# without cuobjdump).
#
#   scripts/sass-identity.sh BEFORE.so AFTER.so    exit 0 when every kernel matches
#
# Both libraries are dumped with `cuobjdump -sass`, cut into functions, and matched by
# demangled name, where a kernel parameter of type tiledmm::GemmProblem in BEFORE may
# read tiledmm::GemmView<float> in AFTER. Compared: every instruction and operand, with
# what a smaller by-value parameter is allowed to change normalised away: addresses,
# encodings, and the constant-bank offsets of kernel parameters (c[0x0][0x210] and up
# on sm_90: a parameter after a shorter struct moves down). A kernel templated on its
# element type since BEFORE matches by its float instantiation; AFTER's kernels over
# double are counted apart. Prints one line per kernel that differs or exists on one
# side only, and the counts.
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,15p "$0"; exit 2; }
command -v cuobjdump >/dev/null || { echo "sass-identity: no cuobjdump on PATH"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cuobjdump -sass "$1" >"$tmp/before.sass"
cuobjdump -sass "$2" >"$tmp/after.sass"
python3 - "$tmp/before.sass" "$tmp/after.sass" <<'EOF'
import re, subprocess, sys

def functions(path):
    """name -> normalised instruction lines, for every Function of a cuobjdump dump."""
    out, name, body = {}, None, []
    def close():
        if name is not None:
            out.setdefault(name, []).append(body)
    for line in open(path):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            close()
            name, body = m.group(1), []
            continue
        if name is None:
            continue
        m = re.match(r'\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*(/\*.*\*/)?\s*$', line)
        if not m or not m.group(1):
            continue
        ins = m.group(1)
        ins = re.sub(r'c\[0x0\]\[(0x[0-9a-f]+)\]',
                     lambda c: 'c[0x0][PARAM]' if int(c.group(1), 16) >= 0x210 else c.group(0), ins)
        body.append(ins)
    close()
    return out

def demangle(names):
    res = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True, text=True)
    return dict(zip(names, res.stdout.split('\n')))

before, after = functions(sys.argv[1]), functions(sys.argv[2])
dn_b, dn_a = demangle(list(before)), demangle(list(after))
def canonical(name):
    """A kernel's name with what a templating on the element type adds taken out: a
    leading `float` template argument (tiled_kernel<float, 8, ...> is tiled_kernel<8, ...>),
    a trailing one (tail_reduce_kernel<128, 256, 8, false, false, float>(...) is
    tail_reduce_kernel<128, 256, 8, false, false>(...)), a lone one
    (scale_kernel<float>(...) is scale_kernel(...)), and the return type that demangling
    gives templates only."""
    name = name.replace('tiledmm::GemmProblem', 'tiledmm::GemmView<float>')
    name = re.sub(r'^void ', '', name)  # a template's demangled name has its return type
    name = re.sub(r'<float, ', '<', name)
    name = re.sub(r', float>\(', '>(', name)
    return re.sub(r'(\w)<float>\(', r'\1(', name)

key_b = {canonical(dn_b[n]): n for n in before}
key_a = {canonical(dn_a[n]): n for n in after}
same = differ = added_double = 0
for key in sorted(set(key_b) | set(key_a)):
    if key not in key_b and 'double' in key:
        added_double += 1  # a kernel over double, new beside its float twin
        continue
    if key not in key_b or key not in key_a:
        print(('only after:  ' if key in key_a else 'only before: ') + key)
        differ += 1
        continue
    b, a = before[key_b[key]], after[key_a[key]]
    if b == a:
        same += 1
    else:
        differ += 1
        n = sum(len(x) for x in b), sum(len(x) for x in a)
        print(f'DIFFERS ({n[0]} / {n[1]} instructions): {key}')
print(f'sass-identity: {same} kernels identical, {differ} differ or unmatched, '
      f'{added_double} new kernels over double')
sys.exit(1 if differ else 0)
EOF

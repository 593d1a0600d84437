#!/usr/bin/env bash
# Builds the packages (scripts/package.sh), checks them, installs them and uses
# them with nothing from the build tree:
#   - lintian on every .deb (errors fail; warnings are explained in packaging/LINTIAN.md);
#   - rpm -qpil and rpm -qpR on every .rpm;
#   - the .debs installed for real when run as root (removed again at exit), else
#     unpacked into a scratch root; then a C program built with pkg-config, a CMake
#     project with find_package(tiledmm), the Java example against the installed jar
#     and the C# example against the installed assembly; libtiledmm_blas preloaded
#     into examples/blas_bench built against the system BLAS only (-lblas), and a C
#     program linked with -ltiledmm_blas using its query API;
#   - the .rpms unpacked with rpm2cpio into a scratch root, and the C program linked
#     and run against it.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
scripts/package.sh >/dev/null
pkgs=$top/build/packages
work=$(mktemp -d)
source scripts/env.sh
export CHECK_LOG=$work/log  # the last check's output, for the summaries below
export LINTIAN_PROFILE=debian
lint() {
  for deb in "$pkgs"/*.deb; do
    lintian --fail-on error --tag-display-limit 0 "$deb" 2>&1 | grep -v "root privileges" || true
    lintian --fail-on error "$deb" >/dev/null 2>&1 || { echo "lintian errors in $deb"; return 1; }
  done
}
inspect_rpms() {
  for rpm in "$pkgs"/*.rpm; do rpm -qpil "$rpm"; echo "requires:"; rpm -qpR "$rpm"; done
}
check lintian lint
cat "$work/log"
check rpm_inspect inspect_rpms
grep -E "^(Name|Version|Release|requires:|/usr/lib64/libtiledmm|libtiledmm1 = |libc\.so|libstdc)" "$work/log" | head -30 || true

# ---- Debian packages: installed for real as root, else in a scratch root ------
root=""
if [ "$(id -u)" -eq 0 ]; then
  trap 'apt-get purge -y -qq libtiledmm1 libtiledmm-dev libtiledmm-java libtiledmm-cil tiledmm-tools libtiledmm-blas1 >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  check deb_install env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkgs"/*.deb
else
  trap 'rm -rf "$work"' EXIT
  root=$work/debroot
  for deb in "$pkgs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
  sed -i "s|^prefix=/usr|prefix=$root/usr|" "$root"/usr/lib/*/pkgconfig/tiledmm.pc
  export LD_LIBRARY_PATH=$(dirname "$root"/usr/lib/*/libtiledmm.so.1)
  export PKG_CONFIG_PATH=$(dirname "$root"/usr/lib/*/pkgconfig/tiledmm.pc)
  export CMAKE_PREFIX_PATH=$root/usr
fi
cp examples/sgemm_basic.c examples/java/Example.java examples/csharp/Example.cs \
  examples/blas_bench.c tests/blas/header_blas_c.c "$work"/
cd "$work"
check deb_c_pkgconfig sh -c 'cc sgemm_basic.c $(pkg-config --cflags --libs tiledmm) -lm -o c_example && ./c_example'
check deb_cmake_find_package sh -c "cmake -S '$top/tests/package' -B cmake_consumer -DEXAMPLE_SOURCE='$work/sgemm_basic.c' >/dev/null && cmake --build cmake_consumer >/dev/null && ./cmake_consumer/consumer"
jar=$root/usr/share/java/tiledmm.jar
jni=$(dirname "$root"/usr/lib/*/jni/libtiledmm_jni.so)
check deb_java_example sh -c "javac -cp '$jar' -d java Example.java && java -Dtiledmm.library.path='$jni' -cp '$jar:java' Example"
dll=$root/usr/lib/cli/tiledmm/TiledMM.dll
check deb_csharp_example sh -c "mcs -nologo -r:'$dll' -out:Example.exe Example.cs && MONO_PATH='$(dirname "$dll")' mono Example.exe"
check deb_tools_demo sh -c "'$root/usr/bin/tmm_demo' --cpu --sizes 64,128 --budget 30"
blas_lib=$(echo "$root"/usr/lib/*/libtiledmm_blas.so.1)
check deb_blas_preload sh -c "cc blas_bench.c \$(pkg-config --cflags tiledmm) -lblas -ldl -lm \
  -o blas_bench && LD_PRELOAD='$blas_lib' TILEDMM_BLAS_THRESHOLD=all TILEDMM_BLAS_BACKEND=cpu \
  ./blas_bench --sizes 64,150 --repeats 2 --expect-tiledmm"
check deb_blas_link sh -c "cc header_blas_c.c \$(pkg-config --cflags --libs tiledmm) -ltiledmm_blas \
  -o blas_link && ./blas_link"

# ---- RPM packages: unpacked into a scratch root -------------------------------
rroot=$work/rpmroot
mkdir -p "$rroot"
for rpm in "$pkgs"/*.rpm; do (cd "$rroot" && rpm2cpio "$rpm" | cpio -idm --quiet); done
check rpm_layout test -e "$rroot/usr/lib64/libtiledmm.so.1" -a -e "$rroot/usr/lib64/pkgconfig/tiledmm.pc" \
  -a -e "$rroot/usr/lib64/libtiledmm_blas.so.1"
check rpm_c_example sh -c "cc sgemm_basic.c -I'$rroot/usr/include' -L'$rroot/usr/lib64' -ltiledmm -lm -o rpm_example && LD_LIBRARY_PATH='$rroot/usr/lib64' ./rpm_example"

echo "packages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Builds the .deb and .rpm packages into build/packages/, reusing the build in
# build/ (scripts/test.sh makes the same one). Debian packages install libraries to
# the multiarch folder, RPMs to lib64: only the install layout changes between the
# two, so nothing is compiled twice.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
rm -rf build/packages
configure() { tmm_configure -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR="$1"; }
configure "lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
cmake --build build
(cd build && cpack -G DEB)
configure lib64
(cd build && cpack -G RPM)
ls -l build/packages/*.deb build/packages/*.rpm

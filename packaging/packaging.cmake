# Install rules for the development files, and the CPack description of the
# packages. Everything the packages say about themselves derives from
# project(VERSION ...) and lives in this folder.
#
# Components become packages (Debian names; RPM uses the same):
#   runtime -> libtiledmm1       libtiledmm.so.1 (SONAME) and the versioned file
#   dev     -> libtiledmm-dev    header, libtiledmm.so, tiledmm.pc, CMake package
#   java    -> libtiledmm-java   tiledmm.jar and libtiledmm_jni.so
#   csharp  -> libtiledmm-cil    TiledMM.dll and libtiledmm_csharp.so
#   tools   -> tiledmm-tools     tmm_demo, the seed reports' experiment
#   blas    -> libtiledmm-blas1  libtiledmm_blas.so.1, the drop-in BLAS front end (its
#                                header and unversioned link are in libtiledmm-dev)
include(CMakePackageConfigHelpers)

set(TILEDMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tiledmm)
configure_file(${CMAKE_CURRENT_LIST_DIR}/tiledmm.pc.in ${PROJECT_BINARY_DIR}/tiledmm.pc @ONLY)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tiledmmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tiledmmConfig.cmake INSTALL_DESTINATION ${TILEDMM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tiledmmConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tiledmm.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/tiledmmConfig.cmake
              ${PROJECT_BINARY_DIR}/tiledmmConfigVersion.cmake
  DESTINATION ${TILEDMM_CMAKE_DIR} COMPONENT dev)
install(EXPORT tiledmmTargets NAMESPACE tiledmm:: DESTINATION ${TILEDMM_CMAKE_DIR}
  COMPONENT dev)

# Debian policy: every package carries its copyright file and changelog.
set(TILEDMM_COMPONENTS runtime dev)
if(TILEDMM_BUILD_JAVA)
  list(APPEND TILEDMM_COMPONENTS java)
endif()
if(TILEDMM_BUILD_CSHARP)
  list(APPEND TILEDMM_COMPONENTS csharp)
endif()
if(TILEDMM_BUILD_EXAMPLES)
  list(APPEND TILEDMM_COMPONENTS tools)
endif()
if(TILEDMM_BUILD_BLAS)
  list(APPEND TILEDMM_COMPONENTS blas)
endif()
set(pkg_runtime libtiledmm${PROJECT_VERSION_MAJOR})
set(pkg_dev libtiledmm-dev)
set(pkg_java libtiledmm-java)
set(pkg_csharp libtiledmm-cil)
set(pkg_tools tiledmm-tools)
set(pkg_blas libtiledmm-blas${PROJECT_VERSION_MAJOR})
set(changelog ${PROJECT_BINARY_DIR}/changelog.Debian.gz)
add_custom_command(OUTPUT ${changelog}
  COMMAND gzip -9 -n -c ${CMAKE_CURRENT_LIST_DIR}/changelog > ${changelog}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/changelog)
add_custom_target(tiledmm_changelog ALL DEPENDS ${changelog})
set(manpage ${PROJECT_BINARY_DIR}/tmm_demo.1.gz)
add_custom_command(OUTPUT ${manpage}
  COMMAND gzip -9 -n -c ${CMAKE_CURRENT_LIST_DIR}/tmm_demo.1 > ${manpage}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/tmm_demo.1)
add_custom_target(tiledmm_manpage ALL DEPENDS ${manpage})
if(TILEDMM_BUILD_EXAMPLES)
  install(FILES ${manpage} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
endif()
foreach(component IN LISTS TILEDMM_COMPONENTS)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright ${changelog}
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${pkg_${component}} COMPONENT ${component})
endforeach()

# ---- CPack -------------------------------------------------------------------
set(CPACK_PACKAGE_NAME tiledmm)
set(CPACK_PACKAGE_VENDOR "The tiledmm developers")
set(CPACK_PACKAGE_CONTACT "tiledmm developers <tiledmm@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PROJECT_HOMEPAGE_URL}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL ${TILEDMM_COMPONENTS})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/packages)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack_options.cmake)

set(desc_common "tiledmm multiplies single-precision matrices (SGEMM) on NVIDIA GPUs\n\
with hand-written CUDA kernels, from the classic tiled lesson to a\n\
register-blocked kernel that runs close to cuBLAS, and on the CPU when no GPU\n\
is present. It has a plain C ABI and Java and C# bindings.")
set(TILEDMM_DESC_runtime "${desc_common}\n\nThis package contains the shared library.")
set(TILEDMM_DESC_dev "${desc_common}\n\nThis package contains the header, pkg-config file and CMake package.")
set(TILEDMM_DESC_java "${desc_common}\n\nThis package contains the Java binding (org.tiledmm) and its JNI library.")
set(TILEDMM_DESC_csharp "${desc_common}\n\nThis package contains the C# binding (TiledMM.dll) for Mono.")
set(TILEDMM_DESC_tools "${desc_common}\n\nThis package contains tmm_demo, the seed reports' experiment.")
set(TILEDMM_DESC_blas "${desc_common}\n\nThis package contains libtiledmm_blas, a drop-in front end for the\n\
system BLAS: preloaded (LD_PRELOAD) into a program that calls sgemm_ or\n\
cblas_sgemm (NumPy, R, Octave, LAPACK, ScaLAPACK), it sends large\n\
single-precision products to tiledmm and every other call to the BLAS\n\
underneath.")
foreach(component IN LISTS TILEDMM_COMPONENTS)
  string(TOUPPER ${component} up)
  set(CPACK_DEBIAN_${up}_PACKAGE_NAME ${pkg_${component}})
  set(CPACK_RPM_${up}_PACKAGE_NAME ${pkg_${component}})
  set(CPACK_COMPONENT_${up}_DESCRIPTION "${TILEDMM_DESC_${component}}")
  set(CPACK_DEBIAN_${up}_FILE_NAME DEB-DEFAULT)
  set(CPACK_RPM_${up}_FILE_NAME RPM-DEFAULT)
endforeach()

set(exact "${pkg_runtime} (= ${PROJECT_VERSION}-1)")
# Debian
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)  # Debian revision: 1.0.0-1
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)
# CPack applies this to every package; it warns (a CMake dev warning, harmless) that
# the JNI and P/Invoke modules have no SONAME: they are plugins, not in shlibs.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The CUDA runtime is linked statically; the driver's libcuda.so.1 is loaded at run
# time when present. Recommended, not required: without it the CPU backend serves.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "libcuda1 | nvidia-cuda-driver")
# ldconfig runs through the trigger; the postinst and postrm stand in for the ones
# CPack would write, which call ldconfig themselves (lintian: maintscript-calls-ldconfig).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${CMAKE_CURRENT_LIST_DIR}/debian/triggers
  ${CMAKE_CURRENT_LIST_DIR}/debian/postinst
  ${CMAKE_CURRENT_LIST_DIR}/debian/postrm)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${exact}")
set(CPACK_DEBIAN_JAVA_PACKAGE_SECTION java)
# Java policy: a library does not depend on a JRE; the application that uses it does.
set(CPACK_DEBIAN_JAVA_PACKAGE_DEPENDS "${exact}, libc6 (>= 2.14)")
set(CPACK_DEBIAN_CSHARP_PACKAGE_SECTION cli-mono)
set(CPACK_DEBIAN_CSHARP_PACKAGE_DEPENDS "${exact}, libc6 (>= 2.14), mono-runtime (>= 6)")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION science)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${exact}, libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1")
# libtiledmm_blas loads the real BLAS at run time (dlopen), so it needs one without
# linking it: recommended, like the driver for libtiledmm1. Its own library gets the
# runtime package's ldconfig trigger and scripts (lintian: lacks-ldconfig-trigger).
set(CPACK_DEBIAN_BLAS_PACKAGE_DEPENDS "${exact}, libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1")
set(CPACK_DEBIAN_BLAS_PACKAGE_RECOMMENDS "libblas3 | libblas.so.3")
set(CPACK_DEBIAN_BLAS_PACKAGE_CONTROL_EXTRA
  ${CMAKE_CURRENT_LIST_DIR}/debian/triggers
  ${CMAKE_CURRENT_LIST_DIR}/debian/postinst
  ${CMAKE_CURRENT_LIST_DIR}/debian/postrm)
set(CPACK_DEBIAN_BLAS_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# RPM
set(CPACK_RPM_PACKAGE_LICENSE MIT)
set(CPACK_RPM_PACKAGE_GROUP "System Environment/Libraries")
set(CPACK_RPM_PACKAGE_AUTOREQPROV ON)
# No driver requirement in the RPM either: libcuda.so.1 is loaded at run time (so
# automatic requirements do not list it) and the CPU backend serves without it.
set(CPACK_RPM_DEV_PACKAGE_REQUIRES "${pkg_runtime} = ${PROJECT_VERSION}")
set(CPACK_RPM_DEV_PACKAGE_GROUP "Development/Libraries")
set(CPACK_RPM_JAVA_PACKAGE_REQUIRES "${pkg_runtime} = ${PROJECT_VERSION}, java-headless >= 11")
set(CPACK_RPM_CSHARP_PACKAGE_REQUIRES "${pkg_runtime} = ${PROJECT_VERSION}, mono-core >= 6")
set(CPACK_RPM_TOOLS_PACKAGE_REQUIRES "${pkg_runtime} = ${PROJECT_VERSION}")
set(CPACK_RPM_BLAS_PACKAGE_REQUIRES "${pkg_runtime} = ${PROJECT_VERSION}")
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
  /usr/lib/cli /usr/share/java /usr/lib64/jni /usr/lib64/cmake /usr/lib64/pkgconfig
  /usr/share/doc)

include(CPack)

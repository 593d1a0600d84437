# Read by cpack for each generator: RPM has no Debian changelog in /usr/share/doc.
if(CPACK_GENERATOR STREQUAL "RPM")
  set(CPACK_RPM_PACKAGE_RELEASE 1)
  set(CPACK_RPM_PACKAGE_RELEASE_DIST OFF)
endif()

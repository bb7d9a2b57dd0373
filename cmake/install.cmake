# Installation and packaging (README "Install"): cmake --install puts the
# CLI, the recorder, the replay program, the public headers, the static
# core library with a CMake package and a pkg-config file under the prefix;
# cpack -G DEB makes a Debian package of the same.
#
# The CLI finds its companions relative to its own location
# (bin/../LIBDIR/libtracefold.so, bin/../LIBEXECDIR/tracefold/tracefold-replay),
# so an installed tree works wherever it is unpacked.
include(CMakePackageConfigHelpers)

install(TARGETS tracefold RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(tracefold_core PROPERTIES EXPORT_NAME core)
install(TARGETS tracefold_core EXPORT tracefoldTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tracefold DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
if(TARGET tracefold_record)
  install(TARGETS tracefold_record LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  foreach(flavour IN LISTS TRACEFOLD_MPI_FLAVOURS)
    if(TARGET tracefold_record_${flavour})
      install(TARGETS tracefold_record_${flavour} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    endif()
  endforeach()
  install(TARGETS tracefold_replay_exe RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tracefold)
  install(TARGETS tracefold_analyze_exe RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tracefold)
  install(TARGETS tracefold_diagnose_exe RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tracefold)
endif()

install(EXPORT tracefoldTargets NAMESPACE tracefold::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracefold)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tracefoldConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tracefoldConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracefold
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tracefoldConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tracefoldConfig.cmake
              ${PROJECT_BINARY_DIR}/tracefoldConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracefold)
# The .pc file finds the prefix from its own place (pkg-config's
# pcfiledir), so the installed tree and an unpacked package can be moved.
file(RELATIVE_PATH TRACEFOLD_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TRACEFOLD_PC_TO_PREFIX "${TRACEFOLD_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tracefold.pc.in ${PROJECT_BINARY_DIR}/tracefold.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tracefold.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(CPACK_PACKAGE_NAME tracefold)
set(CPACK_PACKAGE_VENDOR "tracefold")
set(CPACK_PACKAGE_CONTACT "tracefold maintainers <tracefold@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Folded, rank-merged traces of MPI programs")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# dpkg-shlibdeps (dpkg-dev) lists the shared libraries the programs need.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libzstd-dev")
set(CPACK_GENERATOR DEB)
include(CPack)

# SPDX-License-Identifier: MIT
# Install rules, the CMake package, pkg-config files and CPack (.deb and
# .tar.gz). Included from the top-level CMakeLists.txt when MPF_INSTALL is
# on (default: at the top level only; a project that embeds mpfixture and
# ships it may turn it on).
include(CMakePackageConfigHelpers)

set(MPF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mpfixture)
set(MPF_DOC_DIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/mpfixture)

# Libraries, with their SONAME links; headers in include/mpfixture/.
install(TARGETS mpfixture mpf_worker mpfixture_fakechips
  EXPORT mpfixtureTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET mpfixture_cmocka_dropin)
  install(TARGETS mpfixture_cmocka_dropin EXPORT mpfixtureTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# The GoogleTest adapter (static, C++), where GoogleTest was found.
if(TARGET mpfixture_gtest)
  install(TARGETS mpfixture_gtest mpfixture_gtest_main EXPORT mpfixtureTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/fixture/include/mpfixture/gtest.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mpfixture)
endif()
# The Check adapter (static), where Check was found.
if(TARGET mpfixture_check)
  install(TARGETS mpfixture_check EXPORT mpfixtureTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/fixture/include/mpfixture/check.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mpfixture)
endif()
install(FILES
    ${PROJECT_SOURCE_DIR}/fixture/include/mpfixture/mpfixture.h
    ${PROJECT_SOURCE_DIR}/fixture/include/mpfixture/cmocka.h
    ${PROJECT_SOURCE_DIR}/runtime/include/mpfixture/worker.h
    ${PROJECT_SOURCE_DIR}/fakechips/include/mpfixture/fakechips.h
    # 0.2's name of fakechips.h, forwarding to it (0.3 only).
    ${PROJECT_SOURCE_DIR}/fakechips/include/mpfixture/mpfixture_worker.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mpfixture)

# Programs: mpf-run (shared builds: it preloads libmpfixture.so) and the
# audit renderer as mpf-audit.
if(TARGET mpf-run)
  install(TARGETS mpf-run EXPORT mpfixtureTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # --escaped-fork's Python hook, beside libmpfixture (mpf-run finds it
  # there).
  install(FILES ${PROJECT_SOURCE_DIR}/fixture/tools/python/sitecustomize.py
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/mpfixture/python)
endif()
install(PROGRAMS ${PROJECT_SOURCE_DIR}/fixture/tools/mpf_audit.py
  DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME mpf-audit)
if(EXISTS ${PROJECT_SOURCE_DIR}/fixture/tools/mpf-run.1)
  install(FILES ${PROJECT_SOURCE_DIR}/fixture/tools/mpf-run.1
    DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# The CMake package: targets, version (0.x: same minor only), the test
# module and its discovery script side by side.
install(EXPORT mpfixtureTargets NAMESPACE mpfixture::
  DESTINATION ${MPF_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mpfixtureConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mpfixtureConfig.cmake
  INSTALL_DESTINATION ${MPF_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mpfixtureConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/mpfixtureConfig.cmake
    ${PROJECT_BINARY_DIR}/mpfixtureConfigVersion.cmake
    ${PROJECT_SOURCE_DIR}/cmake/MpfixtureTests.cmake
    ${PROJECT_SOURCE_DIR}/cmake/MpfixtureDiscover.cmake
    ${PROJECT_SOURCE_DIR}/cmake/mpfixture-memcheck.supp
  DESTINATION ${MPF_CMAKE_DIR})

# pkg-config: mpfixture (the guard, with cmocka), mpfixture-cmocka-dropin
# (the guard for unchanged sources, shared builds), mpfixture-worker (the
# runtime), mpfixture-fakechips (the companion), and mpfixture-fake-chips,
# 0.2's name of mpfixture-fakechips that requires it and adds nothing (0.3
# only). The prefix is the one of the install itself (cmake --install
# --prefix, or CPack's /usr), so the .pc files are written at install time.
# bindir is where mpf-run and mpf-audit are (shared builds install
# mpf-run): Meson and autotools projects find mpf-run there
# (examples/meson, examples/autotools).
set(_mpf_pc_common "prefix=@PREFIX@
exec_prefix=\${prefix}
bindir=\${exec_prefix}/${CMAKE_INSTALL_BINDIR}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}
cmakemoduledir=\${libdir}/cmake/mpfixture
")
file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture.pc "${_mpf_pc_common}
Name: mpfixture
Description: ${PROJECT_DESCRIPTION} (link before cmocka)
Version: ${PROJECT_VERSION}
Requires: cmocka
Libs: -L\${libdir} -lmpfixture
Cflags: -I\${includedir}
")
file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture-cmocka-dropin.pc "${_mpf_pc_common}
Name: mpfixture-cmocka-dropin
Description: every cmocka_run_group_tests() of a program guarded, sources unchanged (link before cmocka)
Version: ${PROJECT_VERSION}
Requires: mpfixture = ${PROJECT_VERSION}
Libs: -L\${libdir} -Wl,--no-as-needed -lmpfixture_cmocka_dropin -lmpfixture
")
file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture-worker.pc "${_mpf_pc_common}
Name: mpfixture-worker
Description: libmpfworker, the hierarchical worker runtime on simulated chips
Version: ${PROJECT_VERSION}
Libs: -L\${libdir} -lmpfworker
Libs.private: -lpthread -lm
Cflags: -I\${includedir}
")
file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture-fakechips.pc "${_mpf_pc_common}
Name: mpfixture-fakechips
Description: worker trees of fake chips owned by a guarded case
Version: ${PROJECT_VERSION}
Requires: mpfixture = ${PROJECT_VERSION}, mpfixture-worker = ${PROJECT_VERSION}
Libs: -L\${libdir} -lmpfixture_fakechips
Cflags: -I\${includedir}
")
file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture-fake-chips.pc "${_mpf_pc_common}
Name: mpfixture-fake-chips
Description: deprecated name of mpfixture-fakechips (0.3 only): use that
Version: ${PROJECT_VERSION}
Requires: mpfixture-fakechips = ${PROJECT_VERSION}
")
# mpfixture-check: the Check adapter, with the --wrap options it needs.
file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture-check.pc "${_mpf_pc_common}
Name: mpfixture-check
Description: every test of a Check SRunner guarded (mpf_srunner_run_all)
Version: ${PROJECT_VERSION}
Requires: mpfixture = ${PROJECT_VERSION}, check
Libs: -L\${libdir} -lmpfixture_check -Wl,--wrap=tcase_create,--wrap=tcase_set_timeout,--wrap=_tcase_add_test,--wrap=log_test_start,--wrap=tcase_fn_start,--wrap=_ck_assert_failed -lm
Cflags: -I\${includedir}
")
set(_mpf_pcs mpfixture mpfixture-worker mpfixture-fakechips mpfixture-fake-chips)
if(TARGET mpfixture_check)
  list(APPEND _mpf_pcs mpfixture-check)
endif()
if(TARGET mpfixture_cmocka_dropin)
  list(APPEND _mpf_pcs mpfixture-cmocka-dropin)
endif()
install(CODE "
  foreach(pc ${_mpf_pcs})
    file(READ \"${PROJECT_BINARY_DIR}/pc-in/\${pc}.pc\" text)
    string(REPLACE \"@PREFIX@\" \"\${CMAKE_INSTALL_PREFIX}\" text \"\${text}\")
    file(WRITE \"${PROJECT_BINARY_DIR}/pc-out/\${pc}.pc\" \"\${text}\")
  endforeach()
")
foreach(pc ${_mpf_pcs})
  install(FILES ${PROJECT_BINARY_DIR}/pc-out/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
    ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION ${MPF_DOC_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${MPF_DOC_DIR})

# CPack: `cpack --config build/CPackConfig.cmake` (or `cmake --build build
# --target package`) writes mpfixture_<version>_<arch>.deb and
# mpfixture-<version>-Linux.tar.gz. A packager may override the contact.
set(CPACK_PACKAGE_NAME mpfixture)
set(CPACK_PACKAGE_VENDOR "the mpfixture authors")
if(NOT DEFINED CPACK_PACKAGE_CONTACT)
  set(CPACK_PACKAGE_CONTACT "the mpfixture authors")
endif()
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_STRIP_FILES OFF)
set(CPACK_PACKAGE_FILE_NAME mpfixture-${PROJECT_VERSION}-${CMAKE_SYSTEM_NAME})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libcmocka0 (>= 1.1.5), python3")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcmocka-dev, cmake (>= 3.20), pkg-config")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gdb")
# The summary line comes from CPACK_PACKAGE_DESCRIPTION_SUMMARY.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "libmpfixture fails a cmocka test case, by name, when it leaves a /dev/shm
object, a live or escaped process, a zombie, a descriptor or a forked child
that unwound into the runner, or overruns its time budget; then it cleans
up. Includes mpf-run (audit any command), mpf-audit (render audit files),
the worker runtime and fakechips companion libraries, headers, the CMake
package with its test module, and pkg-config files.")
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git" "/build[^/]*/")
if(MPF_TOP_LEVEL)
  include(CPack)
endif()

# The Criterion adapter (where Criterion was found): the static library in
# an export set of its own, which the package loads only when it finds
# Criterion itself (mpfixtureConfig.cmake); its header; the CMake module
# of mpf_add_criterion_test() (its discovery is MpfixtureDiscover.cmake's);
# pkg-config mpfixture-criterion.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/MpfixtureCriterion.cmake
  DESTINATION ${MPF_CMAKE_DIR})
if(TARGET mpfixture_criterion)
  install(TARGETS mpfixture_criterion EXPORT mpfixtureCriterionTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT mpfixtureCriterionTargets NAMESPACE mpfixture::
    DESTINATION ${MPF_CMAKE_DIR})
  install(FILES ${PROJECT_SOURCE_DIR}/fixture/include/mpfixture/criterion.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mpfixture)
  file(WRITE ${PROJECT_BINARY_DIR}/pc-in/mpfixture-criterion.pc "${_mpf_pc_common}
Name: mpfixture-criterion
Description: Criterion tests written with MPF_TEST guarded in their workers
Version: ${PROJECT_VERSION}
Requires: mpfixture = ${PROJECT_VERSION}, criterion
Libs: \${libdir}/libmpfixture_criterion.a -ldl
Cflags: -I\${includedir}
")
  install(CODE "
    file(READ \"${PROJECT_BINARY_DIR}/pc-in/mpfixture-criterion.pc\" text)
    string(REPLACE \"@PREFIX@\" \"\${CMAKE_INSTALL_PREFIX}\" text \"\${text}\")
    file(WRITE \"${PROJECT_BINARY_DIR}/pc-out/mpfixture-criterion.pc\" \"\${text}\")
  ")
  install(FILES ${PROJECT_BINARY_DIR}/pc-out/mpfixture-criterion.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

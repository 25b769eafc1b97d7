# SPDX-License-Identifier: MIT
# mpf_library(<target> <name> <source>...): a library of this project, as
# every one of them is built — static or shared by MPF_BUILD_SHARED_LIBS,
# known as mpfixture::<name> in this build and in the installed package,
# include/ of its directory as the public headers (build tree and
# install), src/ as its private ones, code a shared library can hold, and a
# SONAME of major.minor (before 1.0 a minor release may change the ABI:
# mpf_report grows).
function(mpf_library target name)
  add_library(${target} ${MPF_LIBRARY_TYPE} ${ARGN})
  add_library(mpfixture::${name} ALIAS ${target})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${name}
    POSITION_INDEPENDENT_CODE ON
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
endfunction()

# SPDX-License-Identifier: MIT
# A shared library exports only documented symbols: every name that
# `nm -D --defined-only` lists must be a function declared in one of the
# headers given (PREFIX_ calls, and every PREFIX__ name the headers list;
# PREFIX is worker unless given), or named in backquotes in the section of
# a Markdown document that lists the exports (DOC, the section under the
# heading DOC_SECTION), or a symbol the toolchain adds (_init, _fini,
# _edata, _end, __bss_start; in a gcov build, -DGCOV=ON, also the __gcov_*
# names and mangle_path that libgcov.a links in with default visibility).
# Undocumented exports are printed.
#
#   cmake -DNM=<nm> -DLIBRARY=<lib.so> "-DHEADERS=<h1>|<h2>" [-DPREFIX=<p>]
#         [-DDOC=<doc.md> "-DDOC_SECTION=<heading>"] [-DGCOV=ON]
#         -P exports.cmake
foreach(var NM LIBRARY HEADERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "exports.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED PREFIX)
  set(PREFIX worker)
endif()
string(REPLACE "|" ";" HEADERS "${HEADERS}")

set(documented _init _fini _edata _end __bss_start)
foreach(header IN LISTS HEADERS)
  file(READ "${header}" text)
  string(REGEX MATCHALL "${PREFIX}_[a-z0-9_]*[ \n]*\\(" calls "${text}")
  string(REGEX MATCHALL "${PREFIX}__[a-z0-9_]+" internal "${text}")
  foreach(call IN LISTS calls)
    string(REGEX REPLACE "[ \n]*\\($" "" call "${call}")
    list(APPEND documented "${call}")
  endforeach()
  list(APPEND documented ${internal})
endforeach()
if(DEFINED DOC)
  file(READ "${DOC}" text)
  string(FIND "${text}" "\n${DOC_SECTION}\n" at)
  if(at LESS 0)
    message(FATAL_ERROR "exports.cmake: ${DOC} has no heading '${DOC_SECTION}'")
  endif()
  string(SUBSTRING "${text}" ${at} -1 text)
  string(LENGTH "${DOC_SECTION}" skip)
  math(EXPR skip "${skip} + 2")
  string(SUBSTRING "${text}" ${skip} -1 text)
  string(FIND "${text}" "\n#" end) # the next heading
  string(SUBSTRING "${text}" 0 ${end} text)
  string(REGEX MATCHALL "`[A-Za-z_][A-Za-z0-9_]*(\\(\\))?`" names "${text}")
  foreach(name IN LISTS names)
    string(REGEX REPLACE "[`()]" "" name "${name}")
    list(APPEND documented "${name}")
  endforeach()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/command_names.cmake)
mpf_rt_command_names(exported "[^\n]+" "^.* " "${NM}" -D --defined-only
                     "${LIBRARY}")
set(undocumented ${exported})
list(REMOVE_ITEM undocumented ${documented})
if(GCOV)
  list(FILTER undocumented EXCLUDE REGEX "^(__gcov_[a-z_]+|mangle_path)$")
endif()
list(LENGTH exported n_exported)
list(LENGTH undocumented n_undocumented)
if(n_undocumented GREATER 0)
  list(JOIN undocumented "\n  " text)
  message(FATAL_ERROR "${LIBRARY} exports ${n_undocumented} of its "
                      "${n_exported} symbols undocumented:\n  ${text}")
endif()
message(STATUS "${n_exported} exported symbols, every one documented")

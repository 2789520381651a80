# Finds LLVM (14 .. 19) for the optional CPU back end, as FLEXJIT_WITH_LLVM asks:
#   OFF   never use it;
#   ON    use it or stop with an error;
#   AUTO  use it when its CMake package (the -dev files) is installed, else go on without it:
#         the GPU host has LLVM's run-time libraries but no headers or CMake config.
# Sets FLEXJIT_LLVM_FOUND, and when true FLEXJIT_LLVM_LIBS, FLEXJIT_LLVM_INCLUDE_DIRS and
# FLEXJIT_LLVM_DEFINITIONS for the target that compiles the back end.
set(FLEXJIT_LLVM_FOUND FALSE)
string(TOUPPER "${FLEXJIT_WITH_LLVM}" _flexjit_llvm_mode)
if(NOT _flexjit_llvm_mode MATCHES "^(ON|OFF|AUTO)$")
  message(FATAL_ERROR "FLEXJIT_WITH_LLVM must be ON, OFF or AUTO (is '${FLEXJIT_WITH_LLVM}')")
endif()

if(NOT _flexjit_llvm_mode STREQUAL "OFF")
  # Newest first; Debian / Ubuntu keep each version's package under /usr/lib/llvm-N.
  set(_flexjit_llvm_hints)
  foreach(_v 19 18 17 16 15 14)
    list(APPEND _flexjit_llvm_hints /usr/lib/llvm-${_v}/lib/cmake/llvm /usr/local/opt/llvm@${_v}/lib/cmake/llvm)
  endforeach()
  # LLVM's package probes its own dependencies (FFI, Terminfo) with check_c_source_compiles,
  # which needs C enabled; the project itself is C++ only.
  include(CheckLanguage)
  check_language(C)
  if(CMAKE_C_COMPILER)
    enable_language(C)
  endif()
  find_package(LLVM CONFIG QUIET HINTS ${_flexjit_llvm_hints})
  if(LLVM_FOUND AND LLVM_VERSION_MAJOR GREATER_EQUAL 14 AND LLVM_VERSION_MAJOR LESS_EQUAL 19)
    set(FLEXJIT_LLVM_FOUND TRUE)
    set(FLEXJIT_LLVM_INCLUDE_DIRS ${LLVM_INCLUDE_DIRS})
    separate_arguments(FLEXJIT_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
    if(LLVM_LINK_LLVM_DYLIB)
      set(FLEXJIT_LLVM_LIBS LLVM)  # the distribution's one shared library
    else()
      llvm_map_components_to_libnames(FLEXJIT_LLVM_LIBS core orcjit native passes support)
    endif()
    message(STATUS "flexjit: LLVM ${LLVM_PACKAGE_VERSION} CPU back end enabled (${LLVM_DIR})")
  elseif(_flexjit_llvm_mode STREQUAL "ON")
    message(FATAL_ERROR "FLEXJIT_WITH_LLVM=ON but no LLVM 14..19 CMake package was found "
                        "(install llvm-dev or set LLVM_DIR to <prefix>/lib/cmake/llvm)")
  else()
    message(STATUS "flexjit: LLVM 14..19 not found: building the CPU back end without it (interpreter only)")
  endif()
endif()

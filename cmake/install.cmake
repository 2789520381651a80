# `cmake --install <build> --prefix P`: the public headers (include/flexjit/*.hpp), the libraries,
# the `flexjit` command, its compile worker (libexec), the CPU back end's LLVM module, and a CMake package, so that another
# project can do
#   find_package(flexjit REQUIRED)
#   target_link_libraries(app PRIVATE flexjit::flexjit)
# The internal libraries are exported too (flexjit::flexjit_jit, ...): a static flexjit::flexjit
# needs them at link time. None of them brings an include directory: only include/flexjit is
# installed, and its headers include nothing but the standard library.
include(CMakePackageConfigHelpers)

set(flexjit_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/flexjit)
set(flexjit_installed_libraries
    flexjit_api flexjit_jit flexjit_codegen flexjit_compiler flexjit_ir flexjit_dsl flexjit_templates flexjit_cpu)

install(TARGETS ${flexjit_installed_libraries} EXPORT flexjitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS flexjit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Where jit/compile_workers.cpp looks from bin/ and lib/ (../libexec).
install(TARGETS flexjit_compile_worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR})
if(TARGET flexjit_cpu_llvm)
  # Next to the libraries, where cpu/llvm_loader.cpp looks (from bin/ it tries ../lib).
  install(TARGETS flexjit_cpu_llvm LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flexjit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")

install(EXPORT flexjitTargets NAMESPACE flexjit:: DESTINATION ${flexjit_config_dir})
# A static build leaves its own dependencies to the consumer's link; a shared one hides them.
if(BUILD_SHARED_LIBS)
  set(FLEXJIT_STATIC_LIBRARIES OFF)
else()
  set(FLEXJIT_STATIC_LIBRARIES ON)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/flexjitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/flexjitConfig.cmake
                              INSTALL_DESTINATION ${flexjit_config_dir})
# 0.x: a new minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flexjitConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flexjitConfig.cmake ${PROJECT_BINARY_DIR}/flexjitConfigVersion.cmake
        DESTINATION ${flexjit_config_dir})

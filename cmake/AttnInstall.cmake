# `cmake --install <build> --prefix P` (included last by CMakeLists.txt):
#
#   P/bin/            attn-opt, attn-translate, attn-run, attn-compile
#   P/lib/            libattnrt.a and the dialect and pass libraries
#                     (libAttnDialect.a, libAttnTransforms.a, ...)
#   P/include/attn/   their headers, laid out as in the source tree
#                     (dialect/AttnDialect.h, lib/Transforms/Passes.h, ...;
#                     TableGen's .h.inc beside them) and libattnrt's
#                     (attnrt.h, attnrt_attention.h)
#   P/lib/cmake/attn/ attnConfig.cmake: find_package(attn) gives the
#                     targets attn::AttnDialect, attn::AttnTransforms, ...,
#                     attn::attnrt and the tools (attn::attn-compile, ...).
#
# The add_mlir_library calls say DISABLE_INSTALL: upstream's install rule
# would put the libraries in MLIR's export set; here they go in attn's.

include(CMakePackageConfigHelpers)

set(ATTN_INSTALL_CMAKEDIR lib/cmake/attn)

# The libraries another MLIR project links to use attn's dialect and passes,
# in dependency order.
set(ATTN_EXPORTED_LIBRARIES
  AttnDialect AttnTransforms AttnPipelines AttnNVPTX AttnMSL AttnPackage)
foreach(lib ${ATTN_EXPORTED_LIBRARIES})
  # In the build tree the top-level include_directories() serve; users of
  # the installed tree get include/attn (and MLIR's, from attnConfig.cmake).
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${ATTN_INSTALL_INCLUDEDIR}>)
  target_compile_features(${lib} INTERFACE cxx_std_17)
endforeach()

install(TARGETS ${ATTN_EXPORTED_LIBRARIES} attnrt
  EXPORT attnTargets
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib)
install(TARGETS attn-opt attn-translate attn-run attn-compile
  EXPORT attnTargets
  RUNTIME DESTINATION bin)

# Headers: the sources' and TableGen's, under the paths the sources use.
foreach(dir dialect lib/Transforms lib/Pipelines codegen/nvptx codegen/msl
            codegen/package)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/
    DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/${dir}
    FILES_MATCHING PATTERN "*.h")
  install(DIRECTORY ${PROJECT_BINARY_DIR}/${dir}/
    DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/${dir}
    FILES_MATCHING PATTERN "*.h.inc"
    PATTERN "CMakeFiles" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/attnrt.h
              ${PROJECT_SOURCE_DIR}/runtime/include/attnrt_attention.h
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR})

install(EXPORT attnTargets
  NAMESPACE attn::
  DESTINATION ${ATTN_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/attnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/attnConfig.cmake
  INSTALL_DESTINATION ${ATTN_INSTALL_CMAKEDIR}
  PATH_VARS ATTN_INSTALL_INCLUDEDIR)
# The same LLVM is needed, so the same major.minor of attn.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/attnConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/attnConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/attnConfigVersion.cmake
  DESTINATION ${ATTN_INSTALL_CMAKEDIR})

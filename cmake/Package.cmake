# What `cmake --install` holds besides the programs and libraries (and so
# what the wheel's package directory holds, scripts/build_wheel.sh): the C
# headers, a CMake package (find_package(Weft): Weft::weft, the runtime, and
# Weft::WeftCAPI, the compiler) and pkg-config files (weft, weft-compiler).
# Both locate the install from their own place, so a moved prefix (the
# wheel's directory in any site-packages) still works.
install(FILES
  include/weft/abi.h include/weft/compiler.h include/weft/runtime.h
  include/weft/status.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft)

include(CMakePackageConfigHelpers)
set(WEFT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Weft)
install(EXPORT WeftTargets NAMESPACE Weft:: DESTINATION ${WEFT_CMAKE_DIR})
file(WRITE ${PROJECT_BINARY_DIR}/WeftConfig.cmake
  "include(\"\${CMAKE_CURRENT_LIST_DIR}/WeftTargets.cmake\")\n")
write_basic_package_version_file(${PROJECT_BINARY_DIR}/WeftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/WeftConfig.cmake
  ${PROJECT_BINARY_DIR}/WeftConfigVersion.cmake DESTINATION ${WEFT_CMAKE_DIR})

# ${pcfiledir} is where pkg-config found the file; the prefix is relative
# to it. Libs carry an rpath, so that programs run without LD_LIBRARY_PATH.
file(RELATIVE_PATH WEFT_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" WEFT_PC_PREFIX "${WEFT_PC_PREFIX}")
set(WEFT_PC_PACKAGES weft)
if(WEFT_ENABLE_COMPILER)
  list(APPEND WEFT_PC_PACKAGES weft-compiler)
endif()
foreach(package ${WEFT_PC_PACKAGES})
  configure_file(cmake/${package}.pc.in ${PROJECT_BINARY_DIR}/${package}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${package}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

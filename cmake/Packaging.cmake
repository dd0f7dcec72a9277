# The Debian package (cpack -G DEB in the build folder): what `cmake --install` lays out, under /usr, stripped. Its
# Depends are the runtime packages of the libraries the binary links (dpkg-shlibdeps reads them off the binary),
# when those come from Debian's packages; a build against a torch wheel names none for libtorch.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mps-audit)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "which PyTorch operators run natively on Apple's MPS backend, which fall back to the CPU, and which fail")
set(CPACK_PACKAGE_CONTACT "mps-audit maintainers <mps-audit@localhost>")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
find_program(MPS_AUDIT_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(MPS_AUDIT_DPKG_SHLIBDEPS AND TORCH_INSTALL_PREFIX MATCHES "^/usr")
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)

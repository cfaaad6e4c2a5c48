# Build facts recorded in every manifest. The git revision is read at run time (the binary may be
# rebuilt less often than the tree changes), these are compile-time facts.
set(K3LAB_BUILD_INFO "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; ${CMAKE_BUILD_TYPE}; torch ${Torch_VERSION}; cuda ${K3LAB_HAVE_CUDA}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_info.hpp.in ${CMAKE_BINARY_DIR}/generated/k3lab/build_info.hpp @ONLY)

# Build facts recorded in every manifest. The git revision is read at run time (the binary may be
# rebuilt less often than the tree changes), these are compile-time facts.
# "cuda" alone was ambiguous: the CUDA kernels can be built (nvcc found) while the LibTorch linked cannot
# use a GPU (Debian's is CPU-only), so both are named.
set(K3LAB_BUILD_INFO "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; ${CMAKE_BUILD_TYPE}; LibTorch ${Torch_VERSION} (CUDA ${K3LAB_TORCH_CUDA}); k3lab CUDA kernels ${K3LAB_HAVE_CUDA}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_info.hpp.in ${CMAKE_BINARY_DIR}/generated/k3lab/build_info.hpp @ONLY)

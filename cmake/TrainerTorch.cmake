# Finds LibTorch (Debian's libtorch-dev or the one inside the PyPI torch wheel) and builds the
# engine as a shared library that the trainer binary loads only when a job runs, so composing,
# printing and listing configs never pay LibTorch's ~0.6 s start-up.
if(TRAINER_LIBTORCH STREQUAL "wheel")
  if(NOT TRAINER_TORCH_PREFIX)
    message(FATAL_ERROR "TRAINER_LIBTORCH=wheel needs -DTRAINER_TORCH_PREFIX=<torch.utils.cmake_prefix_path> "
                        "(scripts/setup.sh --libtorch=wheel prints and passes it).")
  endif()
  # The torch root (two levels above share/cmake) goes first too: TorchConfig looks its libraries
  # up with find_library(... PATHS <root>/lib), which searches the default prefixes first, so
  # with Debian's libtorch-dev also installed it would silently pick /usr/lib's libtorch.so.
  get_filename_component(TRAINER_TORCH_ROOT "${TRAINER_TORCH_PREFIX}/../.." ABSOLUTE)
  list(PREPEND CMAKE_PREFIX_PATH ${TRAINER_TORCH_ROOT} ${TRAINER_TORCH_PREFIX})
  # The CUDA wheel's TorchConfig needs a CUDA toolkit at configure time (same major version).
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS ${CUDAToolkit_ROOT}/bin/nvcc)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_ROOT}/bin/nvcc)
  endif()
elseif(NOT TRAINER_LIBTORCH STREQUAL "debian")
  message(FATAL_ERROR "TRAINER_LIBTORCH must be debian, wheel or none (got '${TRAINER_LIBTORCH}')")
endif()

find_package(Torch REQUIRED)
if(TRAINER_LIBTORCH STREQUAL "wheel" AND NOT TORCH_LIBRARY MATCHES "^${TRAINER_TORCH_ROOT}/")
  message(FATAL_ERROR "LibTorch from the wheel was asked for, but CMake found ${TORCH_LIBRARY}. "
                      "Remove the cached TORCH_LIBRARY (delete the build directory) and configure again.")
endif()
message(STATUS "trainer: LibTorch ${Torch_VERSION} from ${TRAINER_LIBTORCH} (${TORCH_INSTALL_PREFIX})")

find_package(ZLIB REQUIRED)
# data (datasets, samplers, loader) and models (registry, built-ins) use LibTorch; so does the
# engine. torch's headers come in as SYSTEM (imported target) so their warnings are not ours.
trainer_add_module(data LINKS torch trainer_image trainer_formats trainer_options trainer_config trainer_util ZLIB::ZLIB)
target_link_libraries(trainer_data PRIVATE nlohmann_json::nlohmann_json)  # data=csv: the encoding kept in checkpoints
trainer_add_module(models LINKS torch trainer_options trainer_config trainer_util)

# The engine's parts live in sub-folders named after them (checkpoint/, distributed/, ...).
file(GLOB_RECURSE engine_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/engine/*.cpp)
list(FILTER engine_sources EXCLUDE REGEX "engine_c_abi\\.cpp$")
# trainer_engine_core: everything but the C entry points; engine tests link it directly.
add_library(trainer_engine_core STATIC ${engine_sources})
target_include_directories(trainer_engine_core PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
target_link_libraries(trainer_engine_core PUBLIC torch trainer_data trainer_models trainer_options trainer_config trainer_util trainer_formats
                      trainer_tracking)
# dlopen: NVML is loaded at run time by the device stats monitor (nvml_device.cpp).
target_link_libraries(trainer_engine_core PUBLIC ${CMAKE_DL_LIBS})
target_compile_options(trainer_engine_core PRIVATE ${TRAINER_WARNINGS} -Wno-unused-parameter)
target_compile_definitions(trainer_engine_core PRIVATE TRAINER_LIBTORCH_SOURCE="${TRAINER_LIBTORCH}")
# The CPU optimizer loops (src/engine/optim/cpu_optimizer_kernels.h) round exactly as ATen's
# kernels do: the compiler may fuse no multiply-add on its own (-ffp-contract=off); the AVX2 file
# fuses where ATen's AVX2 kernels do. -fno-math-errno lets GCC vectorise the square root.
set(optim_kernels ${PROJECT_SOURCE_DIR}/src/engine/optim/cpu_optimizer_kernels)
set_source_files_properties(${optim_kernels}_generic.cpp ${optim_kernels}_avx2.cpp
                            PROPERTIES COMPILE_OPTIONS "$<$<NOT:$<CONFIG:Debug>>:-O3>;-ffp-contract=off;-fno-math-errno")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set_property(SOURCE ${optim_kernels}_avx2.cpp APPEND PROPERTY COMPILE_OPTIONS -mavx2 -mfma)
endif()
# A CUDA build of LibTorch (the wheel): the device stats monitor reads the caching allocator's counters.
if(TARGET c10_cuda)
  target_compile_definitions(trainer_engine_core PRIVATE TRAINER_WITH_CUDA=1)
  target_link_libraries(trainer_engine_core PUBLIC c10_cuda)
endif()

# trainer_engine: the shared library the trainer binary dlopens; only the C entry points exported.
add_library(trainer_engine SHARED ${PROJECT_SOURCE_DIR}/src/engine/engine_c_abi.cpp)
target_link_libraries(trainer_engine PRIVATE trainer_engine_core)
target_compile_options(trainer_engine PRIVATE ${TRAINER_WARNINGS})
set_target_properties(trainer_engine PROPERTIES CXX_VISIBILITY_PRESET hidden
                                                VISIBILITY_INLINES_HIDDEN ON)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # GNU ld's --no-as-needed wrapping of libtorch_cuda comes from the torch target only for GCC.
  target_link_options(trainer_engine PRIVATE -Wl,--no-as-needed)
endif()
install(TARGETS trainer_engine LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# trainer_engine_static: the same entry points linked into a C++ program (trainer::engine in the
# installed package), which runs jobs in-process with its own registered models and callbacks.
add_library(trainer_engine_static STATIC ${PROJECT_SOURCE_DIR}/src/engine/engine_c_abi.cpp)
target_link_libraries(trainer_engine_static PUBLIC trainer_engine_core)
target_compile_options(trainer_engine_static PRIVATE ${TRAINER_WARNINGS})

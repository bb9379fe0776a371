# `cmake --install` layout and the CMake package that C++ programs find with find_package(trainer):
#   bin/trainer, lib/libtrainer_engine.so       the torch-free CLI and the engine it dlopens
#   lib/libtrainer_*.a, include/trainer/        what a program that extends trainer links
#   share/trainer/configs/                      the shipped config tree (found from bin/trainer)
#   share/trainer/python/trainer_export.py      loads a `trainer export` file as a PyTorch module
#   lib/cmake/trainer/                          trainerConfig.cmake, version file, targets
# Targets for users: trainer::cli (trainer::run_cli, no torch) and trainer::engine (the engine
# linked in, with LibTorch). See examples/custom_model.
include(CMakePackageConfigHelpers)
set(TRAINER_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/trainer)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/trainer DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/trainer/configs)
install(FILES ${PROJECT_SOURCE_DIR}/python/trainer_export.py DESTINATION ${CMAKE_INSTALL_DATADIR}/trainer/python)

set(trainer_exported trainer_util trainer_config trainer_options trainer_launch trainer_formats trainer_tracking trainer_cli)
if(TARGET trainer_engine_core)
  list(APPEND trainer_exported trainer_image trainer_data trainer_models trainer_engine_core trainer_engine_static)
  set_target_properties(trainer_engine_static PROPERTIES EXPORT_NAME engine)
  # The wheel's libraries are found through the build's RUNPATH; keep it in the installed copy.
  set_target_properties(trainer_engine PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()
foreach(target ${trainer_exported})
  get_target_property(export_name ${target} EXPORT_NAME)
  if(NOT export_name)
    string(REGEX REPLACE "^trainer_" "" export_name ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  endif()
endforeach()
# A program built against the install finds the shipped configs/ through this (run_cli.h).
target_compile_definitions(trainer_cli INTERFACE
  $<INSTALL_INTERFACE:TRAINER_INSTALLED_CONFIG_DIR="$<INSTALL_PREFIX>/${CMAKE_INSTALL_DATADIR}/trainer/configs">)

install(TARGETS ${trainer_exported} EXPORT trainerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT trainerTargets NAMESPACE trainer:: DESTINATION ${TRAINER_INSTALL_CMAKEDIR})

# What trainerConfig.cmake needs to find the same LibTorch again (see TrainerTorch.cmake).
foreach(var TRAINER_TORCH_ROOT TRAINER_TORCH_PREFIX Torch_DIR CUDAToolkit_ROOT CMAKE_CUDA_COMPILER)
  if(NOT DEFINED ${var})
    set(${var} "")
  endif()
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/trainerConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/trainerConfig.cmake
                              INSTALL_DESTINATION ${TRAINER_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/trainerConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/trainerConfig.cmake ${PROJECT_BINARY_DIR}/trainerConfigVersion.cmake
        DESTINATION ${TRAINER_INSTALL_CMAKEDIR})

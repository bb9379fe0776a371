# trainer_add_module(NAME): a static library trainer_NAME from src/NAME/*.cpp with the public
# headers under include/trainer/NAME/. Sources are globbed so adding a file needs no CMake edit.
function(trainer_add_module name)
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(NOT sources)
    add_library(trainer_${name} INTERFACE)
    target_include_directories(trainer_${name} INTERFACE ${PROJECT_SOURCE_DIR}/include)
    return()
  endif()
  add_library(trainer_${name} STATIC ${sources})
  target_include_directories(trainer_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(trainer_${name} PRIVATE ${TRAINER_WARNINGS})
endfunction()

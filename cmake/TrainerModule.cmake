# trainer_add_module(NAME [LINKS deps...]): a static library trainer_NAME from src/NAME/*.cpp with
# the public headers under include/trainer/NAME/, linked PUBLIC to LINKS. Sources are globbed so
# adding a file needs no CMake edit (re-run the configure step).
function(trainer_add_module name)
  cmake_parse_arguments(MODULE "" "" "LINKS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(NOT sources)
    add_library(trainer_${name} INTERFACE)
    target_include_directories(trainer_${name} INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
    target_link_libraries(trainer_${name} INTERFACE ${MODULE_LINKS})
    return()
  endif()
  add_library(trainer_${name} STATIC ${sources})
  target_include_directories(trainer_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(trainer_${name} PRIVATE ${TRAINER_WARNINGS})
  target_link_libraries(trainer_${name} PUBLIC ${MODULE_LINKS})
endfunction()

# trainer_add_tests(DIR LIBS...): one test executable per DIR/**/*_test.cpp (sub-folders mirror
# src/DIR's), named DIR_<file>; its ctest entry is DIR/<sub-folder>/<file>.
function(trainer_add_tests dir)
  file(GLOB_RECURSE test_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*_test.cpp)
  foreach(test_source ${test_sources})
    get_filename_component(test_name ${test_source} NAME_WE)
    file(RELATIVE_PATH test_path ${CMAKE_CURRENT_SOURCE_DIR} ${test_source})
    string(REGEX REPLACE "\\.cpp$" "" test_path ${test_path})
    set(target ${dir}_${test_name})
    add_executable(${target} ${test_source} $<TARGET_OBJECTS:trainer_catch_main>)
    target_link_libraries(${target} PRIVATE ${ARGN} Catch2::Catch2)
    target_compile_options(${target} PRIVATE ${TRAINER_WARNINGS})
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})  # tests/skip_test.h
    target_compile_definitions(${target} PRIVATE
      TRAINER_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data"
      TRAINER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    # A file whose cases are all hidden benchmarks ("[.bench]", run by hand) gets no entry: it
    # would run nothing. Every entry fails when it runs no case (tests/main.cpp).
    file(READ ${test_source} text)
    string(REGEX MATCHALL "TEST_CASE\\(" cases "${text}")
    string(REGEX MATCHALL "TEST_CASE\\(\"[^\"]*\", *\"\\[\\." hidden "${text}")
    list(LENGTH cases case_count)
    list(LENGTH hidden hidden_count)
    if(case_count GREATER hidden_count)
      add_test(NAME ${test_path} COMMAND ${target} --order rand --warn NoAssertions)
      # A case that calls skip_test (tests/skip_test.h) makes ctest report the entry Skipped.
      set_tests_properties(${test_path} PROPERTIES SKIP_REGULAR_EXPRESSION "TRAINER-SKIPPED: ")
    endif()
  endforeach()
endfunction()

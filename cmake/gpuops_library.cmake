# One library per source folder, with the folders it may use declared.
#
#   gpuops_library(NAME DIR [DEPS lib...] [EXTERNAL target...] [SOURCES file...])
#
# compiles DIR/*.cpp (not sub-folders) and SOURCES into NAME, links DEPS and
# EXTERNAL publicly, and records "NAME DIR DEP..." in the global property
# GPUOPS_LAYERS, which the configure step writes to
# ${CMAKE_BINARY_DIR}/layers.txt for scripts/check-layers.sh (an include of a
# folder that is not declared, directly or through a dependency, is refused
# there: inline code and templates escape the linker).
#
# GPUOPS_LAYER_CHECK=ON (the sanitizer build of scripts/test.sh) makes every
# library SHARED and links each with -Wl,--no-undefined: a library that calls
# into a folder it does not declare fails to link, and a cycle between
# folders is a configure error (CMake allows cycles among static libraries
# only).
function(gpuops_library name dir)
  cmake_parse_arguments(L "" "" "DEPS;EXTERNAL;SOURCES" ${ARGN})
  if(dir MATCHES "\\.cpp$")
    set(srcs ${CMAKE_SOURCE_DIR}/${dir})
    get_filename_component(layer_dir ${dir} NAME_WLE)
    get_filename_component(parent ${dir} DIRECTORY)
    set(layer_dir ${parent}/${layer_dir})
  else()
    file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cpp)
    set(layer_dir ${dir})
  endif()
  add_library(${name} ${GPUOPS_LIB_TYPE} ${srcs} ${L_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${L_DEPS} ${L_EXTERNAL})
  if(GPUOPS_LAYER_CHECK)
    target_link_options(${name} PRIVATE -Wl,--no-undefined)
  endif()
  string(REPLACE ";" " " deps "${L_DEPS}")
  set_property(GLOBAL APPEND PROPERTY GPUOPS_LAYERS "${name} ${layer_dir} ${deps}")
endfunction()

# Writes ${CMAKE_BINARY_DIR}/generated/<name>.cpp: one function per call of
# gpuops_embed_function (below), each returning a file of a data folder by
# name (with or without its extension), "" for an unknown name. The files
# become configure dependencies: editing one re-runs CMake.
function(gpuops_embed_body dir pattern out)
  file(GLOB files CONFIGURE_DEPENDS ${dir}/${pattern})
  list(SORT files)
  set(body "")
  foreach(path ${files})
    get_filename_component(name ${path} NAME_WLE)
    get_filename_component(file ${path} NAME)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
    file(READ ${path} text)
    string(APPEND body "  if (name == \"${name}\" || name == \"${file}\") return R\"gpuops_embed(${text})gpuops_embed\";\n")
  endforeach()
  set(${out} "${body}" PARENT_SCOPE)
endfunction()

# gpuops_embed(OUT_VAR FILE HEADER [FUNCTION DIR PATTERN]...): the generated
# source FILE (under generated/) defining each FUNCTION (declared in HEADER,
# namespace gpuops::core) over DIR/PATTERN; its path in OUT_VAR.
function(gpuops_embed out_var file header)
  set(content "#include \"${header}\"\nnamespace gpuops::core {\n")
  set(args ${ARGN})
  list(LENGTH args n)
  set(i 0)
  while(i LESS n)
    list(GET args ${i} fn)
    math(EXPR j "${i} + 1")
    list(GET args ${j} dir)
    math(EXPR k "${i} + 2")
    list(GET args ${k} pattern)
    gpuops_embed_body(${CMAKE_SOURCE_DIR}/${dir} ${pattern} body)
    string(APPEND content "std::string ${fn}(const std::string& name) {\n${body}  return \"\";\n}\n")
    math(EXPR i "${i} + 3")
  endwhile()
  string(APPEND content "}  // namespace gpuops::core\n")
  set(path ${CMAKE_BINARY_DIR}/generated/${file})
  file(CONFIGURE OUTPUT ${path} CONTENT "${content}" @ONLY)
  set(${out_var} ${path} PARENT_SCOPE)
endfunction()

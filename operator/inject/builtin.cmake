# Embeds manifests/inject/*.yaml (meshop's own injection templates and defaults) into
# meshop_inject: builtin.cpp.in becomes ${CMAKE_CURRENT_BINARY_DIR}/builtin_generated.cpp with
# one raw string literal per file. Included by operator/inject/CMakeLists.txt once the
# meshop_inject target exists. Editing or adding a file re-runs CMake (CONFIGURE_DEPENDS).
set(meshop_builtin_dir ${CMAKE_SOURCE_DIR}/manifests/inject)
file(GLOB meshop_builtin_files CONFIGURE_DEPENDS ${meshop_builtin_dir}/*.yaml)
list(SORT meshop_builtin_files)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${meshop_builtin_files} ${CMAKE_CURRENT_LIST_DIR}/builtin.cpp.in)

# A raw string literal ends at )<delimiter>"; refuse a file that contains it rather than
# emitting C++ that does not compile or, worse, silently truncates the file.
set(meshop_builtin_delim "meshop_embed")
set(MESHOP_BUILTIN_ENTRIES "")
foreach(path IN LISTS meshop_builtin_files)
  get_filename_component(name ${path} NAME)
  file(READ ${path} text)
  string(FIND "${text}" ")${meshop_builtin_delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains )${meshop_builtin_delim}\" and cannot be embedded")
  endif()
  string(APPEND MESHOP_BUILTIN_ENTRIES
    "    {\"${name}\", R\"${meshop_builtin_delim}(${text})${meshop_builtin_delim}\"},\n")
endforeach()

configure_file(${CMAKE_CURRENT_LIST_DIR}/builtin.cpp.in
               ${CMAKE_CURRENT_BINARY_DIR}/builtin_generated.cpp @ONLY)
target_sources(meshop_inject PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/builtin_generated.cpp)

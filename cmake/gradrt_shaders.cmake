# gradrt_compile_shaders(<out_var> OUTPUT_DIR <dir> SHADERS <file.comp>... DEPENDS <include>...)
# Compiles each GLSL compute shader with `glslangValidator -V` twice: into <dir>/<stem>.spv.h
# holding `const uint32_t <stem>_spv[]` (float32), and with -DGRADRT_F64 into
# <dir>/<stem>_f64.spv.h holding `<stem>_f64_spv[]` (float64); appends the header paths to
# <out_var>. The headers live in the build tree only; nothing generated is
# committed. Needs GLSLANG_VALIDATOR set to the program.
function(gradrt_compile_shaders out_var)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SHADERS;DEPENDS" ${ARGN})
  file(MAKE_DIRECTORY ${ARG_OUTPUT_DIR})
  set(headers)
  foreach(shader ${ARG_SHADERS})
    get_filename_component(stem ${shader} NAME_WE)
    foreach(variant "" "_f64")
      set(defines)
      if(variant STREQUAL "_f64")
        set(defines -DGRADRT_F64=1)
      endif()
      set(header ${ARG_OUTPUT_DIR}/${stem}${variant}.spv.h)
      add_custom_command(
        OUTPUT ${header}
        COMMAND ${GLSLANG_VALIDATOR} -V --target-env vulkan1.0 --quiet ${defines}
                --vn ${stem}${variant}_spv -o ${header} ${shader}
        DEPENDS ${shader} ${ARG_DEPENDS}
        COMMENT "glslangValidator ${stem}.comp${variant}"
        VERBATIM)
      list(APPEND headers ${header})
    endforeach()
  endforeach()
  set(${out_var} ${${out_var}} ${headers} PARENT_SCOPE)
endfunction()

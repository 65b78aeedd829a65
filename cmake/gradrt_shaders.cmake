# gradrt_compile_shaders(<out_var> OUTPUT_DIR <dir> SHADERS <file.comp>... DEPENDS <include>...)
# Compiles each GLSL compute shader with `glslangValidator -V` twice: into <dir>/<stem>.spv.h
# holding `const uint32_t <stem>_spv[]` (float32), and with -DGRADRT_F64 into
# <dir>/<stem>_f64.spv.h holding `<stem>_f64_spv[]` (float64), and, for a shader whose text
# names GRADRT_F16, a third time with -DGRADRT_F16 into <dir>/<stem>_f16.spv.h (`<stem>_f16_spv[]`:
# float16 storage, float32 compute; shaders/common/storage.glsl); appends the header paths to
# <out_var>. The headers live in the build tree only; nothing generated is
# committed. Needs GLSLANG_VALIDATOR set to the program.
function(gradrt_compile_shaders out_var)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SHADERS;DEPENDS" ${ARGN})
  file(MAKE_DIRECTORY ${ARG_OUTPUT_DIR})
  set(headers)
  foreach(shader ${ARG_SHADERS})
    get_filename_component(stem ${shader} NAME_WE)
    # Variant names; "f32" has no suffix. (Not an empty string: an unquoted ${list} drops empty elements.)
    set(variants f32 _f64)
    file(READ ${shader} text)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${shader})  # the marker is read here
    string(FIND "${text}" "GRADRT_F16" f16_at)
    if(NOT f16_at EQUAL -1)
      list(APPEND variants "_f16")
    endif()
    foreach(name ${variants})
      set(variant ${name})
      if(name STREQUAL "f32")
        set(variant "")
      endif()
      set(defines)
      if(variant STREQUAL "_f64")
        set(defines -DGRADRT_F64=1)
      elseif(variant STREQUAL "_f16")
        set(defines -DGRADRT_F16=1)
      endif()
      set(header ${ARG_OUTPUT_DIR}/${stem}${variant}.spv.h)
      # _f16: SPIR-V 1.3 (vulkan1.1: 16-bit storage is a 1.1 feature), where buffers are the
      # StorageBuffer class; under vulkan1.0 they are Uniform + BufferBlock, which would need
      # uniformAndStorageBuffer16BitAccess as well.
      set(target_env vulkan1.0)
      if(variant STREQUAL "_f16")
        set(target_env vulkan1.1)
      endif()
      add_custom_command(
        OUTPUT ${header}
        COMMAND ${GLSLANG_VALIDATOR} -V --target-env ${target_env} --quiet ${defines}
                --vn ${stem}${variant}_spv -o ${header} ${shader}
        DEPENDS ${shader} ${ARG_DEPENDS}
        COMMENT "glslangValidator ${stem}.comp${variant}"
        VERBATIM)
      list(APPEND headers ${header})
    endforeach()
  endforeach()
  set(${out_var} ${${out_var}} ${headers} PARENT_SCOPE)
endfunction()

// The push-constant blocks as C++ structs. Each is defined once, in
// vulkan/shaders/common/<name>_push.glsl, which the shaders include as their push-constant
// block and which this header includes as a struct (see push_block.glsl): there is no mirror to
// keep in step. Vulkan guarantees 128 bytes of push constants; every block stays within that.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gradrt::vk {

static_assert(sizeof(int) == 4 && sizeof(float) == 4, "push blocks assume 4-byte int and float");

#include "../shaders/common/batch_norm_push.glsl"
#include "../shaders/common/conv_push.glsl"
#include "../shaders/common/pool_push.glsl"
#include "../shaders/common/reduce_push.glsl"
#include "../shaders/common/eltwise_push.glsl"

// Only 4-byte members, so no padding: a size that is not a multiple of 4 or over 128 is a bad edit.
template <class Push>
constexpr bool push_block_ok = sizeof(Push) % 4 == 0 && sizeof(Push) <= 128 && alignof(Push) == 4;
static_assert(push_block_ok<ConvPush> && push_block_ok<BatchNormPush> && push_block_ok<PoolPush> &&
              push_block_ok<ReducePush>);
static_assert(push_block_ok<EltwisePush>);

}  // namespace gradrt::vk

// The few types and functions of LiteRT's public C API (as shipped in libLiteRt.so of PyPI's
// ai-edge-litert==2.3.0) that gradrt uses, declared here because no LiteRT headers are packaged.
// They are facts of that API (litert/c/litert_common.h, litert_layout.h, litert_model_types.h,
// litert_custom_op_kernel.h, litert_options.h, litert_model.h, litert_tensor_buffer.h,
// litert_compiled_model.h, litert_environment.h); each signature was also checked against the
// 2.3.0 library's machine code (argument registers; LiteRtGetTensorBufferTensorType copies 72
// bytes, the size of LiteRtRankedTensorType below). Pinned: ai-edge-litert==2.3.0.
//
// Every function is reached through the table `Api` (dlopen + dlsym); tests/test_litert_symbols
// checks that the library exports each name of kApiNames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gradrt/gradrt.h"

namespace gradrt::litert {

extern "C" {
using LiteRtStatus = int;  // kLiteRtStatusOk = 0; the others are errors
constexpr LiteRtStatus kLiteRtStatusOk = 0;
constexpr LiteRtStatus kLiteRtStatusErrorInvalidArgument = 1;
constexpr LiteRtStatus kLiteRtStatusErrorRuntimeFailure = 3;

using LiteRtParamIndex = size_t;
using LiteRtEnvironment = struct LiteRtEnvironmentT*;
using LiteRtModel = struct LiteRtModelT*;
using LiteRtOptions = struct LiteRtOptionsT*;
using LiteRtCompiledModel = struct LiteRtCompiledModelT*;
using LiteRtSignature = struct LiteRtSignatureT*;
using LiteRtTensorBuffer = struct LiteRtTensorBufferT*;

constexpr int kLiteRtHwAcceleratorCpu = 1;
constexpr int kLiteRtTensorBufferLockModeRead = 0;
constexpr int kLiteRtTensorBufferLockModeWrite = 1;

// Element types are TfLiteType's values (not the .tflite file's TensorType numbers).
constexpr int kLiteRtElementTypeFloat32 = 1, kLiteRtElementTypeInt32 = 2, kLiteRtElementTypeUInt8 = 3,
              kLiteRtElementTypeInt64 = 4, kLiteRtElementTypeBool = 6, kLiteRtElementTypeInt16 = 7,
              kLiteRtElementTypeInt8 = 9, kLiteRtElementTypeFloat16 = 10, kLiteRtElementTypeFloat64 = 11,
              kLiteRtElementTypeBFloat16 = 19;

constexpr int kLiteRtTensorMaxRank = 8;
struct LiteRtLayout {
  unsigned int rank : 7;
  bool has_strides : 1;
  int32_t dimensions[kLiteRtTensorMaxRank];
  uint32_t strides[kLiteRtTensorMaxRank];
};
struct LiteRtRankedTensorType {
  int element_type;  // LiteRtElementType (a C enum: int)
  LiteRtLayout layout;
};
static_assert(sizeof(LiteRtLayout) == 68 && sizeof(LiteRtRankedTensorType) == 72);

struct LiteRtCustomOpKernel {
  LiteRtStatus (*Init)(void* user_data, const void* init_data, size_t init_data_size);
  LiteRtStatus (*GetOutputLayouts)(void* user_data, size_t num_inputs, const LiteRtLayout* input_layouts,
                                   size_t num_outputs, LiteRtLayout* output_layouts);
  LiteRtStatus (*Run)(void* user_data, size_t num_inputs, const LiteRtTensorBuffer* inputs, size_t num_outputs,
                      LiteRtTensorBuffer* outputs);
  LiteRtStatus (*Destroy)(void* user_data);
};
}  // extern "C"

// X(name, return type, parameter list): every LiteRT function gradrt calls.
#define GRADRT_LITERT_API_FUNCTIONS(X)                                                                        \
  X(LiteRtCreateEnvironment, LiteRtStatus, (int num_options, const void* options, LiteRtEnvironment* env))   \
  X(LiteRtDestroyEnvironment, void, (LiteRtEnvironment env))                                                  \
  X(LiteRtCreateModelFromBuffer, LiteRtStatus,                                                                \
    (LiteRtEnvironment env, const void* buffer, size_t size, LiteRtModel* model))                            \
  X(LiteRtDestroyModel, void, (LiteRtModel model))                                                            \
  X(LiteRtGetNumModelSignatures, LiteRtStatus, (LiteRtModel model, LiteRtParamIndex * n))                     \
  X(LiteRtGetModelSignature, LiteRtStatus, (LiteRtModel model, LiteRtParamIndex i, LiteRtSignature * sig))    \
  X(LiteRtGetSignatureKey, LiteRtStatus, (LiteRtSignature sig, const char** key))                             \
  X(LiteRtGetNumSignatureInputs, LiteRtStatus, (LiteRtSignature sig, LiteRtParamIndex * n))                   \
  X(LiteRtGetSignatureInputName, LiteRtStatus, (LiteRtSignature sig, LiteRtParamIndex i, const char** name))  \
  X(LiteRtGetNumSignatureOutputs, LiteRtStatus, (LiteRtSignature sig, LiteRtParamIndex * n))                  \
  X(LiteRtGetSignatureOutputName, LiteRtStatus, (LiteRtSignature sig, LiteRtParamIndex i, const char** name)) \
  X(LiteRtCreateOptions, LiteRtStatus, (LiteRtOptions * options))                                            \
  X(LiteRtDestroyOptions, void, (LiteRtOptions options))                                                      \
  X(LiteRtSetOptionsHardwareAccelerators, LiteRtStatus, (LiteRtOptions options, int accelerators))            \
  X(LiteRtAddCustomOpKernelOption, LiteRtStatus,                                                              \
    (LiteRtOptions options, const char* name, int version, const LiteRtCustomOpKernel* kernel, void* user_data)) \
  X(LiteRtCreateCompiledModel, LiteRtStatus,                                                                  \
    (LiteRtEnvironment env, LiteRtModel model, LiteRtOptions options, LiteRtCompiledModel* compiled))         \
  X(LiteRtDestroyCompiledModel, void, (LiteRtCompiledModel compiled))                                         \
  X(LiteRtRunCompiledModel, LiteRtStatus,                                                                     \
    (LiteRtCompiledModel compiled, LiteRtParamIndex signature, size_t num_inputs, LiteRtTensorBuffer* inputs, \
     size_t num_outputs, LiteRtTensorBuffer* outputs))                                                        \
  X(LiteRtCreateTensorBufferFromHostMemory, LiteRtStatus,                                                     \
    (const LiteRtRankedTensorType* type, void* host, size_t size, void (*deallocator)(void*),                \
     LiteRtTensorBuffer* buffer))                                                                             \
  X(LiteRtDestroyTensorBuffer, void, (LiteRtTensorBuffer buffer))                                             \
  X(LiteRtGetTensorBufferTensorType, LiteRtStatus, (LiteRtTensorBuffer buffer, LiteRtRankedTensorType * type)) \
  X(LiteRtLockTensorBuffer, LiteRtStatus, (LiteRtTensorBuffer buffer, void** host, int lock_mode))            \
  X(LiteRtUnlockTensorBuffer, LiteRtStatus, (LiteRtTensorBuffer buffer))

// The resolved functions of one loaded libLiteRt.so.
struct Api {
#define GRADRT_LITERT_FIELD(name, ret, params) ret(*name) params = nullptr;
  GRADRT_LITERT_API_FUNCTIONS(GRADRT_LITERT_FIELD)
#undef GRADRT_LITERT_FIELD
};

// Every name above, for the symbol test.
extern const char* const kApiNames[];
extern const size_t kNumApiNames;

// Opens `library` (nullptr or "": "libLiteRt.so") once per path for the process and resolves
// every function; a library or symbol that is missing is Unavailable, naming it.
Status load_api(const char* library, const Api** out);

}  // namespace gradrt::litert

/* gradrt/litert.h: train TensorFlow-converted .tflite models on the STOCK LiteRT library
 * (libLiteRt.so of PyPI's ai-edge-litert==2.3.0) with gradrt's kernels: no Flex delegate, no TF.
 *
 * Library: libgradrt_litert.so (x86-64, aarch64). Plain C; every function is thread-safe unless
 * it says otherwise. LiteRT itself is opened with dlopen (a path you give, else the soname
 * "libLiteRt.so") and each LiteRT function is looked up by name: a missing one is an
 * `Unavailable` error naming it. gradrt ships no LiteRT headers and needs none.
 *
 * The flow (what the Python package gradrt_litert and litert/examples/train_on_device.c do):
 *
 *   void* prepared; size_t prepared_size;
 *   if (gradrt_litert_prepare(tflite, tflite_size, &prepared, &prepared_size) != 0)
 *     fprintf(stderr, "%s\n", gradrt_litert_last_error());   // e.g. "UnsupportedOp: ... FlexFoo"
 *   gradrt_litert_model* m;
 *   gradrt_litert_model_create(prepared, prepared_size, NULL, 0, &m);
 *   const char* names[] = {"x", "y"};  const void* data[] = {x, y};  size_t bytes[] = {...};
 *   gradrt_litert_run(m, "train", 2, names, data, bytes);          // inputs bound BY NAME
 *   gradrt_litert_output(m, "train", "loss", &ptr, &n);            // valid until the next run
 *   gradrt_litert_model_destroy(m);  gradrt_litert_free(prepared);
 *
 * Errors: every function that can fail returns 0 on success and a nonzero gradrt_litert_code
 * otherwise; gradrt_litert_last_error() then gives "Code: message" (this thread's last error;
 * the code names are TensorFlow's, as gradrt's Status: InvalidArgument, ResourceExhausted,
 * Unimplemented, NotFound, Unavailable, Internal; plus UnsupportedOp from prepare).
 */
#ifndef GRADRT_LITERT_H_
#define GRADRT_LITERT_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define GRADRT_LITERT_API
#else
#define GRADRT_LITERT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. 1..6 are gradrt::Code's values (TF's code names); 7 is prepare's. */
typedef enum {
  GRADRT_LITERT_OK = 0,
  GRADRT_LITERT_INVALID_ARGUMENT = 1,
  GRADRT_LITERT_RESOURCE_EXHAUSTED = 2,
  GRADRT_LITERT_UNIMPLEMENTED = 3,
  GRADRT_LITERT_NOT_FOUND = 4,
  GRADRT_LITERT_UNAVAILABLE = 5,
  GRADRT_LITERT_INTERNAL = 6,
  /* The model has ops that neither LiteRT's builtins nor gradrt can run. The message is
   * "UnsupportedOp: <n> op(s) that neither LiteRT's builtins nor gradrt can run: A, B, C"
   * with every such op once, by the name the model gives it (Flex ops without "Flex"). */
  GRADRT_LITERT_UNSUPPORTED_OP = 7
} gradrt_litert_code;

/* This thread's last error as "Code: message" ("" when the last call succeeded); the pointer
 * stays valid until this thread's next gradrt_litert_* call. */
GRADRT_LITERT_API const char* gradrt_litert_last_error(void);
/* This thread's last error code (a gradrt_litert_code). */
GRADRT_LITERT_API int gradrt_litert_last_error_code(void);
/* Same as the library's gradrt version ("0.1.0"). */
GRADRT_LITERT_API const char* gradrt_litert_version(void);

/* ------------------------------------------------------------------ prepare
 * tflite bytes (TF's converter output: builtins, Flex<Op> custom ops, plain custom ops) ->
 * prepared bytes, which stock LiteRT runs with gradrt's kernels:
 *  - every constant buffer's data starts 64-byte aligned relative to the model's first byte
 *    (LiteRT wraps tensors with LiteRtCreateTensorBufferFromHostMemory, which refuses others),
 *    whether the input stored it inside the FlatBuffer or after it (Buffer.offset/size);
 *    so load the prepared bytes at a 64-byte aligned address (the runner below does);
 *  - every node gradrt runs gets its own operator code "Flex<Op>#<subgraph>.<node>" (or
 *    "<CustomOp>#<subgraph>.<node>" for FractionalAvgPool/FractionalAvgPoolGrad), because
 *    LiteRT gives a custom kernel no node handle: one registration per node;
 *  - before anything runs, one error (GRADRT_LITERT_UNSUPPORTED_OP) naming every op that
 *    neither LiteRT's builtins nor gradrt can run.
 * Preparing a prepared model returns the same bytes. *out is allocated by the library (64-byte
 * aligned): free it with gradrt_litert_free. Hostile bytes give InvalidArgument, never a crash. */
GRADRT_LITERT_API int gradrt_litert_prepare(const void* model, size_t size, void** out, size_t* out_size);
GRADRT_LITERT_API void gradrt_litert_free(void* p);

/* ------------------------------------------------------------------ kernels on your own LiteRtOptions
 * For code that drives LiteRT's C API itself: registers, on `litert_options` (a LiteRtOptions),
 * one LiteRtCustomOpKernel per gradrt node of the PREPARED model (LiteRtAddCustomOpKernelOption
 * of the library at `litert_library`, NULL: "libLiteRt.so"). Each kernel knows its node's
 * attributes and the model's static output shapes. `threads`: gradrt's thread count (0: all).
 * *out owns the kernels' state: keep it alive as long as any compiled model made with these
 * options, then gradrt_litert_kernels_destroy it. */
typedef struct gradrt_litert_kernels gradrt_litert_kernels;
GRADRT_LITERT_API int gradrt_litert_register_kernels(void* litert_options, const void* prepared, size_t size,
                                                     const char* litert_library, int threads,
                                                     gradrt_litert_kernels** out);
/* LiteRT ignores the status a custom kernel returns, so gradrt keeps the first error of a run
 * itself: this returns it (nonzero + last_error) and clears it, or 0 when every kernel succeeded
 * since the previous call. Call it after each LiteRtRunCompiledModel. */
GRADRT_LITERT_API int gradrt_litert_kernels_take_error(gradrt_litert_kernels* kernels);
GRADRT_LITERT_API void gradrt_litert_kernels_destroy(gradrt_litert_kernels* kernels);

/* ------------------------------------------------------------------ the runner
 * A compiled model on LiteRT's CPU path with gradrt's kernels registered, buffers owned by the
 * runner. Not thread-safe per model (one run at a time); distinct models may run concurrently. */
typedef struct gradrt_litert_model gradrt_litert_model;

/* `prepared`: gradrt_litert_prepare's output (copied: the caller may free it afterwards).
 * An unprepared model is refused (InvalidArgument). litert_library / threads as above. */
GRADRT_LITERT_API int gradrt_litert_model_create(const void* prepared, size_t size, const char* litert_library,
                                                 int threads, gradrt_litert_model** out);
GRADRT_LITERT_API void gradrt_litert_model_destroy(gradrt_litert_model* model);

/* Signatures, in the model's order. Strings live as long as the model. */
GRADRT_LITERT_API size_t gradrt_litert_num_signatures(const gradrt_litert_model* model);
GRADRT_LITERT_API const char* gradrt_litert_signature_key(const gradrt_litert_model* model, size_t index);

/* One input or output of a signature (LiteRT's order, which need not be the Python
 * signature's: bind by name). dtype is NumPy's name ("float32", "int32", "int64", "float16",
 * "float64", "int8", "uint8", "int16", "bool"); shape has rank entries (static shapes). */
typedef struct {
  const char* name;
  const char* dtype;
  int tflite_type;     /* TFLite's TensorType value (FLOAT32 = 0, INT32 = 2, INT64 = 4, ...) */
  int rank;
  int64_t shape[8];
  size_t bytes;        /* product(shape) * element size */
} gradrt_litert_tensor_info;
GRADRT_LITERT_API int gradrt_litert_num_io(const gradrt_litert_model* model, const char* signature, int is_output,
                                           size_t* count);
GRADRT_LITERT_API int gradrt_litert_io_info(const gradrt_litert_model* model, const char* signature, int is_output,
                                            size_t index, gradrt_litert_tensor_info* info);

/* Runs a signature. Inputs are bound BY NAME: names[i] gets data[i] (bytes[i] must equal the
 * input's size); every input of the signature must be given once. A kernel's failure inside
 * the run is returned here with gradrt's status (LiteRT itself would report success). */
GRADRT_LITERT_API int gradrt_litert_run(gradrt_litert_model* model, const char* signature, size_t num_inputs,
                                        const char* const* names, const void* const* data, const size_t* bytes);
/* An output of the signature's last run, by name: *data points into the runner's buffer and
 * stays valid until the next run of that signature or destroy. */
GRADRT_LITERT_API int gradrt_litert_output(const gradrt_litert_model* model, const char* signature,
                                           const char* name, const void** data, size_t* bytes);

/* ------------------------------------------------------------------ counters
 * Calls of gradrt's kernels in this process, by TF op name: "Name count\n" per op that ran,
 * written into buf (cap bytes, NUL-terminated, truncated if short). Returns the length the
 * whole text needs (without the NUL). */
GRADRT_LITERT_API size_t gradrt_litert_kernel_calls(char* buf, size_t cap);
GRADRT_LITERT_API void gradrt_litert_reset_kernel_calls(void);

#ifdef __cplusplus
}
#endif

#endif /* GRADRT_LITERT_H_ */

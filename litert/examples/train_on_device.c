/* train_on_device.c: what an embedded app copies to train a TensorFlow-converted .tflite model on the
 * device, with the stock libLiteRt.so (ai-edge-litert) and gradrt's kernels: no Flex delegate, no TF.
 *
 *   train_on_device MODEL.tflite DATA_DIR STEPS OUT_DIR [LIBLITERT_SO [THREADS]]
 *
 * MODEL: TF's converter output with a signature "train" (inputs by name, an output "loss") and a
 * signature "weights" (no inputs; every variable as an output), as litert/tests/models.py makes;
 * a model prepared already (gradrt_litert.prepare on the desktop) works too. Step i reads each input
 * <name> of "train" from DATA_DIR/<name>_<i>.npy (float32/int32/int64, C order, the input's shape),
 * prints "step <i> loss <value>", and after the last step writes every output of "weights" to
 * OUT_DIR/<name>.npy. LIBLITERT_SO: path of libLiteRt.so (default: the loader's search for
 * "libLiteRt.so"). Exit status 0, or 1 with gradrt's status line on stderr.
 *
 * Build (x86-64 or aarch64 alike; litert/tests/build_examples.sh does both):
 *   cc -O2 train_on_device.c -I litert/include -L DIR_OF_LIBGRADRT_LITERT -lgradrt_litert -o train_on_device
 */
#include <gradrt/litert.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what) {
  fprintf(stderr, "train_on_device: %s: %s\n", what, gradrt_litert_last_error());
  return 1;
}

/* Whole file into a malloc'ed buffer. */
static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  void* buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

/* NumPy's descr for a tensor dtype name of gradrt_litert_tensor_info ("<f4", ...), NULL if none. */
static const char* npy_descr(const char* dtype) {
  static const char* const map[][2] = {{"float32", "<f4"}, {"int32", "<i4"}, {"int64", "<i8"},
                                       {"float64", "<f8"}, {"float16", "<f2"}, {"uint8", "|u1"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i)
    if (strcmp(map[i][0], dtype) == 0) return map[i][1];
  return NULL;
}

/* An .npy file (format 1.x or 2.x) holding exactly the tensor `t`: returns a pointer to its data
 * inside `file` (size checked), or NULL with a message. Only the header's descr, fortran_order and
 * the element count are checked: the shape's product must equal the tensor's. */
static const void* npy_data(const char* path, const unsigned char* file, size_t size,
                            const gradrt_litert_tensor_info* t) {
  if (size < 10 || memcmp(file, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "train_on_device: %s: not an .npy file\n", path);
    return NULL;
  }
  /* header length: 2 bytes little-endian (version 1), 4 bytes (versions 2, 3) */
  size_t hlen = file[8] | (size_t)file[9] << 8, start = 10;
  if (file[6] >= 2) {
    if (size < 12) return NULL;
    hlen |= (size_t)file[10] << 16 | (size_t)file[11] << 24;
    start = 12;
  }
  if (hlen > size - start) {
    fprintf(stderr, "train_on_device: %s: truncated header\n", path);
    return NULL;
  }
  char header[512] = {0};
  memcpy(header, file + start, hlen < sizeof header - 1 ? hlen : sizeof header - 1);
  const char* descr = npy_descr(t->dtype);
  char want[32];
  snprintf(want, sizeof want, "'descr': '%s'", descr ? descr : "?");
  if (!strstr(header, want) || !strstr(header, "'fortran_order': False")) {
    fprintf(stderr, "train_on_device: %s: expected %s in C order for input '%s', header %s\n", path,
            descr ? descr : t->dtype, t->name, header);
    return NULL;
  }
  /* element count from "'shape': (a, b, ...)" */
  const char* s = strstr(header, "'shape': (");
  uint64_t count = 1;
  if (!s) return NULL;
  for (s += 10; *s && *s != ')';) {
    char* end;
    errno = 0;
    unsigned long long d = strtoull(s, &end, 10);
    if (end == s || errno) break;
    count = d && count > UINT64_MAX / d ? UINT64_MAX : count * d;
    s = end;
    while (*s == ',' || *s == ' ') ++s;
  }
  size_t data_bytes = size - start - hlen;
  if (count == UINT64_MAX || t->bytes != data_bytes || (count && t->bytes % count)) {
    fprintf(stderr, "train_on_device: %s: %zu data bytes (%" PRIu64 " elements) for input '%s' of %zu bytes\n",
            path, data_bytes, count, t->name, t->bytes);
    return NULL;
  }
  return file + start + hlen;
}

/* Writes `data` as OUT_DIR/<t.name>.npy (format 1.0, header padded to 64 bytes). */
static int npy_write(const char* dir, const gradrt_litert_tensor_info* t, const void* data) {
  const char* descr = npy_descr(t->dtype);
  if (!descr) return fprintf(stderr, "train_on_device: %s: dtype %s\n", t->name, t->dtype), 1;
  char shape[256] = "";
  size_t used = 0;
  for (int i = 0; i < t->rank && used < sizeof shape; ++i)
    used += (size_t)snprintf(shape + used, sizeof shape - used, "%" PRId64 "%s", t->shape[i],
                             t->rank == 1 ? "," : (i + 1 < t->rank ? ", " : ""));
  char header[384];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  if (n < 0 || n > 300) return 1;
  /* 10 bytes of magic + version + length, the dict, spaces, '\n': a multiple of 64 */
  size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
  memset(header + n, ' ', total - 10 - (size_t)n - 1);
  header[total - 10 - 1] = '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)((total - 10) & 0xff),
                           (unsigned char)((total - 10) >> 8)};
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.npy", dir, t->name);
  FILE* f = fopen(path, "wb");
  if (!f) return fprintf(stderr, "train_on_device: cannot write %s\n", path), 1;
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, total - 10, f) == total - 10 &&
           fwrite(data, 1, t->bytes, f) == t->bytes;
  return (fclose(f) == 0 && ok) ? 0 : 1;
}

/* One step: every input of "train" from DATA_DIR/<name>_<step>.npy, bound by name. */
static int train_step(gradrt_litert_model* m, const char* data_dir, int step) {
  size_t n = 0;
  if (gradrt_litert_num_io(m, "train", 0, &n) || n > 16) return fail("signature train");
  const char* names[16];
  const void* data[16];
  size_t bytes[16];
  void* files[16] = {0};
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; ++i) {
    gradrt_litert_tensor_info t;
    if (gradrt_litert_io_info(m, "train", 0, i, &t)) {
      rc = fail("train input");
      break;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s_%d.npy", data_dir, t.name, step);
    size_t size = 0;
    files[i] = read_file(path, &size);
    if (!files[i]) {
      fprintf(stderr, "train_on_device: cannot read %s\n", path);
      rc = 1;
      break;
    }
    names[i] = t.name;
    bytes[i] = t.bytes;
    if (!(data[i] = npy_data(path, files[i], size, &t))) rc = 1;
  }
  if (rc == 0 && gradrt_litert_run(m, "train", n, names, data, bytes)) rc = fail("train");
  for (size_t i = 0; i < n; ++i) free(files[i]);
  const void* loss;
  size_t loss_bytes;
  if (rc == 0 && gradrt_litert_output(m, "train", "loss", &loss, &loss_bytes)) rc = fail("train output 'loss'");
  if (rc == 0 && loss_bytes == sizeof(float)) printf("step %d loss %.9g\n", step, *(const float*)loss);
  return rc;
}

/* Runs "weights" and writes each variable as OUT_DIR/<name>.npy. */
static int write_weights(gradrt_litert_model* m, const char* out_dir) {
  if (gradrt_litert_run(m, "weights", 0, NULL, NULL, NULL)) return fail("weights");
  size_t n = 0;
  if (gradrt_litert_num_io(m, "weights", 1, &n)) return fail("weights outputs");
  for (size_t i = 0; i < n; ++i) {
    gradrt_litert_tensor_info t;
    const void* data;
    size_t bytes;
    if (gradrt_litert_io_info(m, "weights", 1, i, &t) || gradrt_litert_output(m, "weights", t.name, &data, &bytes))
      return fail("weights output");
    if (npy_write(out_dir, &t, data)) return 1;
  }
  printf("wrote %zu variables to %s\n", n, out_dir);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s MODEL.tflite DATA_DIR STEPS OUT_DIR [LIBLITERT_SO [THREADS]]\n", argv[0]);
    return 2;
  }
  int steps = atoi(argv[3]), threads = argc > 6 ? atoi(argv[6]) : 0;
  size_t size = 0;
  void* tflite = read_file(argv[1], &size);
  if (!tflite) return fprintf(stderr, "train_on_device: cannot read %s\n", argv[1]), 1;
  /* prepare on the device: aligned buffers, one kernel per gradrt node, unsupported ops named */
  void* prepared = NULL;
  size_t prepared_size = 0;
  int rc = gradrt_litert_prepare(tflite, size, &prepared, &prepared_size);
  free(tflite);
  if (rc) return fail("prepare");
  gradrt_litert_model* m = NULL;
  rc = gradrt_litert_model_create(prepared, prepared_size, argc > 5 ? argv[5] : NULL, threads, &m);
  gradrt_litert_free(prepared);
  if (rc) return fail("compile");
  for (int i = 0; i < steps && rc == 0; ++i) rc = train_step(m, argv[2], i);
  if (rc == 0) rc = write_weights(m, argv[4]);
  gradrt_litert_model_destroy(m);
  return rc;
}

// Tiled implicit GEMM, C[m][n] = sum_k A[m][k] * B[k][n], for one z-slice (a group, or a
// group x split-K chunk). The including shader defines, before including this file:
//   int gemm_rows();  int gemm_cols();                     M and N
//     (or, with GEMM_ROWS_PER_Z defined, int gemm_rows_z(int z): M of z-slice z)
//   void gemm_k_range(int z, out int k_begin, out int k_end);
//   float load_a(int z, int m, int k);  float load_b(int z, int k, int n);   (in range only)
//   void store_c(int z, int m, int n, float v);                              (in range only)
//   const bool A_K_FASTEST;  // A is contiguous in k in memory (else in m): load order
//   const bool B_N_FASTEST;  // B is contiguous in n (else in k)
// A and B are never materialised: load_a/load_b compute the im2col/col2im index on the fly
// and return 0 for padding. The integer divisions that split m and k into their coordinates
// are done once per tile row / k column (row_info, k_info, kept in shared memory), not once per
// loaded element: int division is slow on GPUs and scalarised on CPU drivers.
//
// Tiles: a workgroup computes a BM x BN tile of C, stepping through k by BK with the A and B
// tiles staged in shared memory; each invocation owns TM x TN outputs strided by BM/TM rows
// and BN/TN columns (so neighbouring invocations write neighbouring columns: coalesced).
// Specialisation constants (set by the host from the device limits):
//   0: workgroup size, must equal (BM/TM)*(BN/TN);  1 BM, 2 BN, 3 BK, 4 TM, 5 TN;
//   6 PAD: extra elements after each k-row of As and Bs (0: the layout every shader had before).
// Why PAD: a k-fastest load (A_K_FASTEST, or B with !B_N_FASTEST) has the 16 lanes of a k-step
// store to As[kk * BM + mm] for kk = 0..15: a stride of BM words, i.e. one shared-memory bank for
// all 16 (BM a multiple of 32): a 16-way conflict. With a row stride of BM + 2 (BM % 4 == 0, so
// (BM + 2) / 2 is odd) the 16 rows land on 16 distinct even banks and the lane pairs with mm, mm + 1
// on the odd ones: no conflict. Only the layout changes: every sum is the same, in the same order.
//   7 BLOCKED: 1 = an invocation owns TM consecutive rows and TN consecutive columns (rows
//     tm*TM + i, columns tn*TN + j) instead of rows strided by BM/TM and columns by BN/TN: its a[]
//     and b[] are then contiguous in As / Bs, which a compiler can read as 128-bit loads when the
//     row strides are multiples of 4 (PAD 4: a 2-way store conflict instead of 16-way). Which
//     invocation computes an output changes, not its sum (same k order): the same bits.
// Nothing depends on the subgroup size. Workgroups loop over tiles (stride = the dispatched
// count), so any M, N fits in maxComputeWorkGroupCount. Loop bounds are uniform across the
// workgroup, so the barriers are in uniform control flow.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int BM = 64;
layout(constant_id = 2) const int BN = 64;
layout(constant_id = 3) const int BK = 16;
layout(constant_id = 4) const int TM = 4;
layout(constant_id = 5) const int TN = 4;
layout(constant_id = 6) const int PAD = 0;
layout(constant_id = 7) const int BLOCKED = 0;
const int A_STRIDE = BM + PAD;  // row stride of As (one row per kk)
const int B_STRIDE = BN + PAD;  // row stride of Bs

shared real As[BK * A_STRIDE];  // As[kk * A_STRIDE + mm]
shared real Bs[BK * B_STRIDE];  // Bs[kk * B_STRIDE + nn]
shared ivec4 rows_s[BM];  // row_info of the tile's rows
shared ivec4 ks_s[BK];    // k_info of the current k-step

void main() {
  const int threads = (BM / TM) * (BN / TN);
  const int tid = int(gl_LocalInvocationID.x);
  const int tn = tid % (BN / TN);
  const int tm = tid / (BN / TN);
  // this invocation's i-th row / j-th column within the tile (BLOCKED: consecutive)
  const int row0 = BLOCKED != 0 ? tm * TM : tm, row_step = BLOCKED != 0 ? 1 : BM / TM;
  const int col0 = BLOCKED != 0 ? tn * TN : tn, col_step = BLOCKED != 0 ? 1 : BN / TN;
  const int z = int(gl_WorkGroupID.z);
#ifdef GEMM_ROWS_PER_Z
  const int M = gemm_rows_z(z);  // the including shader's rows differ per z-slice
#else
  const int M = gemm_rows();
#endif
  const int N = gemm_cols();
  int k_begin, k_end;
  gemm_k_range(z, k_begin, k_end);
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;

  for (int bm = int(gl_WorkGroupID.y); bm < tiles_m; bm += int(gl_NumWorkGroups.y)) {
    for (int bn = int(gl_WorkGroupID.x); bn < tiles_n; bn += int(gl_NumWorkGroups.x)) {
      real acc[TM * TN];
      for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0;
      // Safe without a barrier before it: every reader of the previous tile's rows_s has
      // passed that tile's last barrier (and with no k-step nobody reads rows_s at all).
      for (int i = tid; i < BM; i += threads) {
        const int m = bm * BM + i;
        rows_s[i] = m < M ? row_info(z, m) : ivec4(0);
      }

      for (int k0 = k_begin; k0 < k_end; k0 += BK) {
        for (int i = tid; i < BK; i += threads) {
          const int k = k0 + i;
          ks_s[i] = k < k_end ? k_info(z, k) : ivec4(0);
        }
        barrier();
        for (int i = tid; i < BM * BK; i += threads) {
          int mm, kk;
          if (A_K_FASTEST) { kk = i % BK; mm = i / BK; } else { mm = i % BM; kk = i / BM; }
          const int m = bm * BM + mm, k = k0 + kk;
          real v = 0.0;
          if (m < M && k < k_end) v = load_a(z, rows_s[mm], ks_s[kk], m, k);
          As[kk * A_STRIDE + mm] = v;
        }
        for (int i = tid; i < BK * BN; i += threads) {
          int nn, kk;
          if (B_N_FASTEST) { nn = i % BN; kk = i / BN; } else { kk = i % BK; nn = i / BK; }
          const int n = bn * BN + nn, k = k0 + kk;
          real v = 0.0;
          if (n < N && k < k_end) v = load_b(z, ks_s[kk], k, n);
          Bs[kk * B_STRIDE + nn] = v;
        }
        barrier();
        for (int kk = 0; kk < BK; ++kk) {
          real a[TM];
          real b[TN];
          for (int i = 0; i < TM; ++i) a[i] = As[kk * A_STRIDE + row0 + i * row_step];
          for (int j = 0; j < TN; ++j) b[j] = Bs[kk * B_STRIDE + col0 + j * col_step];
          for (int i = 0; i < TM; ++i)
            for (int j = 0; j < TN; ++j) acc[i * TN + j] += a[i] * b[j];
        }
        barrier();  // the next k-step overwrites ks_s and the tiles
      }

      for (int i = 0; i < TM; ++i) {
        const int m = bm * BM + row0 + i * row_step;
        if (m >= M) continue;
        for (int j = 0; j < TN; ++j) {
          const int n = bn * BN + col0 + j * col_step;
          if (n < N) store_c(z, m, n, acc[i * TN + j]);
        }
      }
    }
  }
}

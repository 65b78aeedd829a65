// Workgroups of COLS x LANES invocations (tid = lane * COLS + col): each column's LANES lanes
// accumulate strided parts of one sum (element j goes to lane j % LANES), then lane_reduce adds
// the lanes in a fixed tree order (lane l + h into lane l, h = LANES/2, LANES/4, ..., 1), so the
// result does not depend on timing: deterministic, no atomics. LANES is a power of two (host).
// The including shader declares, before this file:
//   layout(local_size_x_id = 0) in;                    // = COLS * LANES
//   layout(constant_id = 1) const int COLS = 32;
//   layout(constant_id = 2) const int LANES = 8;
// and, for sums of real4 (the `_v4` shaders), `#define LANE_T real4` (default: real).
// Call lane_reduce in uniform control flow (it has barriers); every lane gets the total.
#ifndef LANE_T
#define LANE_T real
#endif
shared LANE_T lane_sum[COLS * LANES];

LANE_T lane_reduce(LANE_T v, int col, int lane) {
  lane_sum[lane * COLS + col] = v;
  barrier();
  for (int h = LANES / 2; h > 0; h /= 2) {
    if (lane < h) lane_sum[lane * COLS + col] += lane_sum[(lane + h) * COLS + col];
    barrier();
  }
  const LANE_T total = lane_sum[col];
  barrier();  // everyone has read it before the next call writes
  return total;
}

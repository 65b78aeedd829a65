// lane_reduce.glsl for real4 sums (the `_v4` shaders: four channels per column): the same
// workgroup shape (tid = lane * COLS + col), the same fixed tree (lane l + h into lane l,
// h = LANES/2, ..., 1), so every component is summed in the same order run to run.
// Call in uniform control flow (barriers); every lane gets the total.
shared real4 lane_sum4[COLS * LANES];

real4 lane_reduce4(real4 v, int col, int lane) {
  lane_sum4[lane * COLS + col] = v;
  barrier();
  for (int h = LANES / 2; h > 0; h /= 2) {
    if (lane < h) lane_sum4[lane * COLS + col] += lane_sum4[(lane + h) * COLS + col];
    barrier();
  }
  const real4 total = lane_sum4[col];
  barrier();  // everyone has read it before the next call writes
  return total;
}

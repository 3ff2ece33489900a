// 42_Max_Pooling_2D: nn.MaxPool2d(k, stride, padding, dilation) on x (N*C, H, W) fp32; one output per thread.
#include "asmevo_hip.h"

extern "C" __global__ __launch_bounds__(256) void maxpool2d_f32(const float* __restrict__ x, float* __restrict__ y,
                                                                 int H, int W, int Ho, int Wo, int k, int stride,
                                                                 int pad, int dil, int total) {
  int o = blockIdx_x() * 256 + threadIdx_x();
  if (o >= total) return;
  int ow = o % Wo;
  int oh = (o / Wo) % Ho;
  int plane = o / (Wo * Ho);
  const float* xp = x + (long)plane * H * W;
  int h0 = oh * stride - pad, w0 = ow * stride - pad;
  float m = -__builtin_inff();
  for (int i = 0; i < k; ++i) {
    int h = h0 + i * dil;
    if (h < 0 || h >= H) continue;
    for (int j = 0; j < k; ++j) {
      int w = w0 + j * dil;
      if (w >= 0 && w < W) m = fmaxf_(m, xp[h * W + w]);
    }
  }
  y[o] = m;
}

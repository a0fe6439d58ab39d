// Kernel-fitted efficiency curves: the convolution-algorithm rule, a Winograd
// convolution's modeled time by hand, recovery of a known curve, the carry
// rule, the readers' errors, and the catalog's curves against the fits of
// data/kernels.
#include "fitspeed/evidence/kernels.h"

#include <ceres/jet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "device/conv_algorithm.h"
#include "evidence/log_logistic.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"

namespace fitspeed {
namespace {

std::string KernelDir() { return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/kernels"; }
std::string FirstHandDir() { return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/llm-gpu"; }
std::string FirstHandGemms() { return FirstHandDir() + "/gemm.csv"; }

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Reads `text` (a header and one bad row) with `read` from a file and
// expects a DataError naming line 2 and `field`.
template <typename Read>
void ExpectRowRefused(const Read& read, const std::string& text, const std::string& field) {
  try {
    read(WriteFile("refused.csv", text));
    ADD_FAILURE() << "expected a DataError for " << field;
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(":2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(ConvAlgorithmRule, WinogradOnlyFor3x3Stride1OneGroupOnCudaCores) {
  // kernel_h, kernel_w, stride_h, stride_w, groups, tensor_units, device has a Winograd curve
  EXPECT_EQ(ConvAlgorithmFor(3, 3, 1, 1, 1, false, true), ConvAlgorithm::kWinogradF2x2_3x3);
  EXPECT_EQ(ConvAlgorithmFor(3, 3, 2, 2, 1, false, true), ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(ConvAlgorithmFor(1, 1, 1, 1, 1, false, true), ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(ConvAlgorithmFor(5, 5, 1, 1, 1, false, true), ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(ConvAlgorithmFor(3, 3, 1, 1, 32, false, true), ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(ConvAlgorithmFor(3, 3, 1, 1, 1, true, true), ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(ConvAlgorithmFor(3, 3, 1, 1, 1, false, false), ConvAlgorithm::kImplicitGemm);
  // F(2x2, 3x3): 16 multiplies for 4 outputs, against 4 x 9 = 36 (Lavin & Gray 2016).
  EXPECT_DOUBLE_EQ(AlgorithmFlops(ConvAlgorithm::kWinogradF2x2_3x3, 36.0), 16.0);
  EXPECT_DOUBLE_EQ(AlgorithmFlops(ConvAlgorithm::kImplicitGemm, 36.0), 36.0);
}

// 10 TFLOPS FP32, 80 TFLOPS FP16; flat curves: implicit GEMM 0.5, Winograd
// 0.8, memory 0.8 at 1 TB/s; no launch or host time.
Device WinogradTestDevice() {
  return ParseDeviceJson(R"({
  "schema": "fitspeed.device/1", "name": "winograd-gpu", "kind": "gpu",
  "cores": {"value": 1, "source": "test"},
  "peak_flops_per_s": {"fp32": {"value": 10e12, "source": "test"},
                       "tensor16": {"value": 80e12, "type": "fp16", "source": "test"}},
  "memory": {"bandwidth_bytes_per_s": {"value": 1e12, "source": "test"},
             "capacity_bytes": {"value": 8589934592, "source": "test"}},
  "efficiency": {"compute": {"points": [[1e6, 0.5]], "source": "test", "basis": "assumed"},
                 "winograd": {"points": [[1e6, 0.8]], "source": "test", "basis": "fitted"},
                 "memory": {"points": [[1e6, 0.8]], "source": "test"}},
  "overheads": {"kernel_launch_s": {"value": 0, "source": "test"},
                "step_host_s": {"value": 0, "source": "test"}},
  "tiles": {"batch_multiple": {"value": 1, "source": "test"},
            "feature_multiple_fp32": {"value": 1, "source": "test"},
            "feature_multiple_tensor": {"value": 8, "source": "test"}}})",
                         "winograd-gpu.json");
}

// input 64x56x56 -> conv "w" (64 out, 3x3, stride 1, pad 1) -> conv "s"
// (64 out, 3x3, stride 2, pad 1) -> global average pool -> dense 10 -> loss.
Network WinogradNet() {
  Network net("winograd", Shape::Chw(64, 56, 56));
  Conv2dAttrs conv;
  conv.out_channels = 64;
  conv.window.kernel_h = conv.window.kernel_w = 3;
  conv.window.pad_top = conv.window.pad_bottom = conv.window.pad_left = conv.window.pad_right = 1;
  conv.bias = false;
  Conv2dAttrs strided = conv;
  strided.window.stride_h = strided.window.stride_w = 2;
  DenseAttrs head;
  head.units = 10;
  const std::string s = net.Conv2d(net.Conv2d("input", conv, "w"), strided, "s");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(s), head, "head"));
  net.Finalize();
  return net;
}

const LayerTime& Layer(const ModeledStep& step, const std::string& name) {
  for (const LayerTime& t : step.layers) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no layer " << name;
  return step.layers.front();
}

TEST(WinogradStep, A3x3Stride1ConvolutionByHand) {
  const ModeledStep step = ModelStep(WinogradNet(), WinogradTestDevice(), 1);
  const LayerTime& w = Layer(step, "w");
  const PassTime& fwd = w.passes[static_cast<size_t>(Pass::kForward)];
  // Direct FLOPs at batch 1: 2 N K P Q C R S = 2 * 64 * 56 * 56 * 64 * 9 = 231,211,008.
  // Winograd F(2x2,3x3) multiplies 16/36 of them: 102,760,448 FLOPs, at 0.8 of
  // 10 TFLOPS: 102760448 / 8e12 = 1.2845056e-5 s.
  EXPECT_TRUE(fwd.winograd);
  EXPECT_DOUBLE_EQ(fwd.flops, 231211008.0);
  EXPECT_DOUBLE_EQ(fwd.algorithm_flops, 102760448.0);
  EXPECT_NEAR(fwd.compute_s, 1.2845056e-5, 1e-17);
  // Bytes: x and y 64*56*56 = 200,704 floats each, W 36,864 floats:
  // (2 * 200704 + 36864) * 4 = 1,753,088 B at 0.8 TB/s = 2.19136e-6 s: compute-bound.
  EXPECT_NEAR(fwd.time_s, 1.2845056e-5, 1e-17);
  // Backward-data and backward-weights of the same shape run Winograd too.
  EXPECT_TRUE(w.passes[static_cast<size_t>(Pass::kBackwardData)].winograd);
  EXPECT_TRUE(w.passes[static_cast<size_t>(Pass::kBackwardWeights)].winograd);
  // The stride-2 convolution runs implicit GEMM: 2 * 64 * 28 * 28 * 64 * 9 =
  // 57,802,752 FLOPs at 0.5 of 10 TFLOPS = 1.15605504e-5 s.
  const PassTime& strided = Layer(step, "s").passes[static_cast<size_t>(Pass::kForward)];
  EXPECT_FALSE(strided.winograd);
  EXPECT_DOUBLE_EQ(strided.algorithm_flops, 57802752.0);
  EXPECT_NEAR(strided.compute_s, 1.15605504e-5, 1e-17);
  // On tensor units (mixed precision) no convolution runs Winograd.
  DeviceModelOptions mixed;
  mixed.precision = Precision::kMixed;
  EXPECT_FALSE(Layer(ModelStep(WinogradNet(), WinogradTestDevice(), 1, mixed), "w")
                   .passes[static_cast<size_t>(Pass::kForward)]
                   .winograd);
}

TEST(DepthwiseStep, AGroupedConvolutionOffTheMatrixUnitsByHand) {
  // input 64x56x56 -> depthwise 3x3 (64 groups, stride 1, pad 1) -> pool -> dense -> loss,
  // on the Winograd test device with a flat depthwise curve of 0.04.
  Network net("depthwise", Shape::Chw(64, 56, 56));
  Conv2dAttrs dw;
  dw.out_channels = 64;
  dw.groups = 64;
  dw.window.kernel_h = dw.window.kernel_w = 3;
  dw.window.pad_top = dw.window.pad_bottom = dw.window.pad_left = dw.window.pad_right = 1;
  dw.bias = false;
  DenseAttrs head;
  head.units = 10;
  net.SoftmaxCrossEntropy(
      net.Dense(net.GlobalAvgPool(net.Conv2d("input", dw, "dw")), head, "head"));
  net.Finalize();
  Device device = WinogradTestDevice();
  device.depthwise_efficiency.points = {{1.0, 0.04}};
  const ModeledStep step = ModelStep(net, device, 1);
  const LayerTime& t = Layer(step, "dw");
  EXPECT_FALSE(t.matrix);
  const PassTime& fwd = t.passes[static_cast<size_t>(Pass::kForward)];
  // 2 * 64 * 56 * 56 * 9 = 3,612,672 FLOPs at 0.04 of 10 TFLOPS: 9.03168e-6 s;
  // bytes (2 * 200704 + 576) * 4 = 1,607,936 at 0.8 TB/s = 2.00992e-6 s: compute-bound.
  EXPECT_DOUBLE_EQ(fwd.flops, 3612672.0);
  EXPECT_FALSE(fwd.winograd);
  EXPECT_NEAR(fwd.compute_s, 9.03168e-6, 1e-18);
  EXPECT_NEAR(fwd.time_s, 9.03168e-6, 1e-18);
  // Without a depthwise curve it runs at the compute curve (0.5): 7.225344e-7 s,
  // memory-bound at 2.00992e-6 s.
  device.depthwise_efficiency.points.clear();
  const ModeledStep plain_step = ModelStep(net, device, 1);
  const PassTime& plain = Layer(plain_step, "dw").passes[0];
  EXPECT_NEAR(plain.compute_s, 7.225344e-7, 1e-18);
  EXPECT_NEAR(plain.time_s, 2.00992e-6, 1e-17);
}

TEST(DepthwiseDerivation, IsTheSeparableLayerLessItsPointwisePart) {
  const KernelFitReport report = FitKernelTables(KernelDir());
  ASSERT_TRUE(report.depthwise.has_value());
  const DepthwiseDerivation& d = *report.depthwise;
  // tlkh's V100 FP16 rows: Conv2D 4097, SeparableConv2D 4335 images/s at batch 16.
  EXPECT_DOUBLE_EQ(d.conv_images_per_s, 4097);
  EXPECT_DOUBLE_EQ(d.separable_images_per_s, 4335);
  // Depthwise 3x3 on 16 x 222 x 222 x 128 ("valid"): 2 * 16 * 49284 * 128 * 9 = 1,816,805,376
  // FLOPs.
  EXPECT_DOUBLE_EQ(d.depthwise_flops, 1816805376.0);
  // 16 / 4335 = 3.690888e-3 s per batch, less the modeled pointwise part.
  EXPECT_NEAR(d.depthwise_s + d.pointwise_modeled_s, 16.0 / 4335, 1e-15);
  EXPECT_GT(d.pointwise_modeled_s, 0);
  EXPECT_NEAR(d.efficiency, d.depthwise_flops / (d.depthwise_s * 15.7e12), 1e-15);
  // Far below the memory roofline's pace: the point of a curve of its own.
  EXPECT_LT(d.efficiency, 0.1);
  EXPECT_NEAR(d.conv_measured_s, 16.0 / 4097, 1e-15);
  // A table without the two rows is refused.
  EXPECT_THROW(DeriveDepthwise(WriteFile("nodw.csv",
                                         "device,layer,dtype,input_NHWC,filters,kernel,padding,"
                                         "metric,value\nT4,Conv2D,float16,1x1x1x1,1,1x1,valid,"
                                         "images_per_s,1\n"),
                               report),
               DataError);
}

TEST(WinogradStep, DeviceFileKeepsTheCurveAndBases) {
  const Device d = WinogradTestDevice();
  ASSERT_EQ(d.winograd_efficiency.points.size(), 1u);
  EXPECT_EQ(d.bases.at("efficiency.winograd"), "fitted");
  EXPECT_EQ(d.bases.at("efficiency.compute"), "assumed");
  EXPECT_EQ(d.bases.count("efficiency.memory"), 0u);
  const Device again = ParseDeviceJson(DeviceToJson(d), "again.json");
  EXPECT_EQ(again.winograd_efficiency.points.size(), 1u);
  EXPECT_EQ(again.bases, d.bases);
  // A basis outside the five is refused, naming the field.
  std::string text = DeviceToJson(d);
  text.replace(text.find("\"fitted\""), 8, "\"guessed\"");
  try {
    ParseDeviceJson(text, "bad.json");
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("efficiency.winograd.basis"), std::string::npos)
        << e.what();
  }
}

// GEMMs generated exactly from eff = 0.8 / (1 + (1e9 / F)^0.7) with the fit's
// own model time (compute-bound: tiny bytes; 5 us launch), on a GPU of 10 TFLOPS.
TEST(KernelFit, RecoversAKnownCurve) {
  KernelGpu gpu;
  gpu.name = "synthetic";
  gpu.fp32_flops_per_s = 10e12;
  gpu.memory_bandwidth_bytes_per_s = 1e12;
  gpu.kernel_launch_s = 5e-6;
  gpu.memory_device = "v100-sxm2";  // bytes below make memory time negligible
  std::vector<KernelMeasurement> kernels;
  for (double f = 1e6; f < 1e12; f *= 2.3) {
    KernelMeasurement m;
    m.gpu = "synthetic";
    m.op = "gemm";
    m.pass = "fwd";
    m.direct_flops = f;
    m.bytes = 1;
    const double eff = 0.8 / (1 + std::pow(1e9 / f, 0.7));
    m.time_s = f / (10e12 * eff) + 5e-6;
    kernels.push_back(m);
  }
  const KernelFitReport report = FitKernelCurves(kernels, {gpu});
  ASSERT_EQ(report.fits.size(), 1u);
  const KernelCurveFit& fit = report.fits.front();
  EXPECT_TRUE(fit.converged);
  EXPECT_NEAR(fit.e_max, 0.8, 1e-6);
  EXPECT_NEAR(fit.f_half / 1e9, 1.0, 1e-5);
  EXPECT_NEAR(fit.slope, 0.7, 1e-6);
  EXPECT_LT(fit.median_abs_error, 1e-6);
  EXPECT_NEAR(fit.At(1e9), 0.4, 1e-6);  // half of e_max at F_half
}

// The shape term: GEMMs of many shapes generated from eff = 0.8 / (1 + (1e9 /
// F)^0.7) x prod d / (d + 12) (EfficiencyCurve::ShapeFactor at half_dim 12).
TEST(KernelFit, RecoversAKnownShapeTermAndLeavesItOutByDefault) {
  KernelGpu gpu;
  gpu.name = "synthetic";
  gpu.fp32_flops_per_s = 10e12;
  gpu.memory_bandwidth_bytes_per_s = 1e12;
  gpu.kernel_launch_s = 5e-6;
  gpu.memory_device = "v100-sxm2";
  EfficiencyCurve shape;
  shape.half_dim = 12;
  std::vector<KernelMeasurement> kernels;
  for (double m = 16; m <= 8192; m *= 4) {
    for (double n : {16.0, 64.0, 256.0, 1024.0}) {
      for (double k : {32.0, 512.0, 2048.0}) {
        KernelMeasurement g;
        g.gpu = "synthetic";
        g.op = "gemm";
        g.pass = "fwd";
        g.dims = {m, n, k};
        g.direct_flops = 2 * m * n * k;
        g.bytes = 1;
        const double eff =
            0.8 / (1 + std::pow(1e9 / g.direct_flops, 0.7)) * shape.ShapeFactor(g.dims);
        g.time_s = g.direct_flops / (10e12 * eff) + 5e-6;
        kernels.push_back(g);
      }
    }
  }
  const KernelFitReport with = FitKernelCurves(kernels, {gpu}, /*shape_term=*/true);
  ASSERT_EQ(with.fits.size(), 1u);
  const KernelCurveFit& fit = with.fits.front();
  EXPECT_TRUE(fit.converged);
  EXPECT_TRUE(fit.half_dim_fitted);
  EXPECT_NEAR(fit.half_dim, 12, 1e-4);
  EXPECT_NEAR(fit.e_max, 0.8, 1e-6);
  EXPECT_NEAR(fit.slope, 0.7, 1e-6);
  EXPECT_LT(fit.median_abs_error, 1e-6);
  EXPECT_EQ(fit.Curve().half_dim, 12);
  // Without it (the catalog's fits) there is no shape term, and the curve
  // alone cannot describe these kernels.
  const KernelCurveFit plain = FitKernelCurves(kernels, {gpu}).fits.front();
  EXPECT_EQ(plain.half_dim, 0);
  EXPECT_FALSE(plain.half_dim_fitted);
  EXPECT_EQ(plain.Curve().half_dim, 0);
  EXPECT_GT(plain.median_abs_error, 0.05);
}

TEST(KernelFit, ConvolutionGemmDimensionsByHand) {
  // N 8, C 64, 56x56 in, K 128, 3x3, pad 1 stride 1: P = Q = 56.
  // Implicit GEMM: forward {8*56*56, 128, 64*9} = {25088, 128, 576};
  // backward-data {8*56*56, 64, 128*9} = {25088, 64, 1152}; backward-weights
  // {128, 576, 25088}. Winograd F(2x2, 3x3): 28x28 tiles of 2x2, forward
  // {8*28*28, 128, 64} = {6272, 128, 64}.
  const auto dims = [](ConvAlgorithm a, const char* pass) {
    return ConvGemmDims(a, pass, 8, 64, 56, 56, 128, 3, 3, 56, 56);
  };
  const GemmDims fwd = dims(ConvAlgorithm::kImplicitGemm, "fwd");
  EXPECT_EQ(fwd.m, 25088);
  EXPECT_EQ(fwd.n, 128);
  EXPECT_EQ(fwd.k, 576);
  const GemmDims data = dims(ConvAlgorithm::kImplicitGemm, "bwd_data");
  EXPECT_EQ(data.n, 64);
  EXPECT_EQ(data.k, 1152);
  const GemmDims weights = dims(ConvAlgorithm::kImplicitGemm, "bwd_weights");
  EXPECT_EQ(weights.m, 128);
  EXPECT_EQ(weights.k, 25088);
  const GemmDims winograd = dims(ConvAlgorithm::kWinogradF2x2_3x3, "fwd");
  EXPECT_EQ(winograd.m, 6272);
  EXPECT_EQ(winograd.k, 64);
  EXPECT_THROW(dims(ConvAlgorithm::kImplicitGemm, "update"), UsageError);
  // The DeepBench reader fills both sets for a convolution row.
  const std::vector<KernelMeasurement> convs = ReadKernelTable(KernelDir() + "/deepbench_conv.csv");
  for (const KernelMeasurement& m : convs) {
    EXPECT_GT(m.dims.m * m.dims.n * m.dims.k, 0) << m.source;
    if (m.pass == "fwd") {
      // 2 m n k is the direct FLOPs of the forward implicit GEMM.
      EXPECT_NEAR(2 * m.dims.m * m.dims.n * m.dims.k / m.direct_flops, 1, 1e-12) << m.source;
    }
  }
}

TEST(KernelFit, TheCurvesJetDerivativesAreTheAnalyticOnes) {
  // eff = E / (1 + u), u = exp(k (lf - ln F)), E = exp(le):
  //   d eff / d le = eff
  //   d eff / d lf = -eff k u / (1 + u)
  //   d eff / d k  = -eff (lf - ln F) u / (1 + u)
  // The fit's Jacobian (Ceres's automatic derivatives) must be these.
  using Jet = ceres::Jet<double, 3>;
  const double le = std::log(0.8), lf = std::log(2e9), k = 0.7;
  for (const double flops : {1e7, 2e9, 5e11}) {
    const Jet eff = LogLogisticEfficiency(Jet(le, 0), Jet(lf, 1), Jet(k, 2), flops);
    const double u = std::exp(k * (lf - std::log(flops)));
    const double value = 0.8 / (1 + u);
    EXPECT_NEAR(eff.a, value, 1e-15) << flops;
    EXPECT_NEAR(eff.a, LogLogisticEfficiency(le, lf, k, flops), 1e-15) << flops;
    EXPECT_NEAR(eff.v[0], value, 1e-15) << flops;
    EXPECT_NEAR(eff.v[1], -value * k * u / (1 + u), 1e-15) << flops;
    EXPECT_NEAR(eff.v[2], -value * (lf - std::log(flops)) * u / (1 + u), 1e-14) << flops;
  }
  // At F = F_half the curve is at half its maximum and its slope in lf is -E k / 4.
  const Jet half = LogLogisticEfficiency(Jet(le, 0), Jet(lf, 1), Jet(k, 2), 2e9);
  EXPECT_NEAR(half.a, 0.4, 1e-15);
  EXPECT_NEAR(half.v[1], -0.8 * 0.7 / 4, 1e-15);
  EXPECT_NEAR(half.v[2], 0, 1e-15);
}

TEST(KernelFit, CarryKeepsTheEfficiencyAtTheSameIdealTime) {
  KernelCurveFit fit;
  fit.e_max = 0.9;
  fit.f_half = 1e9;
  fit.slope = 0.6;
  // A device with 2.5x the peak reaches at 2.5e9 FLOPs what the measured one
  // reached at 1e9 (the same F / peak): 0.45.
  const EfficiencyCurve carried = CarryCurve(fit, 10e12, 25e12);
  EXPECT_NEAR(carried.At(2.5e9), 0.45, 0.45 * 2e-3);  // 4-digit points, log interpolation
  EXPECT_NEAR(carried.At(1e12), fit.At(1e12 / 2.5), 2e-3);
  // The identity for the same peak.
  EXPECT_EQ(CarryCurve(fit, 10e12, 10e12).points.size(), fit.Curve().points.size());
  EXPECT_DOUBLE_EQ(CarryCurve(fit, 10e12, 10e12).At(3e8), fit.Curve().At(3e8));
}

TEST(KernelTables, ReadTheCommittedTablesAndRefuseBadOnes) {
  const std::vector<KernelMeasurement> all = ReadKernelTables(KernelDir());
  int conv = 0, k40 = 0;
  for (const KernelMeasurement& m : all) {
    conv += m.op == "conv";
    k40 += m.gpu == "Tesla K40";
    ASSERT_GT(m.time_s, 0) << m.source;
    ASSERT_GT(m.direct_flops, 0) << m.source;
  }
  EXPECT_EQ(conv, 1370);
  EXPECT_EQ(k40, 900);  // cuBLAS 7.0 and 7.5 on a Tesla K40 (the 10 K40c rows are another board)

  const std::string header = "gpu,phase,op,precision,M,N,K,transA,transB,time_us,tflops\n";
  try {
    ReadKernelTable(WriteFile("neg.csv", header + "V100,train,gemm,fp32,64,64,64,N,N,-3,1\n"));
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("neg.csv:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("time_us"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadKernelTable(WriteFile(
                   "nophase.csv", "gpu,op,precision,M,N,K,time_us\nV100,gemm,fp32,1,1,1,1\n")),
               DataError);
  try {
    ReadKernelTable(WriteFile("junk.csv", std::string("\x7f"
                                                      "ELF\x01\x00\x00",
                                                      7)));
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("binary data"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadKernelTable(WriteFile(
                   "huge.csv", header + "V100,train,gemm,fp32,1e200,1e200,1e200,N,N,3,1\n")),
               DataError);
  EXPECT_THROW(ReadKernelTable("/nonexistent/kernels.csv"), InputError);
}

TEST(KernelFit, FirstHandH200GemmsAreReadAsTensorAndFp8Kernels) {
  const std::vector<KernelMeasurement> k = ReadFirstHandGemms(FirstHandGemms(), "H200");
  // data/llm-gpu/README.md: 1,492 rows, 781 FP16 + 301 BF16 + 205 + 205 FP8.
  ASSERT_EQ(k.size(), 1492u);
  const auto fp8 =
      std::count_if(k.begin(), k.end(), [](const KernelMeasurement& m) { return m.fp8; });
  EXPECT_EQ(fp8, 410);
  // Row 2: llama-3-8b qkv forward, bf16, 2048 x 6144 x 4096, median 0.13792 ms:
  // bytes 2 x (2048 x 4096 + 4096 x 6144) + 2 x 2048 x 6144 = 92,274,688.
  EXPECT_EQ(k[0].gpu, "H200");
  EXPECT_TRUE(k[0].tensor16);
  EXPECT_FALSE(k[0].fp8);
  EXPECT_DOUBLE_EQ(k[0].direct_flops, 103079215104.0);
  EXPECT_DOUBLE_EQ(k[0].bytes, 92274688.0);
  EXPECT_DOUBLE_EQ(k[0].time_s, 0.13792e-3);
  EXPECT_NE(k[0].source.find("gemm.csv:2"), std::string::npos) << k[0].source;
  // An FP8 row: one byte per input element, a BF16 output.
  const auto first8 =
      std::find_if(k.begin(), k.end(), [](const KernelMeasurement& m) { return m.fp8; });
  ASSERT_NE(first8, k.end());
  EXPECT_FALSE(first8->tensor16);
  EXPECT_DOUBLE_EQ(first8->bytes, first8->dims.m * first8->dims.k +
                                      first8->dims.k * first8->dims.n +
                                      2 * first8->dims.m * first8->dims.n);
}

TEST(KernelFit, TheH200FitsReproduceItsLargeSquareProducts) {
  const KernelFitReport report = FitKernelTables(KernelDir(), false, FirstHandDir());
  const KernelCurveFit* tensor = nullptr;
  const KernelCurveFit* fp8 = nullptr;
  for (const KernelCurveFit& f : report.fits) {
    if (f.gpu == "H200" && f.unit == KernelUnit::kTensor16) tensor = &f;
    if (f.gpu == "H200" && f.unit == KernelUnit::kFp8) fp8 = &f;
  }
  ASSERT_NE(tensor, nullptr);
  ASSERT_NE(fp8, nullptr);
  EXPECT_TRUE(tensor->converged);
  EXPECT_TRUE(fp8->converged);
  EXPECT_EQ(tensor->kernels, 1082);
  EXPECT_EQ(fp8->kernels, 410);
  // The table's square 8,192 products (gemm.csv): BF16 670.905 TFLOP/s of
  // 989.5 (0.678), FP8 E4M3 at 1,979 peak: the README's 66-73% range. The
  // fits' plateau lies within 5% of the BF16 one and inside the FP8 range.
  EXPECT_NEAR(tensor->At(2 * 8192.0 * 8192 * 8192) / (670.905 / 989.5), 1.0, 0.05);
  EXPECT_GT(fp8->At(2 * 8192.0 * 8192 * 8192), 0.60);
  EXPECT_LT(fp8->At(2 * 8192.0 * 8192 * 8192), 0.73);
  // Median time error over the fitted rows, as `validate kernels` prints it.
  EXPECT_LT(tensor->median_abs_error, 0.10);
  EXPECT_LT(fp8->median_abs_error, 0.10);
}

TEST(KernelFit, FirstHandCudnnAttentionIsReadAsForwardAndBackwardKernels) {
  const std::vector<KernelMeasurement> k =
      ReadFirstHandAttention(FirstHandDir() + "/attention.csv", "H200");
  // 12 cuDNN forward rows and 12 forward+backward rows (6 sequences, 32 or 8
  // KV heads); the other backends are not read.
  ASSERT_EQ(k.size(), 24u);
  int forward = 0;
  for (const KernelMeasurement& m : k) {
    EXPECT_EQ(m.op, "attention");
    EXPECT_TRUE(m.tensor16);
    forward += m.pass == "fwd";
  }
  EXPECT_EQ(forward, 12);
  // attention.csv:100-101, 32 heads of 128 at 32,768, causal: forward
  // F = 2 x 2 x 32 x 32768^2 x 128 / 2 = 8,796,093,022,208 in 15.4494 ms;
  // backward 2.5 F = 21,990,232,555,520 in 57.4012 - 15.4494 = 41.9518 ms.
  const auto at = [&](const std::string& source) {
    const auto it = std::find_if(k.begin(), k.end(), [&](const KernelMeasurement& m) {
      return m.source.size() >= source.size() &&
             m.source.compare(m.source.size() - source.size(), source.size(), source) == 0;
    });
    EXPECT_NE(it, k.end()) << source;
    return *it;
  };
  const KernelMeasurement fwd = at("attention.csv:100");
  EXPECT_EQ(fwd.pass, "fwd");
  EXPECT_DOUBLE_EQ(fwd.direct_flops, 8796093022208.0);
  EXPECT_DOUBLE_EQ(fwd.time_s, 15.4494e-3);
  const KernelMeasurement bwd = at("attention.csv:101");
  EXPECT_EQ(bwd.pass, "bwd");
  EXPECT_DOUBLE_EQ(bwd.direct_flops, 2.5 * 8796093022208.0);
  EXPECT_NEAR(bwd.time_s, 41.9518e-3, 1e-12);
  // A forward+backward row without its forward row is refused, naming it.
  const std::string header =
      "section,backend,pass,dtype,batch,heads,kv_heads,head_dim,seq,causal,flops_full,"
      "flops_causal,median_ms,min_ms,tflops,tflops_full,reps,status,note\n";
  ExpectRowRefused([](const std::string& path) { return ReadFirstHandAttention(path, "H200"); },
                   header +
                       "attention,cudnn,fwd_bwd,bf16,1,32,32,128,32768,1,61572651155456,"
                       "30786325577728,57.4012,56.6947,536.336,1072.67,10,ok,\n",
                   "pass");
}

TEST(KernelFit, TheH200AttentionFitsReproduceTheLongestSequence) {
  const KernelFitReport report = FitKernelTables(KernelDir(), false, FirstHandDir());
  const KernelCurveFit* fwd = nullptr;
  const KernelCurveFit* bwd = nullptr;
  for (const KernelCurveFit& f : report.fits) {
    if (f.gpu == "H200" && f.unit == KernelUnit::kAttentionForward) fwd = &f;
    if (f.gpu == "H200" && f.unit == KernelUnit::kAttentionBackward) bwd = &f;
  }
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(fwd->kernels, 12);
  EXPECT_EQ(bwd->kernels, 12);
  EXPECT_EQ(fwd->half_dim, 0);  // no shape term
  // At 32,768 tokens (the rows above): forward 8.796093e12 / (15.4494e-3 x
  // 989.5e12) = 0.5754 of the peak; backward 2.199023e13 / (41.9518e-3 x
  // 989.5e12) = 0.5297. The fits lie within 5% of both, below the GEMMs'
  // 0.678 at square 8,192.
  EXPECT_NEAR(fwd->At(8796093022208.0) / 0.5754, 1.0, 0.05);
  EXPECT_NEAR(bwd->At(2.5 * 8796093022208.0) / 0.5297, 1.0, 0.05);
  EXPECT_LT(fwd->median_abs_error, 0.05);
  EXPECT_LT(bwd->median_abs_error, 0.05);
}

TEST(KernelFit, TheCurvesTimeNeverFallsAsTheKernelGrows) {
  // A slope above 1 would make a kernel of fewer FLOPs take longer below
  // F_half: the points hold the time at its minimum instead. By hand for
  // e_max 0.8, F_half 1e9, k 2: time ~ F (1 + (1e9/F)^2) is least at F = 1e9
  // (d/dF = 1 - 1e18/F^2 = 0), where eff = 0.4; below it eff = 0.4 x F / 1e9.
  KernelCurveFit fit;
  fit.e_max = 0.8;
  fit.f_half = 1e9;
  fit.slope = 2;
  const EfficiencyCurve c = fit.Curve();
  for (size_t i = 0; i + 1 < c.points.size(); ++i) {
    const double t0 = c.points[i].size / c.points[i].efficiency;
    const double t1 = c.points[i + 1].size / c.points[i + 1].efficiency;
    EXPECT_LE(t0, t1 * (1 + 1e-3)) << "point " << i;
  }
  EXPECT_NEAR(c.At(1e9), 0.4, 1e-3);
  EXPECT_NEAR(c.At(1e8), 0.04, 1e-4);  // the raw log-logistic gives 0.8 / 101 = 0.0079
  // A slope at or below 1 is left as fitted.
  fit.slope = 0.5;
  EXPECT_NEAR(fit.Curve().At(1e8), 0.8 / (1 + std::sqrt(10.0)), 1e-4);
}

TEST(KernelFit, TheCatalogCarriesTheCurvesOfTheCommittedTables) {
  // data/devices must be regenerated (`fitspeed validate --kernels --catalog-out
  // DIR`, docs/devices.md) whenever the tables, the fit or the carry rule change.
  const KernelFitReport report = FitKernelTables(KernelDir(), false, FirstHandDir());
  int served = 0;
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    const Device catalog = LoadDevice(name);
    Device refit = catalog;
    const std::vector<std::string> fields = ApplyKernelCurves(refit, report, KernelGpus());
    served += !fields.empty();
    for (const auto& [catalog_curve, refit_curve] :
         {std::pair{&catalog.compute_efficiency, &refit.compute_efficiency},
          std::pair{&catalog.winograd_efficiency, &refit.winograd_efficiency},
          std::pair{&catalog.depthwise_efficiency, &refit.depthwise_efficiency},
          std::pair{&catalog.tensor_efficiency, &refit.tensor_efficiency},
          std::pair{&catalog.fp8_efficiency, &refit.fp8_efficiency},
          std::pair{&catalog.attention_forward_efficiency, &refit.attention_forward_efficiency},
          std::pair{&catalog.attention_backward_efficiency,
                    &refit.attention_backward_efficiency}}) {
      ASSERT_EQ(catalog_curve->points.size(), refit_curve->points.size()) << name;
      EXPECT_EQ(catalog_curve->from, refit_curve->from) << name;
      for (size_t i = 0; i < catalog_curve->points.size(); ++i) {
        EXPECT_DOUBLE_EQ(catalog_curve->points[i].size, refit_curve->points[i].size) << name;
        EXPECT_DOUBLE_EQ(catalog_curve->points[i].efficiency, refit_curve->points[i].efficiency)
            << name << " point " << i;
      }
    }
    for (const std::string& field : fields) {
      EXPECT_EQ(catalog.sources.at(field), refit.sources.at(field)) << name << " " << field;
      EXPECT_EQ(catalog.bases.at(field), refit.bases.at(field)) << name << " " << field;
    }
  }
  // V100 x3, A100 x2, H100, P100, T4, K40m, K80; issue 30's H200, B200, B300, GB200, GB300,
  // L40S, L4, MI300X, MI325X, MI355X, Gaudi 2 and Gaudi 3 (not the TPUs: assumed curves);
  // issue 32's A100 PCIe 80 GB, A30, A10G, L40, H100 PCIe, RTX A5000, RTX 4090, RX 7900 XTX.
  EXPECT_EQ(served, 30);
}

TEST(KernelCheck, ErrorsAgainstTheCatalogDeviceAndTheFloor) {
  // Two GEMMs "measured" on NeuSight's T4: one at 0.8x the catalog t4's own
  // modeled time (the model 25% too slow), one under the floor.
  const Device t4 = LoadDevice("t4");
  KernelMeasurement m;
  m.gpu = "Tesla T4";
  m.op = "gemm";
  m.pass = "fwd";
  m.direct_flops = 2.0 * 4096 * 4096 * 4096;
  m.bytes = 4.0 * 3 * 4096 * 4096;
  const double modeled =
      std::max(m.direct_flops / (8.1e12 * t4.compute_efficiency.At(m.direct_flops)),
               m.bytes / (3.2e11 * t4.memory_efficiency.At(m.bytes))) +
      t4.kernel_launch_s;
  m.time_s = 0.8 * modeled;
  KernelMeasurement tiny = m;
  tiny.time_s = 1e-5;
  const std::vector<KernelCheck> checks = CheckCatalogOnKernels({m, tiny}, "t.csv", 5e-5);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].device, "t4");
  EXPECT_EQ(checks[0].basis, "fitted");
  EXPECT_EQ(checks[0].kernels, 1);
  EXPECT_EQ(checks[0].below_floor, 1);
  EXPECT_NEAR(checks[0].median_signed_error, 0.25, 1e-12);
  // The committed tables: NeuSight's FP32 nn.Linear and autoheuristic's GEMMs.
  EXPECT_EQ(ReadKernelTable(KernelDir() + "/neusight_linear_test.csv").size(), 8254u);
  int tf32 = 0, tensor16 = 0;
  for (const KernelMeasurement& k : ReadKernelTable(KernelDir() + "/autoheuristic_train_mm.csv")) {
    tf32 += k.tf32;
    tensor16 += k.tensor16;
  }
  EXPECT_EQ(tf32, 16);
  EXPECT_EQ(tensor16, 2084);
  // NeuSight's torch.bmm timings (FP32, kernels of 50 us or more).
  EXPECT_EQ(ReadKernelTable(KernelDir() + "/neusight_bmm.csv").size(), 25726u);
  // NeuSight's FP32 3x3 convolutions on the four catalog GPUs it covers.
  EXPECT_EQ(ReadKernelTable(KernelDir() + "/neusight_conv.csv").size(), 19666u);
}

TEST(KernelCheck, ReadsABatchedMatmulTableByHand) {
  // 12 products of 512 x 512 x 64: 2*12*512*512*64 = 402,653,184 FLOPs;
  // 4*12*(512*512 + 512*64 + 512*64) = 15,728,640 bytes.
  const std::string path = WriteFile("bmm.csv",
                                     "gpu,op,dtype,B,M,N,K,time_us,kernel,source_file\n"
                                     "Tesla T4,bmm,fp32,12,512,512,64,100.5,k,f\n"
                                     "Tesla T4,bmm,fp16,12,512,512,64,20,k,f\n");
  const std::vector<KernelMeasurement> m = ReadKernelTable(path);
  ASSERT_EQ(m.size(), 1u);  // FP32 only
  EXPECT_DOUBLE_EQ(m[0].direct_flops, 402653184.0);
  EXPECT_DOUBLE_EQ(m[0].bytes, 15728640.0);
  EXPECT_EQ(m[0].dims.k, 64);
  EXPECT_DOUBLE_EQ(m[0].time_s, 100.5e-6);
  // Another op in the column is refused, naming the line and field.
  ExpectRowRefused(
      ReadKernelTable,
      "gpu,op,dtype,B,M,N,K,time_us,kernel,source_file\nTesla T4,conv,fp32,1,2,3,4,5,k,f\n", "op");
}

TEST(KernelCheck, ReadsANeuSightConvolutionTableByHand) {
  // 8 x 64 x 56 x 56 input, 64 filters of 3x3, stride 1, pad 1: P = Q = 56;
  // 2*8*64*56*56*64*9 = 1,849,688,064 FLOPs; 4*(8*64*56*56 + 64*64*9 +
  // 8*64*56*56) = 4*(1,605,632 + 36,864 + 1,605,632) = 12,992,512 bytes.
  const std::string header =
      "gpu,split,op,dtype,pass,N,C,H,W,K,R,S,stride,pad,groups,time_us,kernel,n_kernels,"
      "source_file\n";
  const std::vector<KernelMeasurement> m = ReadKernelTable(WriteFile(
      "conv.csv", header + "Tesla T4,train,conv,fp32,fwd,8,64,56,56,64,3,3,1,1,1,500,"
                           "cudnn_infer_turing_scudnn_winograd_128x128,1,f\n"
                           "Tesla T4,train,conv,fp16,fwd,8,64,56,56,64,3,3,1,1,1,100,k,1,f\n"));
  ASSERT_EQ(m.size(), 1u);  // FP32 only
  EXPECT_EQ(m[0].op, "conv");
  EXPECT_EQ(m[0].pass, "fwd");
  EXPECT_EQ(m[0].kernel_h, 3);
  EXPECT_EQ(m[0].stride_w, 1);
  EXPECT_DOUBLE_EQ(m[0].direct_flops, 1849688064.0);
  EXPECT_DOUBLE_EQ(m[0].bytes, 12992512.0);
  EXPECT_DOUBLE_EQ(m[0].time_s, 500e-6);
  EXPECT_DOUBLE_EQ(m[0].winograd_dims.m, 8.0 * 28 * 28);  // 2x2 output tiles
  EXPECT_EQ(m[0].cudnn_algorithm, "cudnn_infer_turing_scudnn_winograd_128x128");
  // Another op, a grouped convolution or an empty kernel name is refused,
  // naming the line and the field.
  for (const auto& [row, field] :
       {std::pair{"Tesla T4,train,gemm,fp32,fwd,8,64,56,56,64,3,3,1,1,1,500,k,1,f\n", "op"},
        std::pair{"Tesla T4,train,conv,fp32,fwd,8,64,56,56,64,3,3,1,1,2,500,k,1,f\n", "groups"},
        std::pair{"Tesla T4,train,conv,fp32,fwd,8,64,56,56,64,3,3,1,1,1,500,,1,f\n", "kernel"},
        std::pair{"Tesla T4,train,conv,fp32,fwd,8,64,2,2,64,7,7,1,1,1,500,k,1,f\n", "R"}}) {
    ExpectRowRefused(ReadKernelTable, header + row, field);
  }
}

TEST(KernelCheck, ConvolutionsAgainstTheLibrarysAlgorithmByHand) {
  // Two FP32 3x3 stride-1 convolutions "measured" on NeuSight's T4, timed by
  // hand as the step model times them on the catalog t4 (no shape term):
  // max(F' / (peak eff(F')), bytes / (bandwidth mem_eff(bytes))) + launch,
  // F' = 16/36 F with the Winograd curve, F with the implicit-GEMM one.
  const Device t4 = LoadDevice("t4");
  ASSERT_FALSE(t4.winograd_efficiency.points.empty());
  ASSERT_EQ(t4.winograd_efficiency.half_dim, 0);
  ASSERT_EQ(t4.compute_efficiency.half_dim, 0);
  const auto hand = [&](const KernelMeasurement& m, bool winograd) {
    const double f = winograd ? m.direct_flops * 16 / 36 : m.direct_flops;
    const EfficiencyCurve& curve = winograd ? t4.winograd_efficiency : t4.compute_efficiency;
    return std::max(f / (8.1e12 * curve.At(f)),
                    m.bytes / (3.2e11 * t4.memory_efficiency.At(m.bytes))) +
           t4.kernel_launch_s;
  };
  const auto conv = [](double n, double c, double hw, double k, const std::string& kernel) {
    KernelMeasurement m;
    m.gpu = "Tesla T4";
    m.op = "conv";
    m.pass = "fwd";
    m.kernel_h = m.kernel_w = 3;
    m.direct_flops = 2 * n * k * hw * hw * c * 9;
    m.bytes = 4 * (n * c * hw * hw + k * c * 9 + n * k * hw * hw);
    m.dims = ConvGemmDims(ConvAlgorithm::kImplicitGemm, "fwd", n, c, hw, hw, k, 3, 3, hw, hw);
    m.winograd_dims =
        ConvGemmDims(ConvAlgorithm::kWinogradF2x2_3x3, "fwd", n, c, hw, hw, k, 3, 3, hw, hw);
    m.cudnn_algorithm = kernel;
    return m;
  };
  // a: cuDNN ran Winograd, taking twice the modeled Winograd time (the model
  // 50% too fast); b: cuDNN ran an implicit GEMM exactly as long as the GEMM
  // curve says, so the rule's Winograd time is off by wino/gemm - 1.
  KernelMeasurement a = conv(16, 128, 28, 128, "scudnn_winograd_128x128");
  a.time_s = 2 * hand(a, true);
  KernelMeasurement b = conv(4, 96, 14, 96, "volta_sgemm_64x64_nn");
  b.time_s = hand(b, false);
  const std::vector<KernelCheck> checks = CheckCatalogOnKernels({a, b}, "c.csv", 0);
  ASSERT_EQ(checks.size(), 1u);
  const KernelCheck& c = checks[0];
  EXPECT_EQ(c.unit, "winograd");
  EXPECT_EQ(c.basis, "fitted");
  EXPECT_EQ(c.convolutions, 2);
  EXPECT_EQ(c.winograd_by_library, 1);
  EXPECT_EQ(c.winograd_by_rule, 2);
  EXPECT_EQ(c.agree, 1);
  EXPECT_NEAR(c.median_signed_error_library_winograd, -0.5, 1e-12);
  const double b_rule = hand(b, true) / b.time_s - 1;
  EXPECT_NEAR(c.median_signed_error_library_other, b_rule, 1e-12);
  EXPECT_NEAR(c.median_signed_error, (-0.5 + b_rule) / 2, 1e-12);
  // The faster curve for each: its |error| and whether it names the
  // library's family.
  const bool a_wino = hand(a, true) < hand(a, false);
  const bool b_wino = hand(b, true) < hand(b, false);
  EXPECT_EQ(c.agree_fastest, (a_wino ? 1 : 0) + (b_wino ? 0 : 1));
  const double a_fast = std::abs(hand(a, a_wino) / a.time_s - 1);
  const double b_fast = std::abs(hand(b, b_wino) / b.time_s - 1);
  EXPECT_NEAR(c.median_abs_error_fastest, (a_fast + b_fast) / 2, 1e-12);
}

TEST(AllReduceCheck, RingTimesOfTheCatalogLinkByHand) {
  // 1,000,000 floats = 4 MB over 4 P100s on the catalog p100's PCIe link
  // (15.75 GB/s, 10 us): 2*3/4 * 4e6 / 15.75e9 + 2*3 * 10e-6 = 380.952 us
  // + 60 us = 440.952 us; measured twice that, the model 50% too fast. The
  // bus bandwidth of the largest buffer: 2*3/4 * 4e6 B / 881.905 us.
  const std::string header = "gpu,op,precision,size_floats,n_gpus,n_nodes,time_us,algorithm\n";
  const double modeled_us = 2.0 * 3 / 4 * 4e6 / 15.75e9 * 1e6 + 2 * 3 * 10.0;
  ASSERT_NEAR(modeled_us, 440.952, 1e-3);
  const std::vector<AllReduceMeasurement> m = ReadAllReduceTable(WriteFile(
      "ar.csv", header + fmt::format("P100,allreduce,fp32,1000000,4,,{},NCCL\n", 2 * modeled_us) +
                    "P100,allreduce,fp16,1000000,4,,100,NCCL\n"
                    "P100,allreduce,fp32,1000000,16,2,900,Baidu\n"
                    "TitanX,allreduce,fp32,1000000,4,,100,NCCL\n"));
  ASSERT_EQ(m.size(), 3u);  // FP32 only
  EXPECT_DOUBLE_EQ(m[0].bytes, 4e6);
  EXPECT_EQ(m[0].devices, 4);
  EXPECT_EQ(m[0].nodes, 1);
  EXPECT_EQ(m[1].nodes, 2);
  const std::vector<AllReduceCheck> checks = CheckLinksOnAllReduce(m);
  ASSERT_EQ(checks.size(), 2u);  // the TitanX has no catalog device
  EXPECT_EQ(checks[0].device, "p100");
  EXPECT_EQ(checks[0].link, "pcie");
  EXPECT_EQ(checks[0].measurements, 1);
  EXPECT_NEAR(checks[0].median_signed_error, -0.5, 1e-9);
  EXPECT_NEAR(checks[0].measured_bus_bandwidth, 1.5 * 4e6 / (2 * modeled_us * 1e-6), 1e-3);
  // Two nodes need a network link the catalog device lacks: not modeled.
  EXPECT_EQ(checks[1].measurements, 0);
  EXPECT_NE(checks[1].problem.find("2 nodes"), std::string::npos);
  // Bad rows name the line and field.
  for (const auto& [row, field] :
       {std::pair{"P100,gemm,fp32,1000000,4,,100,NCCL\n", "op"},
        std::pair{"P100,allreduce,fp32,1000000,1,,100,NCCL\n", "n_gpus"},
        std::pair{"P100,allreduce,fp32,1000000,4,8,100,NCCL\n", "n_nodes"},
        std::pair{"P100,allreduce,fp32,-5,4,,100,NCCL\n", "size_floats"},
        std::pair{"P100,allreduce,fp32,1000000,4,,nan,NCCL\n", "time_us"}}) {
    ExpectRowRefused(ReadAllReduceTable, header + row, field);
  }
  // The committed table: DeepBench's 28 P100 rows, 21 on one node.
  const std::vector<AllReduceCheck> committed =
      CheckLinksOnAllReduce(ReadAllReduceTable(KernelDir() + "/deepbench_allreduce.csv"));
  int modeled = 0;
  for (const AllReduceCheck& c : committed) modeled += c.measurements;
  EXPECT_EQ(modeled, 21);
}

TEST(KernelFit, FitsEveryGpuAndUnitOfTheTables) {
  const KernelFitReport report = FitKernelCurves(ReadKernelTables(KernelDir()), KernelGpus());
  // V100 and T4: FP32, Winograd and tensor cores; P100: FP32 and Winograd; K40: FP32.
  ASSERT_EQ(report.fits.size(), 9u);
  for (const KernelCurveFit& fit : report.fits) {
    EXPECT_TRUE(fit.converged) << fit.gpu << " " << KernelUnitName(fit.unit);
    EXPECT_GT(fit.e_max, 0.3) << fit.gpu;
    EXPECT_LE(fit.e_max, 1.0) << fit.gpu;
  }
  // The rule against cuDNN's forward choice: 3x3 stride-1 FP32 convolutions
  // that cuDNN ran without Winograd (small ones) and a few it ran with
  // Winograd outside the rule; at least 90% agree on every GPU.
  ASSERT_EQ(report.agreement.size(), 3u);
  for (const AlgorithmAgreement& a : report.agreement) {
    EXPECT_EQ(a.convolutions, 94) << a.gpu;
    EXPECT_GE(a.agree, 85) << a.gpu;
  }
}

// A neusight_vec_large.csv of `rows` (gpu,split,op,dtype,B,H,time_us).
std::string VecTable(const std::string& name, const std::vector<std::string>& rows) {
  std::string text = "gpu,split,op,dtype,B,H,time_us,kernel,source_file\n";
  for (const std::string& row : rows) text += row + ",k,f\n";
  return WriteFile(name, text);
}

TEST(MemoryPlateau, MediansAndIntervalsByHand) {
  // A T4 (320 GB/s) with nine element-wise kernels of 125,000 x 1,000 floats
  // and two inputs (add: 12 bytes per element, 1.5 GB) timed so that
  // bytes / (time x 320 GB/s) = 0.70, 0.71, ..., 0.78: time = 1.5e9 /
  // (0.7x * 3.2e11) s. Their median is 0.74; with n = 9 the 95% interval's
  // ranks are floor(4.5 - 1.96 * 3 / 2) = 1 and ceil(4.5 + 2.94 + 1) = 9, the
  // extremes; the quartiles interpolate: 0.72 and 0.76.
  std::vector<std::string> rows;
  for (int i = 0; i < 9; ++i) {
    const double efficiency = 0.70 + 0.01 * i;
    rows.push_back(fmt::format("Tesla T4,train,add,fp32,125000,1000,{:.17g}",
                               1.5e9 / (efficiency * 3.2e11) * 1e6));
  }
  // Eight LayerNorm kernels (8 bytes per element) of 125,000 x 1,000, 1 GB,
  // at 0.50 (four) and 0.60 (four): median 0.55.
  for (int i = 0; i < 8; ++i) {
    const double efficiency = i < 4 ? 0.5 : 0.6;
    rows.push_back(fmt::format("Tesla T4,train,ln,fp32,125000,1000,{:.17g}",
                               1e9 / (efficiency * 3.2e11) * 1e6));
  }
  // Another GPU's rows, not in the list, are skipped.
  rows.push_back("Tesla K80,train,add,fp32,125000,1000,1");
  const std::vector<MemoryPlateauFit> fits =
      FitMemoryPlateaus(VecTable("vec.csv", rows), MemorySweepGpus());
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].gpu, "Tesla T4");
  EXPECT_EQ(fits[0].memory_class, MemoryClass::kElementwise);
  EXPECT_EQ(fits[0].kernels, 9);
  EXPECT_NEAR(fits[0].efficiency, 0.74, 1e-12);
  EXPECT_NEAR(fits[0].ci_low, 0.70, 1e-12);
  EXPECT_NEAR(fits[0].ci_high, 0.78, 1e-12);
  EXPECT_NEAR(fits[0].q25, 0.72, 1e-12);
  EXPECT_NEAR(fits[0].q75, 0.76, 1e-12);
  ASSERT_EQ(fits[0].ops.size(), 1u);
  EXPECT_EQ(fits[0].ops[0].name, "add");
  EXPECT_EQ(fits[1].memory_class, MemoryClass::kNormalization);
  EXPECT_EQ(fits[1].kernels, 8);
  EXPECT_NEAR(fits[1].efficiency, 0.55, 1e-12);
  EXPECT_STREQ(MemoryClassName(fits[1].memory_class), "normalization");

  // The curve: the assumed shape scaled to the plateau, 0.7 x 0.74 / 0.85 at
  // 10 MB = 0.6094 (four digits), 0.74 from 100 MB.
  const EfficiencyCurve curve = MemoryCurveWithPlateau(0.74);
  ASSERT_EQ(curve.points.size(), 5u);
  EXPECT_DOUBLE_EQ(curve.points[3].size, 1e7);
  EXPECT_DOUBLE_EQ(curve.points[3].efficiency, 0.6094);
  EXPECT_DOUBLE_EQ(curve.points[4].efficiency, 0.74);
  EXPECT_NEAR(curve.At(1e9), 0.74, 1e-12);

  // The T4 takes both as fitted, the V100 SXM2 nothing (its sweep GPU has no
  // rows here), the K80 has no sweep GPU at all.
  Device t4 = LoadDevice("t4");
  EXPECT_EQ(ApplyMemoryPlateaus(t4, fits, MemorySweepGpus()),
            (std::vector<std::string>{"efficiency.memory", "efficiency.memory_normalization"}));
  EXPECT_DOUBLE_EQ(t4.memory_efficiency.points.back().efficiency, 0.74);
  EXPECT_DOUBLE_EQ(t4.normalization_memory_efficiency.points.back().efficiency, 0.55);
  EXPECT_EQ(t4.bases.at("efficiency.memory_normalization"), "fitted");
  Device v100 = LoadDevice("v100-sxm2");
  EXPECT_TRUE(ApplyMemoryPlateaus(v100, fits, MemorySweepGpus()).empty());
  Device k80 = LoadDevice("k80");
  EXPECT_TRUE(ApplyMemoryPlateaus(k80, fits, MemorySweepGpus()).empty());
}

TEST(MemoryPlateau, BadRowsNameTheirLineAndField) {
  const auto message = [](const std::string& path) {
    try {
      FitMemoryPlateaus(path, MemorySweepGpus());
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string ok = "Tesla T4,train,add,fp32,125000,1000,7000";
  std::string m = message(VecTable("op.csv", {ok, "Tesla T4,train,exp,fp32,125000,1000,7000"}));
  EXPECT_NE(m.find(":3:"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown op 'exp'"), std::string::npos) << m;
  // 12 x 1000 x 1000 = 12 MB: its time would be mostly dispatch.
  m = message(VecTable("small.csv", {"Tesla T4,train,add,fp32,1000,1000,70"}));
  EXPECT_NE(m.find("under the plateau"), std::string::npos) << m;
  m = message(VecTable("dtype.csv", {"Tesla T4,train,add,fp16,125000,1000,7000"}));
  EXPECT_NE(m.find("expected fp32"), std::string::npos) << m;
  m = message(VecTable("neg.csv", {"Tesla T4,train,add,fp32,125000,1000,-1"}));
  EXPECT_NE(m.find("time_us"), std::string::npos) << m;
  EXPECT_THROW(FitMemoryPlateaus(WriteFile("nocol.csv", "gpu,op,B,H\nTesla T4,add,1,1\n"),
                                 MemorySweepGpus()),
               DataError);
  EXPECT_THROW(FitMemoryPlateaus("/nonexistent/vec.csv", MemorySweepGpus()), InputError);
}

TEST(MemoryPlateau, TheH200NormalizationPlateauIsTheMedianOfItsTwelveRowsByHand) {
  // data/llm-gpu/memory_ops.csv: 12 LayerNorm, RMSNorm and softmax rows; the
  // middle two of their bytes / (median time x 4.8e12 B/s):
  //   rmsnorm bwd 8192x4096: 201,326,592 / (0.12e-3 x 4.8e12) = 0.349525
  //   softmax bwd 8192x4096: 201,326,592 / (0.103136e-3 x 4.8e12) = 0.406677
  // median (0.349525 + 0.406677) / 2 = 0.378101; lowest softmax fwd
  // 8192x8192 0.220146, highest rmsnorm fwd 8192x4096 0.607237.
  const MemorySweepGpu h200 = MemorySweepGpus().back();
  ASSERT_EQ(h200.name, "H200");
  const MemoryPlateauFit fit =
      FitFirstHandNormalizationPlateau(FirstHandDir() + "/memory_ops.csv", h200);
  EXPECT_EQ(fit.kernels, 12);
  EXPECT_EQ(fit.memory_class, MemoryClass::kNormalization);
  EXPECT_NEAR(fit.efficiency, 0.378101, 1e-6);
  ASSERT_EQ(fit.ops.size(), 3u);
  // Served: h200 fitted, h100 carried; the element-wise curve is not touched.
  Device d = LoadDevice("h100");
  const EfficiencyCurve elementwise = d.memory_efficiency;
  EXPECT_EQ(ApplyMemoryPlateaus(d, {fit}, MemorySweepGpus()),
            std::vector<std::string>{"efficiency.memory_normalization"});
  EXPECT_NEAR(d.normalization_memory_efficiency.points.back().efficiency, 0.378101, 1e-3);
  EXPECT_EQ(d.memory_efficiency.points.back().efficiency, elementwise.points.back().efficiency);
  EXPECT_EQ(d.bases.at("efficiency.memory_normalization"), "carried");
  // Fewer than 8 rows: refused, naming the file.
  const std::string few =
      WriteFile("few_memory_ops.csv",
                "op,impl,pass,dtype,tokens,hidden,elements,bytes,median_ms,status,note\n"
                "layernorm,torch,fwd,bf16,8192,4096,33554432,134217728,0.0592,ok,\n");
  EXPECT_THROW(FitFirstHandNormalizationPlateau(few, h200), DataError);
}

TEST(MemoryPlateau, TheCatalogCarriesThePlateausOfTheCommittedSweeps) {
  // As TheCatalogCarriesTheCurvesOfTheCommittedTables, for the memory curves.
  std::vector<MemoryPlateauFit> fits =
      FitMemoryPlateaus(KernelDir() + "/neusight_vec_large.csv", MemorySweepGpus());
  // Seven GPUs, both classes each.
  ASSERT_EQ(fits.size(), 14u);
  // The H200's normalization plateau of this project's run.
  fits.push_back(FitFirstHandNormalizationPlateau(FirstHandDir() + "/memory_ops.csv",
                                                  MemorySweepGpus().back()));
  int served = 0;
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    const Device catalog = LoadDevice(name);
    Device refit = catalog;
    const std::vector<std::string> fields = ApplyMemoryPlateaus(refit, fits, MemorySweepGpus());
    served += !fields.empty();
    for (const auto& [catalog_curve, refit_curve] :
         {std::pair{&catalog.memory_efficiency, &refit.memory_efficiency},
          std::pair{&catalog.normalization_memory_efficiency,
                    &refit.normalization_memory_efficiency}}) {
      ASSERT_EQ(catalog_curve->points.size(), refit_curve->points.size()) << name;
      for (size_t i = 0; i < catalog_curve->points.size(); ++i) {
        EXPECT_DOUBLE_EQ(catalog_curve->points[i].efficiency, refit_curve->points[i].efficiency)
            << name << " point " << i;
      }
    }
    for (const std::string& field : fields) {
      EXPECT_EQ(catalog.sources.at(field), refit.sources.at(field)) << name << " " << field;
    }
  }
  // V100 x3, A100 x2, H100, P100, T4; issue 30's L4 (fitted to its own sweep), L40S (carried
  // from the L4) and the HBM devices carried from the A100 80 GB PCIe: H200, B200, B300, GB200,
  // GB300, MI300X, MI325X, MI355X, Gaudi 2 and Gaudi 3; issue 32's HBM devices carried from
  // the A100 80 GB PCIe (A100 PCIe 80 GB, A30, H100 PCIe) and GDDR devices from the L4 (A10G,
  // L40, RTX A5000, RTX 4090, RX 7900 XTX).
  EXPECT_EQ(served, 28);
}

}  // namespace
}  // namespace fitspeed

#pragma once
// Which implementation serves the heavy CUDA ops. Ours ("custom") and the vendor
// library's, chosen at run time so a benchmark can swap one kernel inside a real
// training run and a test can compare them:
//
//   EMBER_GEMM=custom|cublas   EMBER_CONV=custom|cudnn      (environment, read once)
//   ember::kernels::set_gemm_provider(ember::kernels::GemmProvider::cublas);  (code)
//
// The CPU backend has one implementation of each and ignores these.
namespace ember::kernels {

enum class GemmProvider { custom, cublas };
enum class ConvProvider { custom, cudnn };

GemmProvider gemm_provider();
void set_gemm_provider(GemmProvider provider);
ConvProvider conv_provider();
void set_conv_provider(ConvProvider provider);
const char* gemm_provider_name(GemmProvider provider);
const char* conv_provider_name(ConvProvider provider);

}  // namespace ember::kernels

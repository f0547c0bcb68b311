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

// Selects both providers for one scope and restores the previous ones:
//   { ember::kernels::ProviderScope vendor(GemmProvider::cublas, ConvProvider::cudnn); ... }
class ProviderScope {
 public:
  ProviderScope(GemmProvider gemm, ConvProvider conv) : gemm_(gemm_provider()), conv_(conv_provider()) {
    set_gemm_provider(gemm);
    set_conv_provider(conv);
  }
  ~ProviderScope() {
    set_gemm_provider(gemm_);
    set_conv_provider(conv_);
  }
  ProviderScope(const ProviderScope&) = delete;
  ProviderScope& operator=(const ProviderScope&) = delete;

 private:
  GemmProvider gemm_;
  ConvProvider conv_;
};

}  // namespace ember::kernels

// The CUDA raw backend keeps RawBackend's event contract (memory/raw_backend.h) on a real
// device: an event recorded on the default stream completes once waited on, and waiting on
// the stream itself succeeds. The caching allocator's stream rule rests on these answers.
#include "memory/raw_backend.h"
#include "tests/support/expect.h"
#include "tests/support/gpu_test_case.h"

using namespace ember;

EMBER_CUDA_TEST_CASE("the CUDA backend records, waits on and destroys events", "[caching][streams]") {
  std::unique_ptr<RawBackend> backend = make_cuda_backend(0);
  void* p = backend->malloc(1 << 20);
  REQUIRE(p != nullptr);
  backend->fill_bytes(p, 0, 1 << 20);
  RawBackend::Event event = nullptr;
  REQUIRE(backend->record_event(nullptr, event));
  CHECK(event != nullptr);
  CHECK(backend->synchronize_event(event));
  CHECK(backend->event_done(event));
  CHECK(backend->synchronize_stream(nullptr));
  backend->destroy_event(event);
  backend->free(p, 1 << 20);
}

#pragma once
// Test cases that need GPUs, which tests/main.cpp skips on a machine with fewer: named
// "cuda: ..." and "cuda x2: ...", tagged [cuda] and [cuda][multigpu].
//
//   EMBER_CUDA_TEST_CASE("the CUDA loader delivers the CPU loader's batches", "[data]") { ... }
//   EMBER_MULTI_GPU_TEST_CASE("a loader on cuda:1 ...", "[data]") { ... }
#include <catch2/catch.hpp>

#define EMBER_CUDA_TEST_CASE(name, tags) TEST_CASE("cuda: " name, "[cuda]" tags)
#define EMBER_MULTI_GPU_TEST_CASE(name, tags) TEST_CASE("cuda x2: " name, "[cuda][multigpu]" tags)

// SPDX-License-Identifier: MIT
//
// gbench: libtopdown in Google Benchmark, through the installed helper
// <topdown_benchmark.hpp>.  Each benchmark's timing loop is one region; its
// level-1 TopDown shares in percent, their error bound and the slots per
// iteration become state.counters, printed as extra columns and written to
// --benchmark_format=json|csv like any other counter.
//
//   c++ gbench.cc $(pkg-config --cflags --libs topdown) -lbenchmark -lpthread
//
// Exit status 2 means no usable PMU here (the reason is printed); `make
// gbench` then runs the same binary on the test emulator, labelled.
#include <topdown_benchmark.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace {

using topdown::measure;

constexpr uint32_t kBytes = 1u << 16;
constexpr uint32_t kSmall = 1u << 12;  // 16 KiB: L1-resident
constexpr uint32_t kLarge = 1u << 24;  // 64 MiB: DRAM-bound

uint64_t rng = 88172645463325252ull;

uint64_t next_random()
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

std::vector<uint8_t> random_bytes()
{
	std::vector<uint8_t> v(kBytes);
	for (auto &b : v)
		b = static_cast<uint8_t>(next_random());
	return v;
}

std::vector<uint32_t> random_cycle(uint32_t n)  // Sattolo: one cycle
{
	std::vector<uint32_t> next(n);
	for (uint32_t i = 0; i < n; i++)
		next[i] = i;
	for (uint32_t i = n - 1; i > 0; i--)
		std::swap(next[i], next[next_random() % i]);
	return next;
}

void BM_branch_predictable(benchmark::State &state)
{
	static const auto bytes = random_bytes();
	measure(state, [] {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < kBytes; i++)
			if (i & 1)
				sum += bytes[i];
		benchmark::DoNotOptimize(sum);
	});
}

void BM_branch_random(benchmark::State &state)
{
	static const auto bytes = random_bytes();
	measure(state, [] {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < kBytes; i++)
			if (bytes[i] < 128)
				sum += bytes[i];
		benchmark::DoNotOptimize(sum);
	});
}

void chase(const std::vector<uint32_t> &next)
{
	uint32_t p = 0;
	for (uint32_t i = 0; i < 4096; i++)
		p = next[p];
	benchmark::DoNotOptimize(p);
}

void BM_walk_cached(benchmark::State &state)
{
	static const auto next = random_cycle(kSmall);
	measure(state, [] { chase(next); });
}

void BM_walk_dram(benchmark::State &state)
{
	static const auto next = random_cycle(kLarge);
	measure(state, [] { chase(next); });
}

constexpr uint64_t kMul = 6364136223846793005ull, kAdd = 1442695040888963407ull;

void BM_dep_chain(benchmark::State &state)
{
	measure(state, [] {
		uint64_t x = 1;
		for (uint32_t i = 0; i < 4096; i++) {
			x = x * kMul + kAdd;
			benchmark::DoNotOptimize(x);
		}
	});
}

void BM_independent(benchmark::State &state)
{
	measure(state, [] {
		uint64_t a = 1, b = 2, c = 3, d = 4;
		for (uint32_t i = 0; i < 4096; i += 4) {
			a = a * kMul + kAdd;
			b = b * kMul + kAdd;
			c = c * kMul + kAdd;
			d = d * kMul + kAdd;
			benchmark::DoNotOptimize(a);
			benchmark::DoNotOptimize(b);
			benchmark::DoNotOptimize(c);
			benchmark::DoNotOptimize(d);
		}
	});
}

}  // namespace

BENCHMARK(BM_branch_predictable);
BENCHMARK(BM_branch_random);
BENCHMARK(BM_walk_cached);
BENCHMARK(BM_walk_dram);
BENCHMARK(BM_dep_chain);
BENCHMARK(BM_independent);

int main(int argc, char **argv)
{
	int err = 0;
	struct td *td = topdown::thread_handle(&err);
	struct td_info info = {};

	// The helper alone would time the benchmarks without TopDown
	// counters here (measure() says why once); this example exits 2
	// instead, so that make gbench runs it on the test emulator
	// (examples/run-demo.sh), where the context says so.
	if (!td) {
		std::fprintf(stderr, "gbench: td_open: %s\n", td_strerror(err));
		return 2;
	}
	info.size = sizeof(info);
	if (td_query(td, &info) == 0 && (info.flags & TD_INFO_EMULATED))
		benchmark::AddCustomContext(
			"topdown", "EMULATED PMU: synthetic counts");
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}

#pragma once
// The one place the benchmarks set how many threads the engine's forward pass uses.
namespace ridge::bench {

void set_engine_threads(int threads);

}  // namespace ridge::bench

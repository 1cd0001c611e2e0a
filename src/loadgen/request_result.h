#pragma once
// What one request measured. Times are seconds; the runner fills start_s.
#include <string>
#include <vector>

namespace ridge::loadgen {

struct RequestResult {
  bool ok = false;
  std::string error;          // why it failed: the transport error, HTTP status and message, or the stream's error
  double start_s = 0;         // when it was sent, from the start of its run
  double ttft_s = 0;          // to the first chunk with generated text
  double e2e_s = 0;           // to the end of the stream
  std::vector<double> itl_s;  // between consecutive chunks with generated text
  int input_tokens = 0;       // the server's usage figure, else the workload's estimate
  int output_tokens = 0;      // the server's usage figure, else the number of chunks with text
  bool usage_reported = false;

  // Time per output token after the first; 0 when there is no second token.
  double tpot_s() const { return output_tokens > 1 ? (e2e_s - ttft_s) / double(output_tokens - 1) : 0; }
};

}  // namespace ridge::loadgen

// One question, one request: a split of Llama-2-7B on 16 H100s, asked through
// the scenario layer (fitspeed/scenario/llm.h). The CLI's
//   fitspeed sweep llm llama-2-7b --device h100 --devices 16 --tp 2 --seq-len 4096
// and Python's fitspeed.llm_step("llama-2-7b", "h100", devices=16, tp=2,
// seq_len=4096) fill the same request and print the same answer.
#include <iostream>

#include "fitspeed/fitspeed.h"

int main() {
  try {
    fitspeed::LlmStepRequest request;
    request.model = "llama-2-7b";
    request.cluster.device = "h100";
    request.cluster.devices = 16;
    request.training.seq_len = 4096;
    request.split.tp = 2;
    const fitspeed::LlmStepAnswer answer = request.Run();
    for (const std::string& note : answer.notes) std::cerr << note << "\n";
    std::cout << answer.BriefReport() << "\n\n" << answer.FullReport();
    return answer.usable ? 0 : 1;
  } catch (const fitspeed::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}

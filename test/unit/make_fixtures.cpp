//===- make_fixtures.cpp - input files for the tessel-run CLI tests -------===//
//
// Written at test time (ctest fixture "cli_fixtures") so no binary files live
// in the repository. Usage: make_fixtures DIR
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/Npy.h"
#include "tessel/Runtime/TensorText.h"

#include <cstdio>
#include <fstream>

using namespace tessel::rt;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fixtures DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  auto save = [&](const std::string &name, const std::string &text) {
    writeNpy(dir + "/" + name, parseTensorText(text));
  };
  try {
    save("x.npy", "2x3xf32=1 2 3 4 5 6");
    save("y.npy", "2x3xf32=10 20 30 40 50 60");
    save("sum.npy", "2x3xf32=11 22 33 44 55 66");
    // [0,0] within the default tolerance, [1,1] and [1,2] outside; [1,2] is
    // the worst element.
    save("sum_bad.npy", "2x3xf32=11.0001 22 33 44 55.5 70");
    save("sum_f64.npy", "2x3xf64=11 22 33 44 55 66");
    save("x_3x2.npy", "3x2xf32=1 2 3 4 5 6");
    save("x_i32.npy", "2x3xi32=1 2 3 4 5 6");

    std::string full = serializeNpy(parseTensorText("2x3xf32=1 2 3 4 5 6"));
    std::ofstream(dir + "/truncated.npy", std::ios::binary)
        << full.substr(0, full.size() - 5);
    std::ofstream(dir + "/not_elf.so") << "just text, not ELF\n";
  } catch (const Error &e) {
    std::fprintf(stderr, "make_fixtures: %s\n", e.what());
    return 1;
  }
  return 0;
}

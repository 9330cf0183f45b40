//===- npy_tool.cpp - .npy reader/writer driver for numpy_interop.py ------===//
//
//   npy_tool copy IN OUT   read IN with readNpy, write OUT with writeNpy
//   npy_tool print IN      print IN in inline-tensor syntax
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/Npy.h"
#include "tessel/Runtime/TensorText.h"

#include <cstdio>
#include <string>

using namespace tessel::rt;

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "copy" && argc == 4) {
      writeNpy(argv[3], readNpy(argv[2]));
      return 0;
    }
    if (mode == "print" && argc == 3) {
      std::printf("%s\n", formatTensorText(readNpy(argv[2])).c_str());
      return 0;
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "npy_tool: error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: npy_tool copy IN OUT | npy_tool print IN\n");
  return 2;
}

//===- Options.cpp - tessel-run command line parsing ----------------------===//
//
// Flags are IREE-style: --name=value (repeatable ones may be given many
// times) and bare boolean flags. '-' and '_' are interchangeable in names so
// both --expected_output and --expected-output work.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

using namespace tessel::run;

namespace {

double parseNonNegative(const std::string &flag, const std::string &v) {
  char *end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= 0))
    throw UsageError("--" + flag + " expects a non-negative number, got '" +
                     v + "'");
  return d;
}

int64_t parsePositive(const std::string &flag, const std::string &v,
                      int64_t max) {
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || n < 1 || n > max)
    throw UsageError("--" + flag + " expects an integer in [1, " +
                     std::to_string(max) + "], got '" + v + "'");
  return n;
}

/// Whether two paths name the same file: the same text, or (once both
/// directories exist) the same directory and file name.
bool samePath(const std::string &a, const std::string &b) {
  if (a == b)
    return true;
  auto canonical = [](const std::string &p) {
    size_t slash = p.find_last_of('/');
    std::string dir = slash == std::string::npos ? "." : p.substr(0, slash + 1);
    std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
    char *real = ::realpath(dir.c_str(), nullptr);
    if (!real)
      return p;
    std::string out = std::string(real) + "/" + base;
    std::free(real);
    return out;
  };
  return canonical(a) == canonical(b);
}

} // namespace

Options tessel::run::parseOptions(int argc, char **argv) {
  Options o;
  bool flagsDone = false;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (flagsDone || arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flagsDone = true;
      continue;
    }
    if (arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg.compare(0, 2, "--") != 0)
      throw UsageError("unknown flag '" + arg + "'");

    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? eq : eq - 2);
    for (char &c : name)
      if (c == '-')
        c = '_';
    bool hasValue = eq != std::string::npos;
    std::string value = hasValue ? arg.substr(eq + 1) : "";

    auto needValue = [&] {
      if (!hasValue)
        throw UsageError("flag '--" + name + "' needs a value: --" + name +
                         "=VALUE");
    };
    auto noValue = [&] {
      if (hasValue)
        throw UsageError("flag '--" + name + "' takes no value");
    };

    if (name == "function") {
      needValue();
      o.function = value;
    } else if (name == "input") {
      needValue();
      o.inputs.push_back(value);
    } else if (name == "output") {
      needValue();
      if (value != "-" && (value.size() < 2 || value[0] != '@'))
        throw UsageError("--output expects '-' (print) or '@FILE.npy', got '" +
                         value + "'");
      if (value != "-")
        for (const std::string &earlier : o.outputs)
          if (earlier != "-" && samePath(earlier.substr(1), value.substr(1)))
            throw UsageError("two --output flags write '" + value.substr(1) +
                             "': each output needs its own file");
      o.outputs.push_back(value);
    } else if (name == "expected_output") {
      needValue();
      o.expected.push_back(value);
    } else if (name == "atol") {
      needValue();
      o.atol = parseNonNegative(name, value);
    } else if (name == "rtol") {
      needValue();
      o.rtol = parseNonNegative(name, value);
    } else if (name == "benchmark") {
      needValue();
      o.benchmark = parsePositive(name, value, 100000000);
    } else if (name == "threads") {
      needValue();
      o.threads = uint32_t(parsePositive(name, value, 4096));
    } else if (name == "device") {
      needValue();
      bool ordinal = value.rfind("cuda:", 0) == 0 && value.size() > 5 &&
                     value.size() <= 9 &&
                     value.find_first_not_of("0123456789", 5) ==
                         std::string::npos;
      if (value != "cpu" && value != "cuda" && !ordinal)
        throw UsageError("--device expects cpu, cuda or cuda:N, got '" +
                         value + "'");
      o.device = value;
    } else if (name == "print_signature") {
      noValue();
      o.printSignature = true;
    } else if (name == "help") {
      noValue();
      o.help = true;
    } else if (name == "version") {
      noValue();
      o.version = true;
    } else {
      throw UsageError("unknown flag '" + arg.substr(0, eq) + "'");
    }
  }
  if (o.help || o.version)
    return o;
  if (positional.empty())
    throw UsageError("no model file given");
  o.models = positional;
  return o;
}

std::string tessel::run::usageText() {
  return R"(USAGE: tessel-run MODEL.so [flags]
       tessel-run COMPOSITION [flags]
       tessel-run A.so B.so ... [flags]

Runs a function of an artifact built by tessel-compile, or of several
artifacts linked into one model: a composition file ('tessel-composition 1'
then 'artifact PATH' lines) or a list of artifacts. Imports are linked by
component name and their interfaces checked.

Flags:
  --function=NAME        function to run (default: the only one, else 'main';
                         for a composition: its 'entry', else the only
                         function no artifact imports, else 'main')
  --input=@FILE.npy      an input from a .npy file (repeat, in order)
  --input=SPEC           an inline input, e.g. --input="2x3xf32=1 2 3 4 5 6"
  --input=@DIR           a sequence input: DIR/0.npy, DIR/1.npy, ...
  --input=none           an empty optional input
  --output=@FILE.npy     write the next output to a .npy file (repeat;
                         a sequence to the directory FILE.npy: 0.npy, ...)
  --output=-             print the next output to stdout
                         (no --output: every output is printed; outputs
                         beyond the given --output flags are printed)
  --expected_output=@FILE.npy | @DIR | none | SPEC
                         compare the next output (repeat); exit 1 on mismatch
  --atol=X               absolute tolerance (default 1e-5)
  --rtol=X               relative tolerance (default 1e-4);
                         pass if |got - expected| <= atol + rtol * |expected|
  --benchmark=N          time N runs after one warm-up, print one summary line
  --threads=N            threads the artifact may use (default 1)
  --device=D             where to run: cpu, cuda or cuda:N (the N-th CUDA
                         device); fails if the artifact was compiled for
                         another device (default: the artifact's own)
  --print_signature      print function signatures and exit
  --help                 show this help
  --version              show the version

Exit status: 0 success, 1 error or output mismatch, 2 bad command line.
)";
}

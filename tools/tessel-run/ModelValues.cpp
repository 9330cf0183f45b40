//===- ModelValues.cpp - a model's sequences and optionals ----------------===//
//
// See ModelValues.h. A sequence crosses the ABI as `sizes` (i64
// [count, rank], each element's shape, padded in front with -1 where the
// elements differ in rank) and `data` (the elements one after
// another); an optional as `present` (i1 scalar) before its value's parts,
// which hold zeros or an empty sequence when it is empty.
//
//===----------------------------------------------------------------------===//

#include "ModelValues.h"
#include "Compare.h"
#include "tessel/Runtime/Npy.h"
#include "tessel/Runtime/TensorText.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

using namespace tessel;
using namespace tessel::run;

namespace {

[[noreturn]] void fail(const std::string &message) {
  throw rt::Error(TESSEL_INVALID_ARGUMENT, message);
}

rt::Tensor copyOf(const rt::Tensor &t) {
  rt::Tensor c = rt::Tensor::allocate(t.dtype(), t.dims());
  if (t.byteSize())
    std::memcpy(c.data(), t.data(), t.byteSize());
  return c;
}

/// Zeros of `info`'s shape, its named dimensions 0.
rt::Tensor zerosOf(const rt::ValueInfo &info) {
  std::vector<int64_t> dims = info.dims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (info.isDynamic(d))
      dims[d] = 0;
  return rt::Tensor::allocate(info.dtype, dims);
}

} // namespace

std::vector<Slot>
tessel::run::groupParts(const std::vector<rt::ValueInfo> &infos) {
  std::vector<Slot> slots;
  for (size_t i = 0; i < infos.size(); ++i) {
    const std::string &part = infos[i].part;
    if (part.empty()) {
      Slot s;
      s.name = infos[i].name;
      s.tensor = long(i);
      slots.push_back(s);
      continue;
    }
    size_t colon = part.find(':');
    std::string role = part.substr(0, colon), owner = part.substr(colon + 1);
    if (slots.empty() || slots.back().name != owner ||
        (slots.back().tensor < 0 && slots.back().sizes < 0 &&
         slots.back().present < 0)) {
      Slot s;
      s.name = owner;
      slots.push_back(s);
    }
    Slot &s = slots.back();
    long *field = role == "present" ? &s.present
                  : role == "sizes" ? &s.sizes
                  : role == "data"  ? &s.data
                  : role == "value" ? &s.tensor
                                    : nullptr;
    if (!field || *field >= 0)
      fail("malformed parts of '" + owner + "' in the manifest");
    *field = long(i);
    s.optional = s.present >= 0;
    s.sequence = s.sizes >= 0 || s.data >= 0;
  }
  for (const Slot &s : slots)
    if ((s.sequence && (s.sizes < 0 || s.data < 0 || s.tensor >= 0)) ||
        (!s.sequence && s.tensor < 0))
      fail("malformed parts of '" + s.name + "' in the manifest");
  return slots;
}

ModelValue tessel::run::loadValue(const std::string &spec) {
  ModelValue v;
  if (spec == "none") {
    v.present = false;
    return v;
  }
  if (!spec.empty() && spec[0] == '@' &&
      std::filesystem::is_directory(spec.substr(1))) {
    // A sequence: 0.npy, 1.npy, ... (no gaps).
    std::string dir = spec.substr(1);
    v.sequence = true;
    std::map<long, std::string> files;
    for (const auto &e : std::filesystem::directory_iterator(dir)) {
      std::string stem = e.path().stem().string();
      if (e.path().extension() != ".npy" || stem.empty() ||
          stem.find_first_not_of("0123456789") != std::string::npos ||
          stem.size() > 9 || (stem.size() > 1 && stem[0] == '0'))
        fail("sequence directory '" + dir + "' holds '" +
             e.path().filename().string() + "' (expected 0.npy, 1.npy, ...)");
      files[std::stol(stem)] = e.path().string();
    }
    long next = 0;
    for (const auto &[n, path] : files) {
      if (n != next++)
        fail("sequence directory '" + dir + "' lacks " +
             std::to_string(next - 1) + ".npy");
      v.tensors.push_back(rt::readNpy(path));
    }
    return v;
  }
  v.tensors.push_back(!spec.empty() && spec[0] == '@'
                          ? rt::readNpy(spec.substr(1))
                          : rt::parseTensorText(spec));
  return v;
}

std::vector<rt::Tensor>
tessel::run::packInputs(const std::vector<Slot> &slots,
                        const std::vector<rt::ValueInfo> &infos,
                        std::vector<ModelValue> values) {
  std::vector<rt::Tensor> out(infos.size());
  if (values.size() != slots.size()) {
    // The runtime reports the count (as tensors); keep its message for
    // plain functions.
    bool plain = slots.size() == infos.size();
    if (!plain)
      fail("the function takes " + std::to_string(slots.size()) +
           " input(s), " + std::to_string(values.size()) + " given");
    std::vector<rt::Tensor> flat;
    for (ModelValue &v : values)
      for (rt::Tensor &t : v.tensors)
        flat.push_back(std::move(t));
    return flat;
  }
  for (size_t k = 0; k < slots.size(); ++k) {
    const Slot &s = slots[k];
    ModelValue &v = values[k];
    std::string what = "input " + std::to_string(k) + " ('" + s.name + "')";
    if (!v.present && !s.optional)
      fail(what + " is not an optional; 'none' cannot be given");
    if (s.optional) {
      rt::Tensor flag = rt::Tensor::allocate(TESSEL_DTYPE_I1, {});
      flag.data<uint8_t>()[0] = v.present ? 1 : 0;
      out[size_t(s.present)] = std::move(flag);
    }
    if (!s.sequence) {
      if (v.sequence)
        fail(what + " is a tensor, not a sequence");
      out[size_t(s.tensor)] = v.present ? std::move(v.tensors[0])
                                        : zerosOf(infos[size_t(s.tensor)]);
      continue;
    }
    if (v.present && !v.sequence)
      fail(what + " is a sequence: give a directory of N.npy files");
    const rt::ValueInfo &sizesInfo = infos[size_t(s.sizes)];
    const rt::ValueInfo &dataInfo = infos[size_t(s.data)];
    // Rows as wide as the highest rank (the model's, where it declares
    // one), a lower-rank element's padded in front with -1.
    int64_t rank = sizesInfo.isDynamic(1) ? 0 : sizesInfo.dims[1];
    int64_t total = 0;
    for (size_t e = 0; e < v.tensors.size(); ++e) {
      const rt::Tensor &t = v.tensors[e];
      if (t.dtype() != dataInfo.dtype)
        fail(what + " element " + std::to_string(e) + " is " +
             t.typeString() + ", not of the sequence's " +
             tessel_dtype_name(dataInfo.dtype));
      if (!sizesInfo.isDynamic(1) && int64_t(t.rank()) != rank)
        fail(what + " element " + std::to_string(e) + " is " + t.typeString() +
             ", not of rank " + std::to_string(rank) + " (the model's)");
      rank = std::max<int64_t>(rank, int64_t(t.rank()));
      total += int64_t(t.numElements());
    }
    rt::Tensor sizes = rt::Tensor::allocate(
        TESSEL_DTYPE_I64, {int64_t(v.tensors.size()), rank});
    rt::Tensor data = rt::Tensor::allocate(dataInfo.dtype, {total});
    size_t at = 0;
    for (size_t e = 0; e < v.tensors.size(); ++e) {
      const rt::Tensor &t = v.tensors[e];
      std::vector<int64_t> dims = t.dims();
      int64_t *row = sizes.data<int64_t>() + e * size_t(rank);
      size_t pad = size_t(rank) - dims.size();
      std::fill(row, row + pad, int64_t(-1));
      std::copy(dims.begin(), dims.end(), row + pad);
      if (t.byteSize())
        std::memcpy(static_cast<char *>(data.data()) + at, t.data(),
                    t.byteSize());
      at += t.byteSize();
    }
    out[size_t(s.sizes)] = std::move(sizes);
    out[size_t(s.data)] = std::move(data);
  }
  return out;
}

std::vector<ModelValue>
tessel::run::unpackOutputs(const std::vector<Slot> &slots,
                           std::vector<rt::Tensor> &outputs) {
  std::vector<ModelValue> values;
  for (const Slot &s : slots) {
    ModelValue v;
    v.sequence = s.sequence;
    if (s.optional)
      v.present = outputs[size_t(s.present)].data<uint8_t>()[0] != 0;
    if (!v.present) {
      values.push_back(std::move(v));
      continue;
    }
    if (!s.sequence) {
      v.tensors.push_back(copyOf(outputs[size_t(s.tensor)]));
      values.push_back(std::move(v));
      continue;
    }
    const rt::Tensor &sizes = outputs[size_t(s.sizes)];
    const rt::Tensor &data = outputs[size_t(s.data)];
    std::vector<int64_t> sd = sizes.dims();
    size_t elemBytes = tessel_dtype_size(data.dtype()), at = 0;
    for (int64_t e = 0; e < sd[0]; ++e) {
      std::vector<int64_t> dims(sizes.data<int64_t>() + e * sd[1],
                                sizes.data<int64_t>() + (e + 1) * sd[1]);
      // A lower-rank element's row is padded in front with -1.
      dims.erase(dims.begin(), std::find_if(dims.begin(), dims.end(),
                                            [](int64_t d) { return d != -1; }));
      if (std::any_of(dims.begin(), dims.end(),
                      [](int64_t d) { return d < 0; }))
        throw rt::Error(TESSEL_INTERNAL, "output '" + s.name + "': element " +
                                             std::to_string(e) +
                                             " has a negative size");
      rt::Tensor t = rt::Tensor::allocate(data.dtype(), dims);
      if (at + t.byteSize() > data.byteSize())
        throw rt::Error(TESSEL_INTERNAL,
                        "output '" + s.name + "': its sizes exceed its data");
      if (t.byteSize())
        std::memcpy(t.data(), static_cast<const char *>(data.data()) + at,
                    t.byteSize());
      at += t.numElements() * elemBytes;
      v.tensors.push_back(std::move(t));
    }
    values.push_back(std::move(v));
  }
  return values;
}

std::string tessel::run::formatValue(const ModelValue &v) {
  if (!v.present)
    return "none";
  if (!v.sequence)
    return rt::formatTensorText(v.tensors[0]);
  std::string s = "sequence of " + std::to_string(v.tensors.size());
  for (size_t e = 0; e < v.tensors.size(); ++e)
    s += "\n[" + std::to_string(e) + "] " + rt::formatTensorText(v.tensors[e]);
  return s;
}

void tessel::run::writeValue(const std::string &path, const ModelValue &v) {
  if (!v.present)
    fail("cannot write the empty optional to '" + path +
         "' (print it with --output=-)");
  if (!v.sequence) {
    rt::writeNpy(path, v.tensors[0]);
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    fail("cannot create the directory '" + path + "': " + ec.message());
  for (size_t e = 0; e < v.tensors.size(); ++e)
    rt::writeNpy(path + "/" + std::to_string(e) + ".npy", v.tensors[e]);
}

std::string tessel::run::compareValues(const ModelValue &got,
                                       const ModelValue &expected, double atol,
                                       double rtol, const std::string &label) {
  auto kind = [](const ModelValue &v) {
    return !v.present ? "an empty optional"
           : v.sequence ? "a sequence of " + std::to_string(v.tensors.size())
                        : std::string("a tensor");
  };
  if (!got.present && !expected.present)
    return "";
  if (got.present != expected.present || got.sequence != expected.sequence ||
      got.tensors.size() != expected.tensors.size())
    return label + ": got " + kind(got) + ", expected " + kind(expected);
  for (size_t e = 0; e < got.tensors.size(); ++e) {
    Comparison c = compareTensors(
        got.tensors[e], expected.tensors[e], atol, rtol,
        got.sequence ? label + " element " + std::to_string(e) : label);
    if (!c.match)
      return c.report;
  }
  return "";
}

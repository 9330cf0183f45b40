//===- Status.cpp - tessel_status_t and library version -------------------===//

#include "Internal.h"

using namespace tessel::rt;

tessel_status_t *detail::makeStatus(tessel_status_code_t code,
                                    std::string message) {
  try {
    return new tessel_status{code, std::move(message)};
  } catch (...) {
    return nullptr;
  }
}

extern "C" {

const char *tessel_runtime_version(void) { return TESSEL_RUNTIME_VERSION; }

tessel_status_code_t tessel_status_code(const tessel_status_t *status) {
  return status ? status->code : TESSEL_OK;
}

const char *tessel_status_message(const tessel_status_t *status) {
  return status ? status->message.c_str() : "OK";
}

void tessel_status_free(tessel_status_t *status) { delete status; }

const char *tessel_status_code_name(tessel_status_code_t code) {
  switch (code) {
  case TESSEL_OK: return "OK";
  case TESSEL_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case TESSEL_NOT_FOUND: return "NOT_FOUND";
  case TESSEL_IO_ERROR: return "IO_ERROR";
  case TESSEL_INVALID_ARTIFACT: return "INVALID_ARTIFACT";
  case TESSEL_UNSUPPORTED: return "UNSUPPORTED";
  case TESSEL_EXECUTION_FAILED: return "EXECUTION_FAILED";
  case TESSEL_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
  case TESSEL_INTERNAL: return "INTERNAL";
  }
  return "UNKNOWN";
}

} // extern "C"

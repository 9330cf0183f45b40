"""Calls the compiled encoder side's entry directly through the artifact
ABI (no runtime), for composition.test:

  call_entry.py unresolved ENCODER.so
      the import table is left empty: the entry must return
      TESSEL_ENTRY_UNRESOLVED_IMPORT (-2) without touching its output
  call_entry.py failing ENCODER.so PROVIDER.so
      slot 0 points at PROVIDER's tessel_entry_decoder, which fails (5)
      after writing garbage: the entry must return 5 with a zero output
"""
import ctypes
import sys

import numpy as np


class Context(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_threads", ctypes.c_uint32)]


def main():
    mode, encoder = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(encoder)
    if mode == "failing":
        provider = ctypes.CDLL(sys.argv[3])
        table = (ctypes.c_void_p * 1).in_dll(lib, "tessel_artifact_imports")
        table[0] = ctypes.cast(provider.tessel_entry_decoder, ctypes.c_void_p)
    x = np.ones((6, 4), np.float32)
    y = np.full((6, 3), 7.0, np.float32)
    buffers = (ctypes.c_void_p * 2)(x.ctypes.data, y.ctypes.data)
    ctx = Context(ctypes.sizeof(Context), 1)
    entry = lib.tessel_entry_main
    entry.restype = ctypes.c_int32
    rc = entry(buffers, ctypes.byref(ctx))
    print(f"returned {rc}; output {'zero' if not y.any() else 'untouched' if (y == 7).all() else 'other'}")


if __name__ == "__main__":
    main()

"""Prints 'NAME SIZE' for each section of a 64-bit little-endian ELF file,
so tests can check where bytes went (no binutils needed)."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF"
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
def header(i):
    return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
strtab = header(shstrndx)
for i in range(shnum):
    name_off, _, _, _, _, size, *_ = header(i)
    start = strtab[4] + name_off
    name = data[start:data.index(b"\0", start)].decode()
    if name:
        print(name, size)

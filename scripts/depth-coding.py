#!/usr/bin/env python3
"""How a layer file's values and depths would compress in other payload layouts (an experiment).

    scripts/depth-coding.py LAYER.kmt [BLOCKS] [LEVEL]

Reads BLOCKS blocks (default 60) spread evenly over an encoding-1 layer file (docs/format.md,
"Blocks"), and prints the bits per state each layout takes when every block is compressed with zstd
at LEVEL (default 15, as `pack`): the blocks as stored, the payload regrouped by index mod P, values
and depth codes as two streams, and one side to move's depths only (the other's derived by one ply
of search, as Syzygy derives DTZ for one side). Needs the Python packages numpy and zstandard.
"""
import struct
import sys

import numpy as np
import zstandard


def blocks_of(path, count):
    """The decompressed payloads of `count` blocks spread over the layer file, with the stored sizes."""
    with open(path, "rb") as f:
        header = f.read(96)
        if header[:8] != b"KMLAYER\0":
            sys.exit(f"{path}: not a layer file")
        _states, block_states, encoding = struct.unpack_from("<QII", header, 16)
        blocks, index_at, index_len = struct.unpack_from("<QQQ", header, 32)
        if encoding != 1:
            sys.exit(f"{path}: encoding {encoding}, not values and depths (1)")
        f.seek(index_at)
        index = f.read(index_len)
        d = zstandard.ZstdDecompressor()
        for i in range(count):
            b = i * (blocks - 1) // max(count - 1, 1)
            at, length, _crc = struct.unpack_from("<QII", index, 16 * b)
            f.seek(at)
            stored = f.read(length)
            yield stored, d.decompress(stored, max_output_size=1 + 3 * block_states)


def values_and_codes(payload):
    """A block's values (0..3) and depth codes, per state."""
    width = payload[0]
    a = np.frombuffer(payload, np.uint8, offset=1)
    if width == 1:
        return a & 3, (a >> 2).astype(np.uint16)
    n = len(a) // 3
    return a[:n], a[n : 2 * n].astype(np.uint16) | a[2 * n :].astype(np.uint16) << 8


def two_bits(values):
    """Four values a byte, as encoding 2 packs them."""
    out = np.zeros((len(values) + 3) // 4, np.uint8)
    for j in range(4):
        part = values[j::4].astype(np.uint8)
        out[: len(part)] |= part << (2 * j)
    return out.tobytes()


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    z = zstandard.ZstdCompressor(level=int(sys.argv[3]) if len(sys.argv) > 3 else 15)
    sizes, states = {}, 0

    def add(name, data):
        sizes[name] = sizes.get(name, 0) + len(z.compress(bytes(data)))

    for stored, payload in blocks_of(path, count):
        values, codes = values_and_codes(payload)
        states += len(values)
        sizes["as stored"] = sizes.get("as stored", 0) + len(stored)
        if codes.max() >= 64:
            sys.exit("a block's codes do not fit six bits: this script compares width-1 blocks only")
        joint = (values | codes << 2).astype(np.uint8)
        for p in (2, 3, 4):
            add(f"grouped by index mod {p}", np.concatenate([joint[r::p] for r in range(p)]))
        even, odd = slice(0, None, 2), slice(1, None, 2)
        grouped = np.concatenate([values[even], values[odd]])
        add("values, then codes (two streams)", two_bits(values) + codes.astype(np.uint8).tobytes())
        add("values alone, grouped by index mod 2", two_bits(grouped))
        add(
            "even states' values and codes, odd states' values",
            joint[even].tobytes() + two_bits(values[odd]),
        )
    print(f"{path}: {states} states in {count} blocks")
    for name, size in sizes.items():
        print(f"  {name:52s} {size * 8 / states:.3f} bits per state")


if __name__ == "__main__":
    main()

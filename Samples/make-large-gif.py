#!/usr/bin/env python3
"""make-large-gif.py - write Samples/assets/large-banner.gif, an animated GIF of about 3.3 MB.

The sample that shows on LTE and expires on 3G: at 3G's 780 kbit/s it needs about 35 s. Run once
by a developer (the file is committed); python3 only, no image library. The frames are a moving
colour pattern with noise, stored with 9-bit LZW codes and a clear code every 254 pixels (the
simplest valid encoding, which is also what keeps the file large). The output is the same on every run.
"""
import os
import random
import struct

WIDTH, HEIGHT, FRAMES = 480, 480, 14


def lzw_literal(pixels):
    """LZW data with minimum code size 8 that never grows past 9 bits: literals, cleared every 254 codes."""
    clear, end = 256, 257
    out = bytearray()
    acc = bits = 0

    def put(code):
        nonlocal acc, bits
        acc |= code << bits
        bits += 9
        while bits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            bits -= 8

    put(clear)
    for index, pixel in enumerate(pixels):
        if index and index % 254 == 0:
            put(clear)
        put(pixel)
    put(end)
    if bits:
        out.append(acc & 0xFF)
    blocks = bytearray([8])
    for start in range(0, len(out), 255):
        chunk = out[start:start + 255]
        blocks += bytes([len(chunk)]) + chunk
    return bytes(blocks + b"\x00")


def main():
    rng = random.Random(13)
    palette = bytearray()
    for index in range(256):
        palette += bytes([(index * 7) % 256, (index * 3 + 80) % 256, (255 - index) % 256])
    gif = bytearray(b"GIF89a" + struct.pack("<HHBBB", WIDTH, HEIGHT, 0xF7, 0, 0) + palette)
    gif += b"\x21\xFF\x0BNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    for frame in range(FRAMES):
        gif += b"\x21\xF9\x04\x04" + struct.pack("<H", 10) + b"\x00\x00"  # 100 ms a frame
        gif += b"\x2C" + struct.pack("<HHHHB", 0, 0, WIDTH, HEIGHT, 0)
        pixels = bytes(
            ((x + y + frame * 16) // 4 + rng.randrange(24)) % 256 for y in range(HEIGHT) for x in range(WIDTH))
        gif += lzw_literal(pixels)
    gif += b"\x3B"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets", "large-banner.gif")
    with open(path + ".tmp", "wb") as handle:
        handle.write(gif)
    os.replace(path + ".tmp", path)
    print(f"{path}: {len(gif)} bytes")


if __name__ == "__main__":
    main()

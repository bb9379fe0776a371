"""Writes image files made from the real Fashion-MNIST (Debian's dataset-fashion-mnist) for the
image tests, with Pillow. Nothing here is committed: the tests run it into a temporary folder.

  make_images.py formats OUT_DIR [IDX_DIR]
      one file per format and layout the decoders read (JPEG gray/RGB/progressive/CMYK, PNG
      gray/RGB/RGBA/gray+alpha/palette/1-bit/16-bit, WebP, BMP, TIFF, PPM, PGM), Pillow's own
      decodes of each as references (convert("RGB") -> NAME.rgb.ppm, convert("L") -> NAME.l.pgm),
      damaged files, and cases.txt: one line per file, "NAME ok" or "NAME bad".
"""
import gzip
import os
import struct
import sys

from PIL import Image

DEFAULT_IDX = "/usr/share/datasets/fashion-mnist"


def fashion_images(idx_dir, count):
    with gzip.open(os.path.join(idx_dir, "t10k-images-idx3-ubyte.gz"), "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051, "not an IDX image file"
        data = f.read(count * rows * cols)
    return [Image.frombytes("L", (cols, rows), data[i * rows * cols:(i + 1) * rows * cols]) for i in range(count)]


def colour(images, size):
    """Three real images as the R, G and B planes, enlarged: a colourful photo-like image."""
    planes = [im.resize(size, Image.BILINEAR) for im in images[:3]]
    return Image.merge("RGB", planes)


def formats(out, idx_dir):
    os.makedirs(out, exist_ok=True)
    images = fashion_images(idx_dir, 8)
    gray = images[3].resize((45, 37), Image.BILINEAR)  # odd sizes: no 8x8 block alignment
    rgb = colour(images, (53, 41))
    cases = []

    def save(name, image, **params):
        path = os.path.join(out, name)
        image.save(path, **params)
        cases.append((name, "ok"))
        decoded = Image.open(path)
        decoded.load()
        decoded.convert("RGB").save(os.path.join(out, name + ".rgb.ppm"))
        decoded.convert("L").save(os.path.join(out, name + ".l.pgm"))

    save("gray.png", gray)
    save("rgb.png", rgb)
    rgba = rgb.copy()
    rgba.putalpha(images[4].resize(rgb.size))
    save("rgba.png", rgba)
    la = gray.copy()
    la.putalpha(images[5].resize(gray.size))
    save("gray_alpha.png", la)
    save("palette.png", rgb.convert("P", palette=Image.ADAPTIVE, colors=64))
    save("palette_transparent.png", rgb.convert("P", palette=Image.ADAPTIVE, colors=64), transparency=3)
    save("bilevel.png", gray.convert("1"))
    save("gray.jpg", gray, quality=90)
    save("rgb.jpg", rgb, quality=90)
    save("rgb_444.jpg", rgb, quality=95, subsampling=0)
    save("rgb_progressive.jpg", rgb, quality=85, progressive=True)
    save("cmyk.jpg", rgb.convert("CMYK"), quality=90)
    save("rgb.webp", rgb, quality=90)
    save("rgba_lossless.webp", rgba, lossless=True)
    save("rgb.bmp", rgb)
    save("gray.bmp", gray)
    save("rgb.tiff", rgb)
    save("gray.tif", gray)
    save("rgb_lzw.tiff", rgb, compression="tiff_lzw")
    save("rgb.ppm", rgb)
    save("gray.pgm", gray)

    # 16-bit gray: each 8-bit sample v stored as v * 257, so the high byte (what the decoders keep)
    # is v again. Pillow's own convert clamps 16-bit values instead, so the reference is the 8-bit
    # image itself.
    wide = Image.frombytes("I;16", gray.size, b"".join(struct.pack("<H", v * 257) for v in gray.tobytes()))
    for name in ("gray16.png", "gray16.pgm"):
        wide.save(os.path.join(out, name))
        cases.append((name, "ok"))
        gray.convert("RGB").save(os.path.join(out, name + ".rgb.ppm"))
        gray.save(os.path.join(out, name + ".l.pgm"))

    def damaged(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        cases.append((name, "bad"))

    def read(name):
        with open(os.path.join(out, name), "rb") as f:
            return f.read()

    jpg, png, webp = read("rgb.jpg"), read("rgb.png"), read("rgb.webp")
    damaged("truncated.jpg", jpg[: len(jpg) // 2])
    damaged("corrupt.jpg", jpg[: len(jpg) // 2] + bytes(range(200, 232)) + jpg[len(jpg) // 2 + 32:])
    damaged("header_only.jpg", jpg[:300])
    damaged("truncated.png", png[: len(png) * 2 // 3])
    damaged("corrupt.png", png[:60] + bytes(b ^ 0x5A for b in png[60:120]) + png[120:])
    damaged("truncated.webp", webp[: len(webp) // 2])
    damaged("truncated.ppm", read("rgb.ppm")[:500])
    damaged("truncated.bmp", read("rgb.bmp")[:400])
    damaged("empty.png", b"")
    damaged("text.jpg", b"this is not an image\n")

    with open(os.path.join(out, "cases.txt"), "w") as f:
        for name, kind in cases:
            f.write(f"{name} {kind}\n")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "formats":
        sys.exit(__doc__)
    formats(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else DEFAULT_IDX)

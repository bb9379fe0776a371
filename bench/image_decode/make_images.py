#!/usr/bin/env python3
"""Generate the test images for decode_bench.cpp.

Uses scikit-image's bundled sample photographs (no download), re-encoded with
Pillow into the formats under test, plus Pillow's own decode of every file as
a reference (binary PPM/PGM) for the correctness checks.

Layout written under OUT_DIR:
  sets.tsv                      set <TAB> format <TAB> channels-to-test (3, 1 or 13)
  <set>/<stem>.<ext>            encoded files
  ref/<set>/<stem>.<tag>.p?m    Pillow decode; tag = rgb | gray | rgb_r2 | gray_r2
  versions.txt                  Pillow / codec / scikit-image versions

usage: make_images.py OUT_DIR
"""
import gzip
import io
import os
import sys

import numpy as np
from PIL import Image, features
import skimage
from skimage import data

PHOTOS = ["astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry",
          "motorcycle_left"]
SIZES = {"500x375": (500, 375), "224": (224, 224), "64": (64, 64)}


def load_photo(name):
    if name == "motorcycle_left":
        arr = data.stereo_motorcycle()[0]
    else:
        arr = getattr(data, name)()
    return Image.fromarray(np.ascontiguousarray(arr[..., :3])).convert("RGB")


def cover_resize(im, size):
    """Scale to cover `size`, then centre-crop (keeps the photo's aspect)."""
    tw, th = size
    w, h = im.size
    s = max(tw / w, th / h)
    nw, nh = max(tw, round(w * s)), max(th, round(h * s))
    im = im.resize((nw, nh), Image.LANCZOS)
    l, t = (nw - tw) // 2, (nh - th) // 2
    return im.crop((l, t, l + tw, t + th))


def write_pnm(path, arr):
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    h, w = arr.shape[:2]
    magic = b"P6" if arr.ndim == 3 else b"P5"
    with open(path, "wb") as f:
        f.write(magic + b"\n%d %d\n255\n" % (w, h))
        f.write(arr.tobytes())


class Writer:
    def __init__(self, out):
        self.out = out
        self.sets = []

    def add(self, set_name, fmt, channels, items):
        """items: list of (stem, PIL image to encode, save kwargs)."""
        d = os.path.join(self.out, set_name)
        rd = os.path.join(self.out, "ref", set_name)
        os.makedirs(d, exist_ok=True)
        os.makedirs(rd, exist_ok=True)
        ext = {"jpeg": "jpg", "png": "png", "webp": "webp", "bmp": "bmp",
               "ppm": "ppm", "pgm": "pgm", "tiff": "tif"}[fmt]
        for stem, im, kw in items:
            buf = io.BytesIO()
            im.save(buf, format={"jpeg": "JPEG", "ppm": "PPM", "pgm": "PPM"}.get(fmt, fmt.upper()), **kw)
            blob = buf.getvalue()
            with open(os.path.join(d, f"{stem}.{ext}"), "wb") as f:
                f.write(blob)
            self.reference(rd, stem, fmt, blob, channels)
        self.sets.append((set_name, fmt, channels))

    @staticmethod
    def reference(rd, stem, fmt, blob, channels):
        dec = Image.open(io.BytesIO(blob))
        dec.load()
        if dec.mode in ("I;16", "I;16B", "I"):
            # 16-bit grey: reference is the high byte (what >>8 stripping gives).
            a = np.asarray(dec).astype(np.uint32) >> 8
            write_pnm(os.path.join(rd, f"{stem}.gray.pgm"), a)
            write_pnm(os.path.join(rd, f"{stem}.rgb.ppm"), np.repeat(a[..., None], 3, 2))
            return
        if "3" in channels:
            write_pnm(os.path.join(rd, f"{stem}.rgb.ppm"), np.asarray(dec.convert("RGB")))
        if "1" in channels:
            if fmt == "jpeg":
                # draft() makes libjpeg output the Y plane directly (no RGB->L math).
                g = Image.open(io.BytesIO(blob))
                g.draft("L", g.size)
                write_pnm(os.path.join(rd, f"{stem}.gray.pgm"), np.asarray(g.convert("L")))
            elif dec.mode in ("L", "LA"):
                write_pnm(os.path.join(rd, f"{stem}.gray.pgm"), np.asarray(dec.getchannel(0)))
        if fmt == "jpeg":
            # DCT-domain 1/2 scaling in Pillow (draft) for comparison with scale_denom=2.
            for mode, tag in (("RGB", "rgb_r2"), ("L", "gray_r2")):
                if (mode == "RGB" and "3" not in channels) or (mode == "L" and "1" not in channels):
                    continue
                g = Image.open(io.BytesIO(blob))
                g.draft(mode, (g.size[0] // 2, g.size[1] // 2))  # Pillow picks scale = min(w // rw, h // rh)
                g = g.convert(mode)
                ext = "ppm" if mode == "RGB" else "pgm"
                write_pnm(os.path.join(rd, f"{stem}.{tag}.{ext}"), np.asarray(g))

    def finish(self):
        with open(os.path.join(self.out, "sets.tsv"), "w") as f:
            for s in self.sets:
                f.write("\t".join(s) + "\n")


def fashion_mnist(n):
    for base in ("/usr/share/datasets/fashion-mnist", "/usr/share/fashion-mnist"):
        p = os.path.join(base, "t10k-images-idx3-ubyte.gz")
        if os.path.exists(p):
            raw = gzip.open(p).read()
            count, rows, cols = np.frombuffer(raw[4:16], dtype=">u4")
            imgs = np.frombuffer(raw[16:], dtype=np.uint8).reshape(count, rows, cols)
            return imgs[:n]
    return None


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w = Writer(out)
    photos = {n: load_photo(n) for n in PHOTOS}
    rs = {k: {n: cover_resize(im, sz) for n, im in photos.items()} for k, sz in SIZES.items()}

    def items(size, conv=None, **kw):
        res = []
        for n, im in rs[size].items():
            res.append((n, conv(im) if conv else im, kw))
        return res

    gray = lambda im: im.convert("L")
    for size in SIZES:
        w.add(f"jpeg_{size}", "jpeg", "13", items(size, quality=90))
    w.add("jpeg_prog_500x375", "jpeg", "13", items("500x375", quality=90, progressive=True))
    for size in SIZES:
        w.add(f"png_rgb_{size}", "png", "3", items(size))
    w.add("png_gray_500x375", "png", "1", items("500x375", gray))
    w.add("png_gray_224", "png", "1", items("224", gray))

    def gray16(im):
        a = np.asarray(im).astype(np.float64) @ np.array([0.299, 0.587, 0.114])
        a = np.clip(a * 257.0 + np.random.default_rng(0).uniform(0, 256, a.shape), 0, 65535)
        return Image.fromarray(a.astype(np.uint16))  # mode I;16

    def with_alpha(im):
        a = np.linspace(64, 255, im.size[0] * im.size[1]).reshape(im.size[1], im.size[0]).astype(np.uint8)
        im = im.copy()
        im.putalpha(Image.fromarray(a))
        return im

    w.add("png_gray16_500x375", "png", "13", items("500x375", gray16))
    w.add("png_palette_500x375", "png", "3", items("500x375", lambda im: im.quantize(256)))
    w.add("png_graya_500x375", "png", "13", items("500x375", lambda im: with_alpha(im.convert("L"))))
    w.add("png_rgba_500x375", "png", "3", items("500x375", with_alpha))
    fm = fashion_mnist(200)
    if fm is not None:
        w.add("png_fmnist_28", "png", "1",
              [(f"fm{i:03d}", Image.fromarray(a), {}) for i, a in enumerate(fm)])
        # Cross-check: the IDX bytes themselves are the ground truth.
        for i, a in enumerate(fm):
            write_pnm(os.path.join(out, "ref", "png_fmnist_28", f"fm{i:03d}.gray.pgm"), a)
    for size in SIZES:
        w.add(f"webp_{size}", "webp", "3", items(size, quality=90))
    w.add("webp_lossless_500x375", "webp", "3", items("500x375", lossless=True))
    for size in ("500x375", "224"):
        w.add(f"bmp_{size}", "bmp", "3", items(size))
        w.add(f"ppm_{size}", "ppm", "3", items(size))
        w.add(f"pgm_{size}", "pgm", "1", items(size, gray))
        w.add(f"tiff_{size}", "tiff", "3", items(size))
    w.add("tiff_lzw_500x375", "tiff", "3", items("500x375", compression="tiff_lzw"))
    w.finish()
    with open(os.path.join(out, "versions.txt"), "w") as f:
        f.write(f"Pillow {Image.__version__}\n")
        for c in ("jpg", "libjpeg_turbo", "zlib", "webp", "libtiff"):
            f.write(f"Pillow {c} {features.version(c)}\n")
        f.write(f"scikit-image {skimage.__version__}\nnumpy {np.__version__}\n")
    print(f"wrote {len(w.sets)} sets to {out}")


if __name__ == "__main__":
    main()

"""Writes image files made from the real Fashion-MNIST (Debian's dataset-fashion-mnist) for the
image tests, with Pillow. Nothing here is committed: the tests run it into a temporary folder.

  make_images.py formats OUT_DIR [IDX_DIR]
      one file per format and layout the decoders read (JPEG gray/RGB/progressive/CMYK, PNG
      gray/RGB/RGBA/gray+alpha/palette/1-bit/16-bit, WebP, BMP, TIFF, PPM, PGM), Pillow's own
      decodes of each as references (convert("RGB") -> NAME.rgb.ppm, convert("L") -> NAME.l.pgm),
      damaged files, and cases.txt: one line per file, "NAME ok" or "NAME bad".

  make_images.py tree OUT_DIR [--per-class N] [--split] [--mixed] [--damaged] [--size N] [--idx IDX_DIR]
      an ImageFolder tree of Fashion-MNIST images, OUT_DIR/<class>/<n>.png, one folder per class
      (the dataset's ten class names); --split: OUT_DIR/{train,val,test}/<class>/ from the training
      and test files; --mixed: PNG and JPEG, gray and RGB, several sizes, nested folders and
      upper-case extensions; --size N: every image enlarged to N x N first; --damaged: also a truncated PNG, a corrupt JPEG and files that are
      not images (ignored by extension). Writes labels.txt: "<path relative to OUT_DIR> <label>".
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
    # An end-of-image marker in the middle of the compressed data: the rows after it are lost
    # (libjpeg: "premature end of data segment"; Pillow would return them gray).
    damaged("corrupt.jpg", jpg[: len(jpg) // 2] + b"\xff\xd9" + jpg[len(jpg) // 2 + 2:])
    # Stray bytes between two markers: libjpeg warns ("extraneous bytes"), the pixels are intact,
    # and Pillow reads the file; so do we.
    start_of_scan = jpg.index(b"\xff\xda")
    with open(os.path.join(out, "extraneous.jpg"), "wb") as f:
        f.write(jpg[:start_of_scan] + b"\x00\x01\x02" + jpg[start_of_scan:])
    cases.append(("extraneous.jpg", "ok"))
    decoded = Image.open(os.path.join(out, "extraneous.jpg"))
    decoded.load()
    decoded.convert("RGB").save(os.path.join(out, "extraneous.jpg.rgb.ppm"))
    decoded.convert("L").save(os.path.join(out, "extraneous.jpg.l.pgm"))
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


CLASSES = ["tshirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
           "ankle_boot"]


def fashion_split(idx_dir, prefix, count):
    """The first `count` images and labels of Fashion-MNIST's train or t10k files."""
    with gzip.open(os.path.join(idx_dir, f"{prefix}-images-idx3-ubyte.gz"), "rb") as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        data = f.read(min(count, n) * rows * cols)
    with gzip.open(os.path.join(idx_dir, f"{prefix}-labels-idx1-ubyte.gz"), "rb") as f:
        f.read(8)
        labels = f.read(min(count, n))
    size = rows * cols
    return [(Image.frombytes("L", (cols, rows), data[i * size:(i + 1) * size]), labels[i]) for i in range(len(labels))]


def write_tree(out, samples, per_class, mixed, listing, prefix="", size=0):
    written = {c: 0 for c in range(10)}
    for i, (image, label) in enumerate(samples):
        if written[label] >= per_class:
            continue
        n = written[label]
        written[label] += 1
        folder = os.path.join(out, CLASSES[label])
        name = f"{n:05d}.png"
        if size:
            image = image.resize((size, size), Image.BILINEAR)
        if mixed:
            kind = n % 4
            if kind == 1:
                image = image.convert("RGB")
                name = f"{n:05d}.jpg"
            elif kind == 2:
                image = image.resize((36, 36), Image.BILINEAR)
                name = f"{n:05d}.PNG"
            elif kind == 3:
                folder = os.path.join(folder, "more")
                image = image.convert("RGB").resize((40, 32), Image.BILINEAR)
                name = f"{n:05d}.jpeg"
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name)
        if name.lower().endswith((".jpg", ".jpeg")):
            image.save(path, format="JPEG", quality=95)
        else:
            image.save(path, format="PNG")
        listing.append((os.path.join(prefix, os.path.relpath(path, out)), label))
    return written


def tree(args):
    out = args[0]
    per_class, split, mixed, damaged, idx_dir, size = 20, False, False, False, DEFAULT_IDX, 0
    rest = args[1:]
    while rest:
        flag = rest.pop(0)
        if flag == "--per-class":
            per_class = int(rest.pop(0))
        elif flag == "--size":
            size = int(rest.pop(0))
        elif flag == "--split":
            split = True
        elif flag == "--mixed":
            mixed = True
        elif flag == "--damaged":
            damaged = True
        elif flag == "--idx":
            idx_dir = rest.pop(0)
        else:
            sys.exit(f"unknown option {flag}\n{__doc__}")
    listing = []
    train = fashion_split(idx_dir, "train", per_class * 10 * 3)
    if split:
        write_tree(os.path.join(out, "train"), train, per_class, mixed, listing, "train", size)
        val = train[per_class * 10 * 2:]
        write_tree(os.path.join(out, "val"), val, max(1, per_class // 4), mixed, listing, "val", size)
        test = fashion_split(idx_dir, "t10k", per_class * 10 * 3)
        write_tree(os.path.join(out, "test"), test, max(1, per_class // 2), mixed, listing, "test", size)
    else:
        write_tree(out, train, per_class, mixed, listing, size=size)
    root = os.path.join(out, "train") if split else out
    if damaged:
        with open(os.path.join(root, CLASSES[0], "README.txt"), "w") as f:
            f.write("not an image: ignored by its extension\n")
        with open(os.path.join(root, CLASSES[1], "thumbs.db"), "wb") as f:
            f.write(b"\0" * 64)
        good = os.path.join(root, CLASSES[2], "00000.png")
        with open(good, "rb") as f:
            data = f.read()
        with open(os.path.join(root, CLASSES[2], "truncated.png"), "wb") as f:
            f.write(data[: len(data) // 2])
        listing.append((os.path.relpath(os.path.join(root, CLASSES[2], "truncated.png"), out), -1))
        with open(os.path.join(root, CLASSES[3], "corrupt.jpg"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4)
        listing.append((os.path.relpath(os.path.join(root, CLASSES[3], "corrupt.jpg"), out), -1))
    with open(os.path.join(out, "labels.txt"), "w") as f:
        for path, label in listing:
            f.write(f"{path} {label}\n")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "formats":
        formats(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else DEFAULT_IDX)
    elif len(sys.argv) >= 3 and sys.argv[1] == "tree":
        tree(sys.argv[2:])
    else:
        sys.exit(__doc__)

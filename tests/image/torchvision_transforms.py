"""torchvision's functional transforms, with fixed parameters, on the PIL image given: what
tests/image/image_transforms_test.cpp compares trainer's own transforms with, byte for byte.

usage: torchvision_transforms.py INPUT.ppm|INPUT.pgm OUT_DIR
Writes one PNM per case (the input's mode) and normalized.f32 (ToTensor + Normalize, C x H x W
float32). The case names and parameters are the test's."""
import os
import sys

import torchvision.transforms.functional as F
from PIL import Image
from torchvision.transforms import InterpolationMode

src, out = sys.argv[1], sys.argv[2]
img = Image.open(src)
img.load()
ext = ".ppm" if img.mode == "RGB" else ".pgm"


def save(name, image):
    image.save(os.path.join(out, name + ext))


bilinear = InterpolationMode.BILINEAR
save("resize_20x30", F.resize(img, [20, 30], bilinear, antialias=True))
save("resize_80x100", F.resize(img, [80, 100], bilinear, antialias=True))
save("resize_width_only", F.resize(img, [img.height, 20], bilinear, antialias=True))
save("resize_height_only", F.resize(img, [10, img.width], bilinear, antialias=True))
save("resize_shorter_24", F.resize(img, 24, bilinear, antialias=True))
save("center_crop_20x20", F.center_crop(img, [20, 20]))
save("center_crop_padded", F.center_crop(img, [img.height + 5, img.width + 8]))
save("crop", F.crop(img, 3, 5, 10, 12))
# The presets' deterministic pipelines: augment=none at 36, augment=imagenet's evaluation at 28
# (resize the shorter side to 28 * 8 / 7 = 32, then crop), as torchvision's Compose runs them.
save("preset_none_36", F.center_crop(F.resize(img, 36, bilinear, antialias=True), [36, 36]))
save("preset_imagenet_eval_28", F.center_crop(F.resize(img, 32, bilinear, antialias=True), [28, 28]))
save("hflip", F.hflip(img))
for factor in (0.6, 1.4):
    save(f"brightness_{factor}", F.adjust_brightness(img, factor))
for factor in (0.5, 1.7):
    save(f"contrast_{factor}", F.adjust_contrast(img, factor))
for factor in (0.3, 1.8):
    save(f"saturation_{factor}", F.adjust_saturation(img, factor))
if img.mode == "RGB":
    img.convert("L").save(os.path.join(out, "gray.pgm"))
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
else:
    mean, std = [0.2860], [0.3530]
F.normalize(F.to_tensor(img), mean, std).numpy().tofile(os.path.join(out, "normalized.f32"))

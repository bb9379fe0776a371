#include "trainer/image/decode_transformed.h"

#include <optional>

#include "trainer/image/image_resize.h"
#include "trainer/image/image_transforms.h"

namespace trainer::image {

void decode_transformed(const uint8_t* data, size_t size, const DecodeRequest& request,
                        const TransformPipeline& transforms, SeededRandom& random, TransformScratch& scratch,
                        Image& out, const std::string& name) {
  const std::vector<TransformStep>& steps = transforms.steps();
  if (!steps.empty() && steps.front().kind == TransformStep::Kind::kRandomResizedCrop) {
    if (const std::optional<Size> stored = jpeg_size(data, size)) {
      const TransformStep& s = steps.front();
      DecodeRequest boxed = request;
      boxed.region = random_resized_crop_box(stored->height, stored->width, s.scale_min, s.scale_max, s.ratio_min,
                                             s.ratio_max, random);
      boxed.min_height = s.height;
      boxed.min_width = s.width;
      decode_image(data, size, boxed, scratch.b, name);
      resize_bilinear(scratch.b, s.height, s.width, out, scratch.a);
      transforms.apply(out, random, scratch, /*first_step=*/1);
      return;
    }
  }
  decode_image(data, size, request, out, name);
  transforms.apply(out, random, scratch);
}

}  // namespace trainer::image

// An image file's bytes decoded and transformed in one call: what decode_image followed by
// TransformPipeline::apply gives, except that a JPEG whose first step is random_resized_crop
// decodes only the box that step draws, shrunk in the DCT domain (1/2, 1/4, 1/8) as far as the
// box stays at least the crop's output size. The box is drawn from the same generator with the
// same draws either way, so the crops are the same boxes; the pixels of a shrunk box differ a
// little from a full decode resized (as with DecodeRequest::min_height), an unshrunk box's do not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "trainer/image/image.h"
#include "trainer/image/image_decoder.h"
#include "trainer/image/transform_pipeline.h"
#include "trainer/util/seeded_random.h"

namespace trainer::image {

// Throws BadImage (naming `name`) for an unreadable image, and the transforms' errors.
void decode_transformed(const uint8_t* data, size_t size, const DecodeRequest& request,
                        const TransformPipeline& transforms, SeededRandom& random, TransformScratch& scratch,
                        Image& out, const std::string& name);

}  // namespace trainer::image

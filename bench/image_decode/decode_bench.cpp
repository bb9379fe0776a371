// decode_bench.cpp - single-core image decode throughput of Debian 12 libraries.
//
// Decodes the files written by make_images.py (preloaded into memory) to
// uint8 interleaved HWC (RGB, or 1-channel grey) with:
//   JPEG: libjpeg-turbo (libjpeg API, optional DCT scaling 1/2, 1/4), OpenCV imdecode
//   PNG : libspng, libpng (simplified png_image API and classic API), OpenCV imdecode
//   WebP: libwebp (WebPDecodeRGBInto), OpenCV imdecode
//   BMP/PPM/PGM/TIFF: OpenCV imdecode (and a trivial PNM parser as a ceiling)
// Candidates of one image set are interleaved (rotating order per repetition),
// timing is per-thread CPU time and wall time, reported as the median.
// It also cross-checks decoded pixels between libraries and against Pillow's
// decode (references written by make_images.py), and reports how each library
// reacts to truncated and corrupted input.
//
// usage: decode_bench DATA_DIR [--reps N] [--target-ms T] [--only SUBSTR] [--csv FILE]
//                              [--no-bench] [--no-robust]

#include <jpeglib.h>
#include <png.h>
#include <spng.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <webp/decode.h>

namespace fs = std::filesystem;
#define STR2(x) #x
#define STR(x) STR2(x)

// ---------------------------------------------------------------------------
// Common types

struct Img {
  int w = 0, h = 0, c = 0;
  std::vector<uint8_t> px;
  bool want_pixels = true;  // false: a candidate may skip a pure copy/convert (BGR variant)
  void reset(int W, int H, int C) {
    w = W;
    h = H;
    c = C;
    px.resize(static_cast<size_t>(W) * H * C);
  }
};

struct Status {
  int warnings = 0;
  std::string msg;  // error message, or first warning
  void clear() {
    warnings = 0;
    msg.clear();
  }
};

using Bytes = std::vector<uint8_t>;
using DecodeFn = std::function<bool(const uint8_t*, size_t, Img&, Status&)>;

struct Cand {
  std::string name;
  int ch;     // output channels
  int scale;  // 1, 2, 4: output is ceil(src/scale)
  DecodeFn fn;
};

// ---------------------------------------------------------------------------
// libjpeg-turbo via the libjpeg API

namespace jpg {

struct Err {
  jpeg_error_mgr pub;
  jmp_buf jb;
  int warnings;
  char msg[JMSG_LENGTH_MAX];
};

static void error_exit(j_common_ptr cinfo) {
  Err* e = reinterpret_cast<Err*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->msg);
  longjmp(e->jb, 1);
}

// level < 0: warning (corrupt data, premature EOF, ...); >= 0: trace messages.
static void emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  Err* e = reinterpret_cast<Err*>(cinfo->err);
  if (e->warnings++ == 0) (*cinfo->err->format_message)(cinfo, e->msg);
  cinfo->err->num_warnings++;
}

struct Opts {
  int ch = 3;
  int denom = 1;
  bool fast = false;  // JDCT_IFAST + no fancy upsampling
};

// No C++ objects with destructors live in this frame across setjmp/longjmp.
bool decode(const uint8_t* data, size_t size, Img& out, Status& st, const Opts& o) {
  jpeg_decompress_struct cinfo;
  Err err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit;
  err.pub.emit_message = emit_message;
  err.warnings = 0;
  err.msg[0] = 0;
  if (setjmp(err.jb)) {
    jpeg_destroy_decompress(&cinfo);
    st.warnings = err.warnings;
    st.msg = err.msg;
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = o.ch == 3 ? JCS_RGB : JCS_GRAYSCALE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned>(o.denom);
  if (o.fast) {
    cinfo.dct_method = JDCT_IFAST;
    cinfo.do_fancy_upsampling = FALSE;
  }
  jpeg_start_decompress(&cinfo);
  out.reset(static_cast<int>(cinfo.output_width), static_cast<int>(cinfo.output_height), o.ch);
  const size_t stride = static_cast<size_t>(cinfo.output_width) * o.ch;
  JSAMPROW rows[16];
  while (cinfo.output_scanline < cinfo.output_height) {
    JDIMENSION s = cinfo.output_scanline, k = 0;
    for (; k < 16 && s + k < cinfo.output_height; ++k) rows[k] = out.px.data() + (s + k) * stride;
    jpeg_read_scanlines(&cinfo, rows, k);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  st.warnings = err.warnings;
  if (err.warnings) st.msg = err.msg;
  return true;
}

}  // namespace jpg

// ---------------------------------------------------------------------------
// libspng

namespace spngd {

// Direct request of SPNG_FMT_RGB8 / SPNG_FMT_G8. libspng 0.7 cannot produce G8
// from 16-bit or grey+alpha sources (SPNG_EFMT); `fallback` then decodes the
// source's grey(+alpha) samples in their native layout and keeps the high byte.
bool decode(const uint8_t* data, size_t size, Img& out, Status& st, int ch, bool fallback) {
  spng_ctx* ctx = spng_ctx_new(0);
  if (!ctx) {
    st.msg = "spng_ctx_new failed";
    return false;
  }
  int fmt = ch == 3 ? SPNG_FMT_RGB8 : SPNG_FMT_G8;
  spng_ihdr ihdr{};
  size_t len = 0;
  int e = spng_set_png_buffer(ctx, data, size);
  if (!e) e = spng_get_ihdr(ctx, &ihdr);
  if (!e) {
    const bool grey =
        ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE || ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA;
    const bool direct_ok = ch == 3 || (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth <= 8);
    if (ch == 1 && !direct_ok && fallback && grey) {
      // SPNG_FMT_PNG: the source's own layout (G16, GA8, GA16; host-endian
      // 16-bit samples). Keep the grey sample's high byte, drop alpha.
      e = spng_decoded_image_size(ctx, SPNG_FMT_PNG, &len);
      if (!e) {
        static thread_local std::vector<uint8_t> tmp;
        tmp.resize(len);
        e = spng_decode_image(ctx, tmp.data(), len, SPNG_FMT_PNG, 0);
        if (!e) {
          out.reset(static_cast<int>(ihdr.width), static_cast<int>(ihdr.height), 1);
          const size_t n = out.px.size();
          const size_t step = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ? 2 : 1;
          if (ihdr.bit_depth == 16) {
            const uint16_t* s = reinterpret_cast<const uint16_t*>(tmp.data());
            for (size_t i = 0; i < n; ++i) out.px[i] = static_cast<uint8_t>(s[step * i] >> 8);
          } else {
            for (size_t i = 0; i < n; ++i) out.px[i] = tmp[step * i];
          }
        }
      }
      spng_ctx_free(ctx);
      if (e) st.msg = std::string("spng: ") + spng_strerror(e);
      return !e;
    }
    e = spng_decoded_image_size(ctx, fmt, &len);
  }
  if (!e) {
    out.reset(static_cast<int>(ihdr.width), static_cast<int>(ihdr.height), ch);
    if (len != out.px.size()) e = SPNG_EINTERNAL;
  }
  if (!e) e = spng_decode_image(ctx, out.px.data(), len, fmt, 0);
  spng_ctx_free(ctx);
  if (e) {
    st.msg = std::string("spng: ") + spng_strerror(e);
    return false;
  }
  return true;
}

}  // namespace spngd

// ---------------------------------------------------------------------------
// libpng: simplified API and classic API

namespace pngd {

// srgb16: set PNG_IMAGE_FLAG_16BIT_sRGB, i.e. treat 16-bit data without gAMA/sRGB
// chunks as sRGB-encoded; by default libpng assumes it is linear and
// gamma-encodes it when producing 8-bit output.
bool decode_simplified(const uint8_t* data, size_t size, Img& out, Status& st, int ch, bool srgb16) {
  png_image im;
  std::memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&im, data, size)) {
    st.msg = im.message;
    png_image_free(&im);
    return false;
  }
  im.format = ch == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  if (srgb16) im.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  out.reset(static_cast<int>(im.width), static_cast<int>(im.height), ch);
  // Alpha is removed by compositing onto `bg` (NULL would composite onto the
  // buffer's previous contents).
  png_color bg{0, 0, 0};
  if (!png_image_finish_read(&im, &bg, out.px.data(), 0, nullptr)) {
    st.msg = im.message;
    png_image_free(&im);
    return false;
  }
  if (im.warning_or_error) {
    st.warnings = 1;
    st.msg = im.message;
  }
  return true;
}

struct Reader {
  const uint8_t* p;
  size_t n, off;
};
struct ErrCtx {
  char msg[256];
  int warnings;
};

static void read_fn(png_structp png, png_bytep dst, size_t len) {
  Reader* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (len > r->n - r->off) png_error(png, "unexpected end of data");
  std::memcpy(dst, r->p + r->off, len);
  r->off += len;
}
static void error_fn(png_structp png, png_const_charp m) {
  ErrCtx* e = static_cast<ErrCtx*>(png_get_error_ptr(png));
  std::snprintf(e->msg, sizeof e->msg, "%s", m);
  png_longjmp(png, 1);
}
static void warn_fn(png_structp png, png_const_charp m) {
  ErrCtx* e = static_cast<ErrCtx*>(png_get_error_ptr(png));
  if (e->warnings++ == 0) std::snprintf(e->msg, sizeof e->msg, "%s", m);
}

// Row pointers are kept outside the setjmp frame.
thread_local std::vector<png_bytep> g_rows;

bool decode_classic(const uint8_t* data, size_t size, Img& out, Status& st, int ch) {
  ErrCtx ec;
  ec.msg[0] = 0;
  ec.warnings = 0;
  Reader rd{data, size, 0};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ec, error_fn, warn_fn);
  if (!png) {
    st.msg = "png_create_read_struct failed";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    st.warnings = ec.warnings;
    st.msg = ec.msg;
    return false;
  }
  png_set_read_fn(png, &rd, read_fn);
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, ctype = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &ctype, nullptr, nullptr, nullptr);
  if (depth == 16) png_set_strip_16(png);  // keep high byte (same as OpenCV, libspng)
  if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (ctype & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);  // tRNS is ignored (not expanded)
  const bool src_grey = !(ctype & PNG_COLOR_MASK_COLOR);
  if (ch == 3 && src_grey) png_set_gray_to_rgb(png);
  if (ch == 1 && !src_grey) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  out.reset(static_cast<int>(w), static_cast<int>(h), ch);
  if (png_get_rowbytes(png, info) != static_cast<size_t>(w) * ch) png_error(png, "unexpected row size");
  g_rows.resize(h);
  for (png_uint_32 y = 0; y < h; ++y) g_rows[y] = out.px.data() + static_cast<size_t>(y) * w * ch;
  png_read_image(png, g_rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  st.warnings = ec.warnings;
  if (ec.warnings) st.msg = ec.msg;
  return true;
}

}  // namespace pngd

// ---------------------------------------------------------------------------
// libwebp

bool decode_webp(const uint8_t* data, size_t size, Img& out, Status& st) {
  int w = 0, h = 0;
  if (!WebPGetInfo(data, size, &w, &h)) {
    st.msg = "WebPGetInfo failed";
    return false;
  }
  out.reset(w, h, 3);
  if (!WebPDecodeRGBInto(data, size, out.px.data(), out.px.size(), w * 3)) {
    st.msg = "WebPDecodeRGBInto failed";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// OpenCV imdecode. to_rgb: BGR->RGB via cvtColor (counted in the time);
// otherwise the native BGR Mat is the result and is copied only for checking.
// imdecode allocates a new Mat per call.

bool decode_cv(const uint8_t* data, size_t size, Img& out, Status& st, int flags, bool to_rgb) {
  static thread_local cv::Mat m;
  try {
    cv::Mat buf(1, static_cast<int>(size), CV_8UC1, const_cast<uint8_t*>(data));
    // Not the imdecode(buf, flags, Mat* dst) overload: in OpenCV 4.6 it
    // returns *dst even when decoding fails, so a reused, already
    // allocated dst hides the failure (stale pixels, "success").
    m = cv::imdecode(buf, flags);
    if (m.empty()) {
      st.msg = "imdecode returned an empty Mat";
      return false;
    }
  } catch (const cv::Exception& e) {
    st.msg = e.what();
    return false;
  }
  const int c = m.channels();
  if (!to_rgb && !out.want_pixels) {
    out.w = m.cols;
    out.h = m.rows;
    out.c = c;
    return true;
  }
  out.reset(m.cols, m.rows, c);
  cv::Mat dst(m.rows, m.cols, CV_8UC(c), out.px.data());
  if (c == 3)
    cv::cvtColor(m, dst, cv::COLOR_BGR2RGB);
  else
    m.copyTo(dst);
  return true;
}

// ---------------------------------------------------------------------------
// Trivial binary PNM (P5/P6, maxval 255) parser: the "memcpy" ceiling, and the
// reader of the reference files.

bool parse_pnm(const uint8_t* d, size_t n, int& w, int& h, int& c, size_t& off) {
  size_t i = 0;
  auto skip = [&] {
    while (i < n) {
      if (d[i] == '#') {
        while (i < n && d[i] != '\n') ++i;
      } else if (std::isspace(d[i]))
        ++i;
      else
        break;
    }
  };
  auto num = [&](int& v) {
    skip();
    if (i >= n || !std::isdigit(d[i])) return false;
    long x = 0;
    while (i < n && std::isdigit(d[i]) && x < 1000000) x = x * 10 + (d[i++] - '0');
    v = static_cast<int>(x);
    return true;
  };
  if (n < 3 || d[0] != 'P' || (d[1] != '5' && d[1] != '6')) return false;
  c = d[1] == '6' ? 3 : 1;
  i = 2;
  int maxv = 0;
  if (!num(w) || !num(h) || !num(maxv) || maxv != 255 || i >= n) return false;
  off = i + 1;  // single whitespace after maxval
  return n - off >= static_cast<size_t>(w) * h * c;
}

bool decode_pnm_raw(const uint8_t* d, size_t n, Img& out, Status& st) {
  int w, h, c;
  size_t off;
  if (!parse_pnm(d, n, w, h, c, off)) {
    st.msg = "bad PNM";
    return false;
  }
  out.reset(w, h, c);
  std::memcpy(out.px.data(), d + off, out.px.size());
  return true;
}

// ---------------------------------------------------------------------------
// Candidates per format

std::vector<Cand> candidates(const std::string& set, const std::string& fmt, const std::string& chans) {
  std::vector<Cand> v;
  const bool want3 = chans.find('3') != std::string::npos;
  const bool want1 = chans.find('1') != std::string::npos;
  auto cv = [](int flags, bool rgb) {
    return [=](const uint8_t* d, size_t n, Img& o, Status& s) { return decode_cv(d, n, o, s, flags, rgb); };
  };
  if (fmt == "jpeg") {
    auto lj = [](int ch, int denom, bool fast) {
      return [=](const uint8_t* d, size_t n, Img& o, Status& s) {
        return jpg::decode(d, n, o, s, jpg::Opts{ch, denom, fast});
      };
    };
    if (want3) {
      v.push_back({"libjpeg-turbo", 3, 1, lj(3, 1, false)});
      v.push_back({"libjpeg-turbo 1/2", 3, 2, lj(3, 2, false)});
      v.push_back({"libjpeg-turbo 1/4", 3, 4, lj(3, 4, false)});
      v.push_back({"libjpeg-turbo fast", 3, 1, lj(3, 1, true)});
      v.push_back({"opencv BGR", 3, 1, cv(cv::IMREAD_COLOR, false)});
      v.push_back({"opencv RGB", 3, 1, cv(cv::IMREAD_COLOR, true)});
      v.push_back({"opencv REDUCED_2 RGB", 3, 2, cv(cv::IMREAD_REDUCED_COLOR_2, true)});
    }
    if (want1) {
      v.push_back({"libjpeg-turbo gray", 1, 1, lj(1, 1, false)});
      v.push_back({"libjpeg-turbo gray 1/2", 1, 2, lj(1, 2, false)});
      v.push_back({"opencv GRAYSCALE", 1, 1, cv(cv::IMREAD_GRAYSCALE, false)});
    }
  } else if (fmt == "png") {
    for (int ch : {3, 1}) {
      if ((ch == 3 && !want3) || (ch == 1 && !want1)) continue;
      const char* sfx = ch == 3 ? "" : " gray";
      v.push_back({std::string("spng") + sfx, ch, 1, [=](const uint8_t* d, size_t n, Img& o, Status& s) {
                     return spngd::decode(d, n, o, s, ch, false);
                   }});
      if (ch == 1)
        v.push_back({"spng gray+fallback", ch, 1, [=](const uint8_t* d, size_t n, Img& o, Status& s) {
                       return spngd::decode(d, n, o, s, ch, true);
                     }});
      v.push_back({std::string("libpng classic") + sfx, ch, 1, [=](const uint8_t* d, size_t n, Img& o, Status& s) {
                     return pngd::decode_classic(d, n, o, s, ch);
                   }});
      v.push_back({std::string("libpng simplified") + sfx, ch, 1, [=](const uint8_t* d, size_t n, Img& o, Status& s) {
                     return pngd::decode_simplified(d, n, o, s, ch, true);
                   }});
      if (set.find("16") != std::string::npos)
        v.push_back(
            {std::string("libpng simpl. lin16") + sfx, ch, 1, [=](const uint8_t* d, size_t n, Img& o, Status& s) {
               return pngd::decode_simplified(d, n, o, s, ch, false);
             }});
      if (ch == 3) {
        v.push_back({"opencv BGR", 3, 1, cv(cv::IMREAD_COLOR, false)});
        v.push_back({"opencv RGB", 3, 1, cv(cv::IMREAD_COLOR, true)});
      } else {
        v.push_back({"opencv GRAYSCALE", 1, 1, cv(cv::IMREAD_GRAYSCALE, false)});
      }
    }
  } else if (fmt == "webp") {
    v.push_back({"libwebp", 3, 1, decode_webp});
    v.push_back({"opencv BGR", 3, 1, cv(cv::IMREAD_COLOR, false)});
    v.push_back({"opencv RGB", 3, 1, cv(cv::IMREAD_COLOR, true)});
  } else {  // bmp, ppm, pgm, tiff
    if (fmt == "pgm") {
      v.push_back({"opencv GRAYSCALE", 1, 1, cv(cv::IMREAD_GRAYSCALE, false)});
    } else {
      v.push_back({"opencv BGR", 3, 1, cv(cv::IMREAD_COLOR, false)});
      v.push_back({"opencv RGB", 3, 1, cv(cv::IMREAD_COLOR, true)});
    }
    if (fmt == "ppm" || fmt == "pgm") v.push_back({"raw PNM parse+memcpy", fmt == "ppm" ? 3 : 1, 1, decode_pnm_raw});
  }
  return v;
}

// ---------------------------------------------------------------------------
// Helpers

Bytes read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct Diff {
  bool comparable = false;
  int maxabs = 0;
  size_t ndiff = 0, n = 0;
};

void accumulate(Diff& d, const Img& a, const Img& b) {
  if (a.w != b.w || a.h != b.h || a.c != b.c || a.px.size() != b.px.size()) return;
  d.comparable = true;
  for (size_t i = 0; i < a.px.size(); ++i) {
    int x = std::abs(int(a.px[i]) - int(b.px[i]));
    if (x) {
      ++d.ndiff;
      d.maxabs = std::max(d.maxabs, x);
    }
  }
  d.n += a.px.size();
}

std::string fmt_diff(const Diff& d) {
  if (!d.comparable) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, "max %d (%.3f%% of samples differ)", d.maxabs, d.n ? 100.0 * d.ndiff / d.n : 0.0);
  return b;
}

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
double wall_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t i = static_cast<size_t>(pos);
  double f = pos - i;
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

// Redirect fd 2 to capture what libraries print on stderr.
struct StderrCapture {
  int saved = -1;
  FILE* tmp = nullptr;
  void start() {
    std::fflush(stderr);
    tmp = std::tmpfile();
    saved = dup(2);
    dup2(fileno(tmp), 2);
  }
  std::string stop() {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string s;
    std::rewind(tmp);
    char b[512];
    size_t k;
    while ((k = std::fread(b, 1, sizeof b, tmp)) > 0) s.append(b, k);
    std::fclose(tmp);
    for (auto& ch : s)
      if (ch == '\n') ch = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }
};

std::string ref_tag(int ch, int scale) {
  std::string t = ch == 3 ? "rgb" : "gray";
  if (scale > 1) t += "_r" + std::to_string(scale);
  return t + (ch == 3 ? ".ppm" : ".pgm");
}

// ---------------------------------------------------------------------------

struct SetInfo {
  std::string name, fmt, chans;
};

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s DATA_DIR [--reps N] [--target-ms T] [--only SUBSTR] [--csv FILE] [--no-bench] [--no-robust]\n",
        argv[0]);
    return 2;
  }
  fs::path dir = argv[1];
  int reps = 15;
  double target_s = 0.025;
  std::string only, csv_path;
  bool bench = true, robust = true;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--target-ms" && i + 1 < argc)
      target_s = std::atof(argv[++i]) / 1000.0;
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--csv" && i + 1 < argc)
      csv_path = argv[++i];
    else if (a == "--no-bench")
      bench = false;
    else if (a == "--no-robust")
      robust = false;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  cv::setNumThreads(1);

  std::printf(
      "versions: libjpeg-turbo %s (JPEG_LIB_VERSION %d, compile-time), libpng %s (runtime %u), "
      "libspng %s, libwebp decoder %d.%d.%d, OpenCV %s\n",
      STR(LIBJPEG_TURBO_VERSION), JPEG_LIB_VERSION, PNG_LIBPNG_VER_STRING, png_access_version_number(),
      spng_version_string(), WebPGetDecoderVersion() >> 16, (WebPGetDecoderVersion() >> 8) & 0xff,
      WebPGetDecoderVersion() & 0xff, cv::getVersionString().c_str());
  std::printf(
      "timing: median of %d repetitions, >= %.0f ms per sample, one thread, per-thread CPU time "
      "(wall-clock in brackets); MP/s counts source pixels\n\n",
      reps, target_s * 1e3);

  std::vector<SetInfo> sets;
  {
    std::ifstream f(dir / "sets.tsv");
    std::string line;
    while (std::getline(f, line)) {
      std::istringstream ss(line);
      SetInfo s;
      if (std::getline(ss, s.name, '\t') && std::getline(ss, s.fmt, '\t') && std::getline(ss, s.chans, '\t'))
        if (only.empty() || s.name.find(only) != std::string::npos) sets.push_back(s);
    }
  }
  if (sets.empty()) {
    std::fprintf(stderr, "no sets found in %s/sets.tsv\n", dir.c_str());
    return 1;
  }

  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv)
    std::fprintf(csv,
                 "set,candidate,channels,scale,out_w,out_h,img_per_s_cpu,mp_per_s_cpu,img_per_s_wall,iqr_pct,ratio\n");
  std::vector<std::string> mismatches;

  for (const SetInfo& si : sets) {
    std::vector<fs::path> paths;
    for (auto& e : fs::directory_iterator(dir / si.name))
      if (e.is_regular_file()) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    std::vector<Bytes> files;
    size_t bytes = 0;
    for (auto& p : paths) {
      files.push_back(read_file(p));
      bytes += files.back().size();
    }
    std::vector<Cand> cands = candidates(si.name, si.fmt, si.chans);
    const size_t nc = cands.size(), nf = files.size();
    std::printf("== %s: %zu files, %.1f KiB avg\n", si.name.c_str(), nf, bytes / 1024.0 / nf);

    // ---- correctness: decode everything once with every candidate
    std::vector<std::vector<Img>> outs(nc, std::vector<Img>(nf));
    std::vector<bool> usable(nc, true);
    std::vector<std::pair<int, int>> dims(nc);
    double src_pixels = 0;
    for (size_t c = 0; c < nc; ++c) {
      std::string first_err;
      int warn = 0;
      for (size_t i = 0; i < nf; ++i) {
        Status st;
        StderrCapture cap;
        cap.start();
        bool ok = cands[c].fn(files[i].data(), files[i].size(), outs[c][i], st);
        std::string printed = cap.stop();
        if (!ok) {
          usable[c] = false;
          if (first_err.empty()) first_err = st.msg;
        }
        warn += st.warnings;
        if (!printed.empty() && first_err.empty()) first_err = "stderr: " + printed;
      }
      dims[c] = {outs[c][0].w, outs[c][0].h};
      if (!usable[c])
        std::printf("   %-24s FAILED: %s\n", cands[c].name.c_str(), first_err.c_str());
      else if (warn || !first_err.empty())
        std::printf("   %-24s note: %d warnings %s\n", cands[c].name.c_str(), warn, first_err.c_str());
    }
    for (size_t c = 0; c < nc; ++c)
      if (usable[c] && cands[c].scale == 1 && src_pixels == 0)
        for (auto& o : outs[c]) src_pixels += double(o.w) * o.h;

    // vs Pillow reference and vs first usable candidate with the same (ch, scale)
    std::map<std::pair<int, int>, size_t> group_first;
    for (size_t c = 0; c < nc; ++c) {
      if (!usable[c]) continue;
      auto key = std::make_pair(cands[c].ch, cands[c].scale);
      Diff vs_ref, vs_grp;
      for (size_t i = 0; i < nf; ++i) {
        fs::path rp = dir / "ref" / si.name / (paths[i].stem().string() + "." + ref_tag(cands[c].ch, cands[c].scale));
        if (fs::exists(rp)) {
          Bytes rb = read_file(rp);
          Img ri;
          Status st;
          if (decode_pnm_raw(rb.data(), rb.size(), ri, st)) accumulate(vs_ref, outs[c][i], ri);
        }
        if (group_first.count(key)) accumulate(vs_grp, outs[c][i], outs[group_first[key]][i]);
      }
      std::string grp = group_first.count(key) ? "vs " + cands[group_first[key]].name + ": " + fmt_diff(vs_grp) : "";
      if (!group_first.count(key)) group_first[key] = c;
      const Img& o = outs[c][0];
      std::printf("   %-24s out %dx%dx%d  vs Pillow: %s  %s\n", cands[c].name.c_str(), o.w, o.h, o.c,
                  fmt_diff(vs_ref).c_str(), grp.c_str());
      const bool lossless = si.fmt != "jpeg" && si.name.find("webp_") != 0;
      if (lossless && vs_grp.comparable && vs_grp.maxabs) mismatches.push_back(si.name + "/" + cands[c].name);
    }
    outs.clear();
    if (!bench) {
      std::printf("\n");
      continue;
    }

    // ---- throughput, candidates interleaved
    std::vector<int> inner(nc, 1);
    Img out;
    out.want_pixels = false;
    Status st;
    for (size_t c = 0; c < nc; ++c) {
      if (!usable[c]) continue;
      double t0 = thread_cpu_s();
      for (size_t i = 0; i < nf; ++i) {
        st.clear();
        cands[c].fn(files[i].data(), files[i].size(), out, st);
      }
      double t = std::max(thread_cpu_s() - t0, 1e-7);
      inner[c] = std::max(1, static_cast<int>(std::ceil(target_s / t)));
    }
    std::vector<std::vector<double>> cpu(nc), wall(nc);
    for (int r = 0; r < reps; ++r) {
      for (size_t k = 0; k < nc; ++k) {
        size_t c = (k + r) % nc;
        if (!usable[c]) continue;
        double c0 = thread_cpu_s(), w0 = wall_s();
        for (int it = 0; it < inner[c]; ++it)
          for (size_t i = 0; i < nf; ++i) {
            st.clear();
            cands[c].fn(files[i].data(), files[i].size(), out, st);
          }
        double n = double(inner[c]) * nf;
        cpu[c].push_back((thread_cpu_s() - c0) / n);
        wall[c].push_back((wall_s() - w0) / n);
      }
    }
    std::map<int, double> ref_rate;  // per channel count: first candidate's rate
    std::printf("   %-24s %10s %9s %10s %7s %s\n", "candidate", "img/s", "MP/s", "[wall]", "IQR%", "ratio");
    for (size_t c = 0; c < nc; ++c) {
      if (!usable[c]) continue;
      double med = quantile(cpu[c], 0.5), medw = quantile(wall[c], 0.5);
      double iqr = (quantile(cpu[c], 0.75) - quantile(cpu[c], 0.25)) / med * 100;
      double ips = 1.0 / med, mps = src_pixels / nf / med / 1e6;
      if (!ref_rate.count(cands[c].ch)) ref_rate[cands[c].ch] = ips;
      double ratio = ips / ref_rate[cands[c].ch];
      std::printf("   %-24s %10.0f %9.1f %10.0f %6.1f%% %5.2fx\n", cands[c].name.c_str(), ips, mps, 1.0 / medw, iqr,
                  ratio);
      if (csv)
        std::fprintf(csv, "%s,%s,%d,%d,%d,%d,%.1f,%.2f,%.1f,%.1f,%.3f\n", si.name.c_str(), cands[c].name.c_str(),
                     cands[c].ch, cands[c].scale, dims[c].first, dims[c].second, ips, mps, 1.0 / medw, iqr, ratio);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (csv) std::fclose(csv);
  std::printf("lossless sets, outputs differing from the set's first candidate: %zu\n", mismatches.size());
  for (auto& m : mismatches) std::printf("   %s\n", m.c_str());
  std::printf("\n");

  // ---- robustness: truncated and corrupted input
  if (robust) {
    std::printf("== robustness (first file of each set; stderr output of the library shown as 'printed')\n");
    for (const char* sname : {"jpeg_500x375", "jpeg_prog_500x375", "png_rgb_500x375", "webp_500x375"}) {
      fs::path d = dir / sname;
      if (!fs::exists(d)) continue;
      std::vector<fs::path> ps;
      for (auto& e : fs::directory_iterator(d)) ps.push_back(e.path());
      std::sort(ps.begin(), ps.end());
      Bytes good = read_file(ps[0]);
      std::string fmt = std::string(sname).substr(0, std::string(sname).find('_'));
      struct Variant {
        std::string name;
        Bytes b;
      };
      std::vector<Variant> vars;
      vars.push_back({"truncated to 50%", Bytes(good.begin(), good.begin() + good.size() / 2)});
      vars.push_back({"truncated to 98%", Bytes(good.begin(), good.begin() + good.size() * 98 / 100)});
      Bytes corrupt = good;
      for (size_t i = 0; i < 32; ++i) corrupt[good.size() / 2 + i] ^= 0x5a;
      vars.push_back({"32 bytes XORed at 50%", corrupt});
      vars.push_back({"header only (64 bytes)", Bytes(good.begin(), good.begin() + 64)});
      for (auto& v : vars) {
        std::printf("-- %s / %s: %s\n", sname, ps[0].filename().c_str(), v.name.c_str());
        for (auto& c : candidates(sname, fmt, "3")) {
          if (c.scale != 1 || c.name == "opencv BGR") continue;
          Img o;
          Status s;
          StderrCapture cap;
          cap.start();
          bool ok = c.fn(v.b.data(), v.b.size(), o, s);
          std::string printed = cap.stop();
          Diff dd;
          Img ref;
          Status s2;
          if (ok && c.fn(good.data(), good.size(), ref, s2)) accumulate(dd, o, ref);
          std::printf("   %-22s %s", c.name.c_str(), ok ? "returns OK" : "returns FAILURE");
          if (s.warnings) std::printf(", %d warning(s)", s.warnings);
          if (!s.msg.empty()) std::printf(": \"%s\"", s.msg.c_str());
          if (ok && dd.comparable) std::printf("; %.1f%% samples differ from intact", 100.0 * dd.ndiff / dd.n);
          if (!printed.empty()) std::printf("; printed \"%s\"", printed.substr(0, 160).c_str());
          std::printf("\n");
        }
      }
    }
  }
  return 0;
}

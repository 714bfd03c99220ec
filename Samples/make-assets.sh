#!/usr/bin/env bash
# make-assets.sh - generate the small sample media files in Samples/assets/.
#
# Run once by a developer (not by CI); the generated files are committed.
# Writes into the assets/ directory next to this script, overwriting files.
#
# Needs these Debian packages (bookworm):
#   ffmpeg            (ffmpeg: JPEG, PNG, GIF, MP3, M4A, WAV, AIFF, MP4, MPG, AVI)
#   webp              (cwebp: hero.webp)
#   libheif-examples  (heif-enc: hero.heic)
#   file              (optional: the MIME check at the end)
#
# All content is synthetic (lavfi sources), so nothing is downloaded.
# Options are chosen for reproducibility (bitexact flags, single thread, no
# metadata taken from inputs); encoders of a different version may still
# produce different bytes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out="$here/assets"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ff() {
  ffmpeg -hide_banner -loglevel error -nostdin -y "$@"
}
# Flags for a reproducible output file: no metadata from the lavfi input,
# no encoder/version strings, one thread.
BITEXACT=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -threads 1)

# A text-free colour pattern: horizontal red ramp, vertical green ramp,
# blue bands.
pattern="geq=r='255*X/W':g='255*Y/H':b='128+100*sin(X/23+Y/37)'"

# --- images -----------------------------------------------------------------
# hero.png: 600x300 PNG (RGB, lossless; smooth content keeps it small).
ff -f lavfi -i "color=c=black:s=600x300:d=1,format=rgb24,${pattern}" \
   -frames:v 1 "${BITEXACT[@]}" -pred mixed -c:v png -pix_fmt rgb24 "$out/hero.png"

# hero.jpg: same picture, low-quality baseline JPEG.
ff -i "$out/hero.png" -frames:v 1 "${BITEXACT[@]}" \
   -c:v mjpeg -q:v 12 -pix_fmt yuvj420p "$out/hero.jpg"

# banner.gif: 200x100 animated GIF, 8 frames at 4 fps, looping forever.
ff -f lavfi -i "color=c=black:s=200x100:r=4:d=2,format=rgb24,geq=r='128+127*sin(2*PI*(X/W+T/2))':g='255*Y/H':b='128+127*cos(2*PI*(X/W-T/2))',split[a][b];[a]palettegen=max_colors=32:stats_mode=full[p];[b][p]paletteuse=dither=none" \
   "${BITEXACT[@]}" -loop 0 -c:v gif "$out/banner.gif"

# --- audio ------------------------------------------------------------------
# A decaying two-partial "chime", 44.1 kHz mono.
chime="aevalsrc=exprs='0.6*exp(-4*t)*(sin(2*PI*880*t)+0.4*sin(2*PI*1320*t))':s=44100:d=1"

# Cover art for the MP3's ID3 tag (APIC frame). It makes the ID3v2 tag a few
# KB long, so the first 1024 bytes of chime.mp3 hold no MPEG audio frame.
# (Rings make the 128x128 JPEG ~3 KB; a smooth gradient would be far smaller.)
ff -f lavfi -i "color=c=black:s=128x128:d=1,format=rgb24,geq=r='255*X/W':g='128+127*sin(hypot(X-W/2,Y-H/2)/3)':b='128+100*sin(X/23+Y/37)'" \
   -frames:v 1 "${BITEXACT[@]}" -c:v mjpeg -q:v 6 -pix_fmt yuvj420p "$tmp/cover.jpg"

# chime.mp3: MPEG-1 Layer III, 64 kbit/s CBR, ID3v2.3 tag with title/artist/cover.
ff -f lavfi -i "$chime" -i "$tmp/cover.jpg" -map 0:a -map 1:v \
   "${BITEXACT[@]}" -c:a libmp3lame -b:a 64k -write_xing 0 \
   -c:v copy -disposition:v attached_pic \
   -metadata title="richpush chime" -metadata artist="richpush samples" \
   -metadata:s:v title="Album cover" -metadata:s:v comment="Cover (front)" \
   -id3v2_version 3 -write_id3v1 0 -f mp3 "$out/chime.mp3"

# chime.m4a: AAC-LC in an iTunes-style MPEG-4 audio file (major brand "M4A ").
ff -f lavfi -i "$chime" "${BITEXACT[@]}" -c:a aac -b:a 48k \
   -f ipod -movflags +faststart "$out/chime.m4a"

# chime-mp42.m4a: the same AAC audio, but major brand mp42 (libmagic: video/mp4).
ff -f lavfi -i "$chime" "${BITEXACT[@]}" -c:a aac -b:a 48k \
   -f mp4 -brand mp42 -movflags +faststart "$out/chime-mp42.m4a"

# chime.wav: 8 kHz mono 16-bit PCM, 0.5 s.
ff -f lavfi -i "$chime" "${BITEXACT[@]}" -t 0.5 -ar 8000 -ac 1 \
   -c:a pcm_s16le -f wav "$out/chime.wav"

# chime.aiff: 8 kHz mono 16-bit big-endian PCM, 0.5 s.
ff -f lavfi -i "$chime" "${BITEXACT[@]}" -t 0.5 -ar 8000 -ac 1 \
   -c:a pcm_s16be -f aiff "$out/chime.aiff"

# --- video (1 s, 160x90, 25 fps, no audio) ----------------------------------
video="color=c=black:s=160x90:r=25:d=1,format=rgb24,geq=r='255*X/W':g='128+127*sin(2*PI*(Y/H+T))':b='255*T'"

# clip.mp4: H.264 (x264 default High profile, CRF 32) in MP4 (brand isom).
ff -f lavfi -i "$video" "${BITEXACT[@]}" -c:v libx264 -preset veryslow \
   -crf 32 -pix_fmt yuv420p -x264-params threads=1 -movflags +faststart \
   -f mp4 "$out/clip.mp4"

# clip.mpg: MPEG-1 video in an MPEG-1 program (system) stream.
ff -f lavfi -i "$video" "${BITEXACT[@]}" -c:v mpeg1video -b:v 100k \
   -f mpeg "$out/clip.mpg"

# clip.avi: MPEG-4 Part 2 (FourCC XVID) in AVI.
ff -f lavfi -i "$video" "${BITEXACT[@]}" -c:v mpeg4 -q:v 10 -vtag XVID \
   -f avi "$out/clip.avi"

# --- formats richpush does not accept ----------------------------------------
# hero.webp: lossy WebP of hero.png.
cwebp -quiet -q 40 -m 6 -metadata none "$out/hero.png" -o "$out/hero.webp"

# hero.heic: HEVC-coded HEIF still image of hero.png.
heif-enc -q 30 -o "$out/hero.heic" "$out/hero.png" >/dev/null

# error.html: what a CDN returns instead of the media for a wrong URL.
cat > "$out/error.html" <<'EOF'
<!DOCTYPE html>
<html>
<head><title>404 Not Found</title></head>
<body>
<center><h1>404 Not Found</h1></center>
<hr><center>nginx</center>
</body>
</html>
EOF

# --- check --------------------------------------------------------------------
if command -v file >/dev/null; then
  (cd "$out" && file --mime-type -- *)
  # Expected: application/octet-stream (the ID3 tag alone, no MPEG frame).
  printf 'first 1024 bytes of chime.mp3: '
  head -c 1024 "$out/chime.mp3" | file --brief --mime-type -
fi
ls -l "$out"

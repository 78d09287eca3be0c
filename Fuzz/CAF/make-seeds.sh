#!/usr/bin/env bash
# Regenerates the CAF fuzz seeds (each well under 4 KB) with ffmpeg, sox and sndfile-convert,
# plus byte patches that break them in the ways the inspector must report.
# Usage: Fuzz/CAF/make-seeds.sh   (writes Fuzz/CAF/seeds/)
set -euo pipefail
cd "$(dirname "$0")"
seeds=seeds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$seeds"

ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
ff -f lavfi -i "sine=frequency=440:duration=0.01:sample_rate=8000" "$tmp/mono.wav"
ff -f lavfi -i "sine=frequency=440:duration=0.1:sample_rate=8000" -ac 2 "$tmp/stereo.wav"

ff -i "$tmp/mono.wav" -c:a pcm_s16le -f caf "$seeds/lpcm-s16le.caf"
ff -i "$tmp/mono.wav" -c:a pcm_f32be -f caf "$seeds/lpcm-f32be.caf"
ff -i "$tmp/mono.wav" -c:a pcm_mulaw -f caf "$seeds/ulaw.caf"
ff -i "$tmp/stereo.wav" -c:a adpcm_ima_qt -f caf "$seeds/ima4-stereo.caf"
ff -i "$tmp/stereo.wav" -c:a alac -f caf "$seeds/alac-ffmpeg.caf"
ffmpeg -hide_banner -loglevel error -i "$tmp/mono.wav" -c:a pcm_s16le -f caf pipe:1 > "$seeds/data-size-unknown.caf"
sndfile-convert -alac16 "$tmp/stereo.wav" "$seeds/alac-sndfile.caf"
# (libsndfile pads constant-size formats with a 4 KB 'free' chunk, so only its ALAC is small enough.)

# patch FILE OFFSET HEXBYTES: overwrite bytes in place.
patch() { printf "$(echo "$3" | sed 's/../\\x&/g')" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
base="$seeds/lpcm-s16le.caf"   # desc at 8, then chan, info, data

cp "$base" "$seeds/bad-magic.caf";        patch "$seeds/bad-magic.caf" 0 63616665
cp "$base" "$seeds/version-2.caf";        patch "$seeds/version-2.caf" 4 0002
cp "$base" "$seeds/zero-channels.caf";    patch "$seeds/zero-channels.caf" 44 00000000
cp "$base" "$seeds/nan-rate.caf";         patch "$seeds/nan-rate.caf" 20 7ff8000000000000
cp "$base" "$seeds/bytes-per-packet-3.caf"; patch "$seeds/bytes-per-packet-3.caf" 36 00000003
cp "$base" "$seeds/no-desc.caf";          patch "$seeds/no-desc.caf" 8 66726565
cp "$base" "$seeds/negative-size.caf";    patch "$seeds/negative-size.caf" 56 fffffffffffffff0
cp "$base" "$seeds/huge-size.caf";        patch "$seeds/huge-size.caf" 56 7fffffffffffffff
# A stored sound as the library writes it: an 'info' chunk after a data chunk of known size.
cp "$base" "$seeds/info-after-data.caf";  patch "$seeds/info-after-data.caf" 76 66726565   # ffmpeg's info -> free
printf 'info\x00\x00\x00\x00\x00\x00\x00\x0f\x00\x00\x00\x01title\x00beep\x00' >> "$seeds/info-after-data.caf"
head -c 6 "$base" > "$seeds/truncated-header.caf"
head -c 100 "$seeds/alac-ffmpeg.caf" > "$seeds/truncated-alac.caf"
ls -l "$seeds"

// Umbrella header for what `soundscapectl import` decodes, resamples, measures and
// encodes with (Debian 12: libsndfile1-dev, libsoxr-dev, libebur128-dev, libopusenc-dev):
// libsndfile reads WAV, FLAC, Ogg Vorbis, Ogg Opus and MP3; libsoxr resamples to 48 kHz;
// libebur128 measures BS.1770 loudness and true peak; libopusenc writes Ogg Opus.
// The include path of opusenc.h (<opus.h> beside it) comes from pkg-config libopusenc.
#pragma once
#include <ebur128.h>
#include <opusenc.h>
#include <sndfile.h>
#include <soxr.h>

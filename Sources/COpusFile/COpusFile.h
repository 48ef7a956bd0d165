// Umbrella header for libopusfile (Ogg Opus decoding).
#pragma once
#include <opusfile.h>

// Umbrella header for libpipewire-0.3 and the SPA headers soundscaped uses.
#pragma once
#include <pipewire/pipewire.h>
#include <pipewire/impl-module.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/props.h>
#include <spa/utils/result.h>
#include <spa/utils/dict.h>

// sd-bus, systemd's D-Bus library, for the desktop companion (soundscaped-desktop).
// Only its non-variadic calls are used (append_basic, open_container, ...), which
// Swift imports as they are; the daemon itself never links this.
#pragma once
#include <systemd/sd-bus.h>

-- soundscaped's private test graphs never touch Bluetooth (WirePlumber 0.4;
-- see ../main.lua.d/60-soundscape-no-hardware.lua).
bluez_monitor.enabled = false

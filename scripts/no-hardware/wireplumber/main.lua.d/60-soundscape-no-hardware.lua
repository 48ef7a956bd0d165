-- soundscaped's private test graphs never touch real devices (WirePlumber 0.4).
-- Loaded after 50-*-config.lua, which define the monitors' settings, and
-- before 90-enable-all.lua, which enables the monitors these turn off.
-- WirePlumber 0.5 ignores this file: ../wireplumber.conf.d/ does the same there.
alsa_monitor.enabled = false
v4l2_monitor.enabled = false
libcamera_monitor.enabled = false

-- The GRDB builds with preferences (e7a2366 up to 11cb7ac): migrations "v1: player state"
-- and "v2: preferences", each in its own transaction, as GRDB writes them; then a save of
-- the state and of the preferences, with GRDB's bindings (Bool as 0/1, Date as UTC text).
-- user_version stays 0.
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
BEGIN IMMEDIATE;
CREATE TABLE "player_state" ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "volume" INTEGER NOT NULL CHECK (("volume" >= 0) AND ("volume" <= 100)), "soundscape" TEXT, "wants_playing" BOOLEAN NOT NULL, "updated_at" DATETIME NOT NULL);
CREATE TABLE "health_probe" ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "checked_at" DATETIME NOT NULL);
INSERT INTO grdb_migrations (identifier) VALUES ('v1: player state');
COMMIT;
BEGIN IMMEDIATE;
CREATE TABLE "preferences" ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "interruption_mode" TEXT NOT NULL, "duck_level" INTEGER NOT NULL CHECK (("duck_level" >= 0) AND ("duck_level" <= 100)), "auto_resume" BOOLEAN NOT NULL, "pinned_sink" TEXT, "updated_at" DATETIME NOT NULL);
INSERT INTO grdb_migrations (identifier) VALUES ('v2: preferences');
COMMIT;
INSERT INTO player_state (id, volume, soundscape, wants_playing, updated_at)
VALUES (1, 37, 'rain', 1, '2026-11-21 09:30:00.000')
ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
    wants_playing = excluded.wants_playing, updated_at = excluded.updated_at;
INSERT INTO preferences (id, interruption_mode, duck_level, auto_resume, pinned_sink, updated_at)
VALUES (1, 'duck', 12, 0, 'alsa_output.usb-headset', '2026-11-21 09:31:00.000')
ON CONFLICT(id) DO UPDATE SET interruption_mode = excluded.interruption_mode,
    duck_level = excluded.duck_level, auto_resume = excluded.auto_resume,
    pinned_sink = excluded.pinned_sink, updated_at = excluded.updated_at;
INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, '2026-11-21 09:31:05.000');

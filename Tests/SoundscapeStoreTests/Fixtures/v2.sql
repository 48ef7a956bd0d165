-- Schema v2: a new database as the builds of 11cb7ac to 834393b (the first on the thin SQLite wrapper) made it:
-- StateStore.openForWriting's WAL switch, then every migration up to v2 in one
-- transaction with user_version = 2 (StateStore.migrate), then a save of the state and
-- of the preferences and a health probe, bound as the store binds them (booleans 0/1,
-- updated_at in Unix seconds).
PRAGMA journal_mode = WAL;
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS player_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    volume INTEGER NOT NULL CHECK (volume >= 0 AND volume <= 100),
    soundscape TEXT,
    wants_playing BOOLEAN NOT NULL,
    updated_at NOT NULL);
CREATE TABLE IF NOT EXISTS health_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    checked_at NOT NULL);
CREATE TABLE IF NOT EXISTS preferences (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    interruption_mode TEXT NOT NULL,
    duck_level INTEGER NOT NULL CHECK (duck_level >= 0 AND duck_level <= 100),
    auto_resume BOOLEAN NOT NULL,
    pinned_sink TEXT,
    updated_at NOT NULL);
PRAGMA user_version = 2;
COMMIT;
INSERT INTO player_state (id, volume, soundscape, wants_playing, updated_at)
VALUES (1, 37, 'rain', 1, 1795253400.25)
ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
    wants_playing = excluded.wants_playing, updated_at = excluded.updated_at;
INSERT INTO preferences (id, interruption_mode, duck_level, auto_resume, pinned_sink, updated_at)
VALUES (1, 'duck', 12, 0, 'alsa_output.usb-headset', 1795253460.5)
ON CONFLICT(id) DO UPDATE SET interruption_mode = excluded.interruption_mode,
    duck_level = excluded.duck_level, auto_resume = excluded.auto_resume,
    pinned_sink = excluded.pinned_sink, updated_at = excluded.updated_at;
INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, 1795253465.75);

-- Schema v5: a new database as the builds of d7bccb8 up to the one that added v6 (what plays while the signer is down) made it:
-- StateStore.openForWriting's WAL switch, then every migration up to v5 in one
-- transaction with user_version = 5 (StateStore.migrate), then a save of the state and
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
ALTER TABLE player_state ADD COLUMN paused BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE preferences ADD COLUMN keep_awake BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE preferences ADD COLUMN notifications BOOLEAN NOT NULL DEFAULT 1;
ALTER TABLE preferences ADD COLUMN signer_down_sound TEXT NOT NULL DEFAULT 'cue';
PRAGMA user_version = 5;
COMMIT;
INSERT INTO player_state (id, volume, soundscape, wants_playing, paused, updated_at)
VALUES (1, 37, 'rain', 1, 1, 1795253400.25)
ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
    wants_playing = excluded.wants_playing, paused = excluded.paused, updated_at = excluded.updated_at;
INSERT INTO preferences (id, interruption_mode, duck_level, auto_resume, pinned_sink,
    keep_awake, notifications, signer_down_sound, updated_at)
VALUES (1, 'duck', 12, 0, 'alsa_output.usb-headset', 1, 0, 'silence', 1795253460.5)
ON CONFLICT(id) DO UPDATE SET interruption_mode = excluded.interruption_mode,
    duck_level = excluded.duck_level, auto_resume = excluded.auto_resume,
    pinned_sink = excluded.pinned_sink, keep_awake = excluded.keep_awake,
    notifications = excluded.notifications, signer_down_sound = excluded.signer_down_sound,
    updated_at = excluded.updated_at;
INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, 1795253465.75);

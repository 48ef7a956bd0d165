-- Schema v7: a new database as the builds of the one that added v7 on (layers and saved mixes) made it:
-- StateStore.openForWriting's WAL switch, then every migration up to v7 in one
-- transaction with user_version = 7 (StateStore.migrate), then a save of the state (two
-- layers of a saved mix), of the preferences and of two mixes, and a health probe, bound
-- as the store binds them (booleans 0/1, layers as JSONEncoder writes them with sorted
-- keys, updated_at in Unix seconds).
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
CREATE TABLE IF NOT EXISTS preference_values (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL,
    updated_at NOT NULL);
ALTER TABLE player_state ADD COLUMN layers TEXT;
ALTER TABLE player_state ADD COLUMN mix_name TEXT;
CREATE TABLE IF NOT EXISTS saved_mixes (
    name TEXT PRIMARY KEY NOT NULL,
    layers TEXT NOT NULL,
    updated_at REAL NOT NULL);
PRAGMA user_version = 7;
COMMIT;
INSERT INTO player_state (id, volume, soundscape, wants_playing, paused, layers, mix_name, updated_at)
VALUES (1, 37, 'rain', 1, 1, '[{"level":80,"soundscape":"rain"},{"level":35,"soundscape":"wind"}]', 'stormy night', 1795253400.25)
ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
    wants_playing = excluded.wants_playing, paused = excluded.paused, layers = excluded.layers,
    mix_name = excluded.mix_name, updated_at = excluded.updated_at;
INSERT INTO preference_values (name, value, updated_at)
VALUES ('interruption-mode', 'duck', 1795253460.5),
    ('duck-level', '12', 1795253460.5),
    ('auto-resume', 'off', 1795253460.5),
    ('pinned-sink', 'alsa_output.usb-headset', 1795253460.5),
    ('keep-awake', 'on', 1795253460.5),
    ('notifications', 'off', 1795253460.5),
    ('signer-down-sound', 'silence', 1795253460.5)
ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;
INSERT INTO saved_mixes (name, layers, updated_at) VALUES ('stormy night', '[{"level":80,"soundscape":"rain"},{"level":35,"soundscape":"wind"}]', 1795253470.5)
ON CONFLICT(name) DO UPDATE SET layers = excluded.layers, updated_at = excluded.updated_at;
INSERT INTO saved_mixes (name, layers, updated_at) VALUES ('campfire', '[{"level":60,"soundscape":"fire"},{"level":25,"soundscape":"crickets"},{"level":0,"soundscape":"wind"}]', 1795253480.5)
ON CONFLICT(name) DO UPDATE SET layers = excluded.layers, updated_at = excluded.updated_at;
INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, 1795253465.75);

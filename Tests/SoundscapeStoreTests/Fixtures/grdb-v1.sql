-- The first build (c0b6f23, GRDB 7): a DatabasePool (WAL) and a DatabaseMigrator whose
-- one migration, "v1: player state", made these tables as GRDB writes them; then one
-- save of the player state and one health probe, with GRDB's bindings (Bool as 0/1,
-- Date as UTC text). user_version stays 0: GRDB records migrations in grdb_migrations.
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
BEGIN IMMEDIATE;
CREATE TABLE "player_state" ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "volume" INTEGER NOT NULL CHECK (("volume" >= 0) AND ("volume" <= 100)), "soundscape" TEXT, "wants_playing" BOOLEAN NOT NULL, "updated_at" DATETIME NOT NULL);
CREATE TABLE "health_probe" ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "checked_at" DATETIME NOT NULL);
INSERT INTO grdb_migrations (identifier) VALUES ('v1: player state');
COMMIT;
INSERT INTO player_state (id, volume, soundscape, wants_playing, updated_at)
VALUES (1, 37, 'rain', 1, '2026-11-21 09:30:00.000')
ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
    wants_playing = excluded.wants_playing, updated_at = excluded.updated_at;
INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, '2026-11-21 09:30:05.000');
